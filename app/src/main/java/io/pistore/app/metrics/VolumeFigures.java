package io.pistore.app.metrics;

import io.pistore.app.metrics.MetricsText.Sample;
import java.util.Map;
import java.util.TreeMap;

/**
 * One volume's cumulative figures in one scrape of a server's metrics, summed over its transports:
 * reads and writes and their bytes, the latency buckets of both, requests in flight and PI errors.
 * {@link #since} turns two of them into the rates a stats line shows.
 */
public final class VolumeFigures {
    long reads;
    long writes;
    long readBytes;
    long writeBytes;
    long inFlight;
    long piErrors;
    /** Upper bound in seconds to cumulative count, reads and writes together. */
    final TreeMap<Double, Long> buckets = new TreeMap<>();

    /** The figures of every volume named in {@code samples}, by volume name (sorted). */
    public static Map<String, VolumeFigures> of(Iterable<Sample> samples) {
        Map<String, VolumeFigures> out = new TreeMap<>();
        for (Sample s : samples) {
            String volume = s.label("volume");
            if (volume == null || !s.name().startsWith("pistore_")) {
                continue;
            }
            VolumeFigures f = out.computeIfAbsent(volume, v -> new VolumeFigures());
            String op = s.label("op");
            long v = (long) s.value();
            switch (s.name()) {
                case "pistore_requests_total":
                    if ("read".equals(op)) {
                        f.reads += v;
                    } else if ("write".equals(op)) {
                        f.writes += v;
                    }
                    break;
                case "pistore_request_bytes_total":
                    if ("read".equals(op)) {
                        f.readBytes += v;
                    } else if ("write".equals(op)) {
                        f.writeBytes += v;
                    }
                    break;
                case "pistore_request_latency_seconds_bucket":
                    if ("read".equals(op) || "write".equals(op)) {
                        f.buckets.merge(bound(s.label("le")), v, Long::sum);
                    }
                    break;
                case "pistore_requests_in_flight":
                    f.inFlight += v;
                    break;
                case "pistore_pi_errors_total":
                    f.piErrors += v;
                    break;
                default:
                    break;
            }
        }
        return out;
    }

    private static double bound(String le) {
        return "+Inf".equals(le) ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
    }

    /** What happened between {@code earlier} (null: nothing before) and this scrape, {@code seconds} apart. */
    public Interval since(VolumeFigures earlier, double seconds) {
        VolumeFigures e = earlier != null ? earlier : new VolumeFigures();
        TreeMap<Double, Long> delta = new TreeMap<>();
        for (Map.Entry<Double, Long> b : buckets.entrySet()) {
            delta.put(b.getKey(), b.getValue() - e.buckets.getOrDefault(b.getKey(), 0L));
        }
        return new Interval((reads - e.reads) / seconds, (writes - e.writes) / seconds,
                (readBytes - e.readBytes) / seconds / (1 << 20), (writeBytes - e.writeBytes) / seconds / (1 << 20),
                quantile(delta, 0.50), quantile(delta, 0.99), inFlight, piErrors, piErrors - e.piErrors);
    }

    /**
     * The {@code q} quantile of cumulative buckets in seconds, interpolated linearly inside its
     * bucket (as Prometheus' histogram_quantile does); NaN without requests; the highest finite
     * bound when it falls in the unbounded bucket.
     */
    static double quantile(TreeMap<Double, Long> cumulative, double q) {
        Long total = cumulative.get(Double.POSITIVE_INFINITY);
        if (total == null || total <= 0) {
            return Double.NaN;
        }
        double rank = q * total;
        double lower = 0;
        long below = 0;
        for (Map.Entry<Double, Long> b : cumulative.entrySet()) {
            if (b.getValue() >= rank) {
                if (b.getKey().isInfinite()) {
                    return lower;
                }
                long in = b.getValue() - below;
                return in <= 0 ? b.getKey() : lower + (b.getKey() - lower) * (rank - below) / in;
            }
            lower = b.getKey();
            below = b.getValue();
        }
        return lower;
    }

    /** The rates of one volume over one interval. */
    public record Interval(double readsPerSec, double writesPerSec, double readMiBPerSec, double writeMiBPerSec,
                           double p50Seconds, double p99Seconds, long inFlight, long piErrors, long newPiErrors) {
    }
}
