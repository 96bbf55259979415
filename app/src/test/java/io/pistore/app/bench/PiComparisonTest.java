package io.pistore.app.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PiComparisonTest {

    private static BenchResult run(String pi, int round, double iops, double cpu) {
        BenchResult r = new BenchResult();
        r.transport = "tcp";
        r.pi = pi;
        r.round = round;
        r.iops = iops;
        r.cpuUsPerOp = cpu;
        return r;
    }

    @Test
    void ratiosArePairedByRoundAndTheBaselineIsOff() {
        List<BenchResult> rs = List.of(
                run("insert", 1, 90, 5.5), run("off", 1, 100, 5.0),
                run("off", 2, 200, 4.0), run("insert", 2, 190, 4.4),
                run("insert", 3, 40, 7.0), run("off", 3, 50, 6.0));
        PiComparison c = PiComparison.of(rs);
        assertEquals("off", c.baseline);
        assertEquals(3, c.rounds);
        PiComparison.Mode insert = c.modes.get(0);
        assertEquals("insert", insert.pi);
        // per round 0.9, 0.95, 0.8: the median pairs runs, unlike 90 / 100 (medians of each mode)
        assertEquals(0.9, insert.medianRatio(), 1e-12);
        assertEquals(90, insert.medianIops, 1e-12);
        assertEquals(5.5, insert.medianCpuUsPerOp, 1e-12);
        assertEquals(0, c.modes.get(1).ratios.length);
        assertTrue(c.summary().contains("insert/off=0.900 (rounds 0.800 to 0.950)"), c.summary());
        assertTrue(c.toJson().contains("\"ratio_median\":0.9000,\"ratio_min\":0.8000,\"ratio_max\":0.9500"), c.toJson());
    }

    @Test
    void withoutOffTheFirstModeIsTheBaseline() {
        PiComparison c = PiComparison.of(List.of(run("pass", 0, 80, 1), run("insert", 0, 100, 1)));
        assertEquals("pass", c.baseline);
        assertEquals(1.25, c.modes.get(1).medianRatio(), 1e-12);
    }

    @Test
    void medianMatchesASortedReferenceOnRandomInput() {
        SplittableRandom rnd = new SplittableRandom(11);
        for (int t = 0; t < 200; t++) {
            double[] v = new double[1 + rnd.nextInt(12)];
            for (int i = 0; i < v.length; i++) {
                v[i] = rnd.nextInt(5) == 0 ? 3.0 : rnd.nextDouble() * 100; // ties included
            }
            double[] s = v.clone();
            java.util.Arrays.sort(s);
            double expected = s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
            assertEquals(expected, PiComparison.median(v), 0.0);
        }
    }

    @Test
    void aModeMissingFromARoundOrRepeatedInOneIsRefused() {
        List<BenchResult> missing = new ArrayList<>(List.of(run("insert", 1, 1, 1), run("off", 1, 1, 1),
                run("insert", 2, 1, 1)));
        assertThrows(IllegalArgumentException.class, () -> PiComparison.of(missing));
        assertThrows(IllegalArgumentException.class,
                () -> PiComparison.of(List.of(run("off", 1, 1, 1), run("off", 1, 2, 1))));
        assertThrows(IllegalArgumentException.class, () -> PiComparison.of(List.of()));
    }
}
