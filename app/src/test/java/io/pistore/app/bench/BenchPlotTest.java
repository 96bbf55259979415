package io.pistore.app.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class BenchPlotTest {
    private static BenchResult run(String transport, String pi, int round, long... perSecond) {
        BenchResult r = new BenchResult();
        r.transport = transport;
        r.pi = pi;
        r.round = round;
        r.latency = new Histogram(60_000_000_000L, 3);
        for (int i = 1; i <= 1000; i++) {
            r.latency.recordValue(i * 1000L);
        }
        r.iopsPerSecond = perSecond;
        return r;
    }

    @Test
    void roundsOfOneModeMergeIntoOneSeries() {
        List<BenchPlot.Series> s = BenchPlot.series(List.of(run("tcp", "insert", 1, 10, 20), run("tcp", "off", 1, 30),
                run("tcp", "off", 2, 40), run("tcp", "insert", 2, 50)));
        assertEquals(2, s.size());
        assertEquals("tcp pi=insert", s.get(0).name);
        assertEquals(2000, s.get(0).latency.getTotalCount());
        assertEquals(List.of(10L, 20L, 50L), s.get(0).perSecond);
        assertEquals(List.of(30L, 40L), s.get(1).perSecond);
        assertEquals(List.of(2), s.get(0).roundStarts, "the second round of insert starts at its third second");
        assertEquals(List.of(1), s.get(1).roundStarts);
    }

    @Test
    void roundsLaidEndToEndAreMarkedAndEachSecondIsADot() {
        String svg = BenchPlot.svg("t", List.of(run("tcp", "insert", 1, 10, 20), run("tcp", "insert", 2, 30, 40),
                run("tcp", "insert", 3, 50, 60)));
        assertEquals(2, svg.split("<line class=\"round\"", -1).length - 1, "a marker where rounds 2 and 3 start");
        assertEquals(true, svg.contains(">round 2</text>") && svg.contains(">round 3</text>"), svg);
        assertEquals(6, svg.split("<circle class=\"second\"", -1).length - 1, "one dot per measured second");
        String one = BenchPlot.svg("t", List.of(run("tcp", "insert", 0, 10, 20)));
        assertEquals(false, one.contains("class=\"round\""), "one round: no marker");
    }

    @Test
    void transportsWithOneModeAreNamedByTransport() {
        BenchResult unavailable = new BenchResult();
        unavailable.transport = "rdma";
        unavailable.unavailableCause = "no device";
        List<BenchPlot.Series> s = BenchPlot.series(List.of(run("local", "insert", 0, 1), run("tcp", "insert", 0, 1),
                unavailable));
        assertEquals(List.of("local", "tcp"), s.stream().map(x -> x.name).toList());
    }

    @Test
    void tailAxisLabelsCountNines() {
        assertEquals("0%", BenchPlot.percentLabel(0));
        assertEquals("90%", BenchPlot.percentLabel(1));
        assertEquals("99%", BenchPlot.percentLabel(2));
        assertEquals("99.9%", BenchPlot.percentLabel(3));
        assertEquals("99.99%", BenchPlot.percentLabel(4));
    }
}
