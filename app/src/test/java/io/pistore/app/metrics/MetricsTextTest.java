package io.pistore.app.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MetricsTextTest {
    @Test
    void readsNamesLabelsAndValuesAndSkipsComments() {
        List<MetricsText.Sample> s = MetricsText.parse("# HELP x_total X\n# TYPE x_total counter\n"
                + "x_total{volume=\"a\",op=\"read\"} 3.0\n"
                + "x_total{volume=\"b \\\"q\\\"\",op=\"read\"} 4 1700000000000\n"
                + "y 1.5e3\n\n"
                + "h_bucket{le=\"+Inf\"} 7\n");
        assertEquals(4, s.size());
        assertEquals("x_total", s.get(0).name());
        assertEquals("a", s.get(0).label("volume"));
        assertEquals("b \"q\"", s.get(1).label("volume"));
        assertEquals(4.0, s.get(1).value());
        assertEquals(1500.0, s.get(2).value());
        assertEquals("+Inf", s.get(3).label("le"));
        assertEquals(7.0, MetricsText.sum(s, "x_total", Map.of("op", "read")));
        assertEquals(3.0, MetricsText.sum(s, "x_total", Map.of("volume", "a")));
    }

    @Test
    void aLineThatIsNoSampleIsReportedWithItsNumber() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MetricsText.parse("ok 1\nbroken{a=b} 2\n"));
        assertEquals("line 2 is no sample: broken{a=b} 2", e.getMessage());
    }
}
