package io.pistore.app.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class VolumeFiguresTest {
    private static TreeMap<Double, Long> cumulative(double[] bounds, long[] counts) {
        TreeMap<Double, Long> m = new TreeMap<>();
        for (int i = 0; i < bounds.length; i++) {
            m.put(bounds[i], counts[i]);
        }
        return m;
    }

    @Test
    void quantilesInterpolateInsideTheirBucket() {
        double inf = Double.POSITIVE_INFINITY;
        // 100 requests: 50 up to 1 µs, 40 in (1, 2] µs, 10 in (2, 5] µs
        TreeMap<Double, Long> b = cumulative(new double[] {1e-6, 2e-6, 5e-6, inf}, new long[] {50, 90, 100, 100});
        assertEquals(1e-6, VolumeFigures.quantile(b, 0.50), 1e-12);
        assertEquals(2e-6 + 3e-6 * 0.9, VolumeFigures.quantile(b, 0.99), 1e-12);
        assertTrue(Double.isNaN(VolumeFigures.quantile(cumulative(new double[] {1e-6, inf}, new long[] {0, 0}), 0.5)));
        // beyond the last finite bound: that bound, not infinity
        assertEquals(5e-6, VolumeFigures.quantile(cumulative(new double[] {1e-6, 5e-6, inf}, new long[] {0, 0, 3}), 0.5));
    }

    @Test
    void ratesComeFromTwoScrapesSummedOverTransports() {
        String first = "pistore_requests_total{op=\"read\",transport=\"tcp\",volume=\"v\"} 100\n"
                + "pistore_requests_total{op=\"read\",transport=\"nbd\",volume=\"v\"} 50\n"
                + "pistore_request_bytes_total{op=\"read\",transport=\"tcp\",volume=\"v\"} 1048576\n"
                + "pistore_pi_errors_total{kind=\"guard\",transport=\"tcp\",volume=\"v\",where=\"wire\"} 1\n";
        String second = "pistore_requests_total{op=\"read\",transport=\"tcp\",volume=\"v\"} 300\n"
                + "pistore_requests_total{op=\"read\",transport=\"nbd\",volume=\"v\"} 250\n"
                + "pistore_requests_total{op=\"write\",transport=\"tcp\",volume=\"v\"} 20\n"
                + "pistore_request_bytes_total{op=\"read\",transport=\"tcp\",volume=\"v\"} 5242880\n"
                + "pistore_pi_errors_total{kind=\"guard\",transport=\"tcp\",volume=\"v\",where=\"wire\"} 3\n"
                + "pistore_requests_in_flight{transport=\"tcp\",volume=\"v\"} 7\n";
        Map<String, VolumeFigures> a = VolumeFigures.of(MetricsText.parse(first));
        Map<String, VolumeFigures> b = VolumeFigures.of(MetricsText.parse(second));
        VolumeFigures.Interval i = b.get("v").since(a.get("v"), 2.0);
        assertEquals(200.0, i.readsPerSec());
        assertEquals(10.0, i.writesPerSec());
        assertEquals(2.0, i.readMiBPerSec());
        assertEquals(7, i.inFlight());
        assertEquals(3, i.piErrors());
        assertEquals(2, i.newPiErrors());
        assertTrue(Double.isNaN(i.p50Seconds()), "no latency buckets: no quantile");
    }
}
