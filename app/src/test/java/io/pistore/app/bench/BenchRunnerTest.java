package io.pistore.app.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class BenchRunnerTest {

    private static BenchOptions small(String rw, String pi) {
        BenchOptions o = new BenchOptions();
        o.rw = BenchOptions.Rw.parse(rw);
        o.pi = BenchOptions.PiMode.parse(pi);
        o.seconds = 1;
        o.rampSeconds = 0;
        o.queueDepth = 4;
        o.queues = 2;
        o.sizeBytes = 8 << 20;
        return o;
    }

    @ParameterizedTest
    @CsvSource({"randrw,insert", "randrw,pass", "randrw,off", "read,insert", "write,pass", "verify,insert",
            "verify,pass", "verify,off", "randread,insert", "randwrite,insert"})
    void aShortRunOnTheLocalTransportCompletesWithoutErrors(String rw, String pi) throws Exception {
        ByteArrayOutputStream progress = new ByteArrayOutputStream();
        BenchResult r = new BenchRunner(small(rw, pi), new PrintStream(progress, true, StandardCharsets.UTF_8))
                .run("local");
        assertTrue(r.ops > 0, r.summary());
        assertEquals(0, r.piErrors(), r.summary());
        assertEquals(0, r.ioErrors, r.summary());
        assertEquals(0, r.dataMismatches, r.summary());
        assertTrue(r.p50us > 0 && r.p50us <= r.p99us && r.p99us <= r.p999us, r.summary());
        String json = r.toJson();
        for (String key : new String[] {"\"transport\":\"local\"", "\"iops\":", "\"mib_per_s\":", "\"p50\":", "\"p99\":",
                "\"p999\":", "\"pi_errors\":0", "\"io_errors\":0", "\"data_mismatches\":0", "\"cpu\":{\"cores\":"}) {
            assertTrue(json.contains(key), key + " missing in " + json);
        }
        // The requests ran on this process's threads: it used CPU, and each request a positive share.
        assertTrue(r.cpuCores > 0 && r.cpuUsPerOp > 0, r.summary());
        assertTrue(r.summary().contains("embedded target included"), r.summary());
        assertTrue(progress.toString(StandardCharsets.UTF_8).contains("iops="), "a progress line each second");
    }

    @Test
    void verifyOnAVolumeWithOldContentChecksOnlyWhatItWrote(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        for (int run = 0; run < 2; run++) { // the second run finds the first run's blocks
            BenchOptions o = small("verify", "insert");
            o.dataDir = dir;
            BenchResult r = new BenchRunner(o, null).run("local");
            assertEquals(0, r.dataMismatches, "run " + run + ": " + r.summary());
            assertTrue(r.ops > 0);
        }
    }

    @Test
    void verifyCountsSilentCorruptionApartFromErrors() throws Exception {
        SilentCorruptionProvider.enabled = true;
        try {
            BenchResult r = new BenchRunner(small("verify", "off"), null).run("corrupting");
            assertTrue(r.dataMismatches > 0, "corrupted reads must be counted: " + r.summary());
            assertEquals(0, r.ioErrors + r.piErrors(), "nothing reported them: " + r.summary());
        } finally {
            SilentCorruptionProvider.enabled = false;
        }
    }

    @Test
    void aRequestRefusedBeforeItIsSentIsAnIoErrorWithItsReason() throws Exception {
        RefusingProvider.enabled = true;
        try {
            ByteArrayOutputStream progress = new ByteArrayOutputStream();
            BenchOptions o = small("randwrite", "insert");
            // long enough for more than EVERY writes on a busy machine (the tests' bench seconds are short)
            o.seconds = 4;
            BenchResult r = new BenchRunner(o, new PrintStream(progress, true, StandardCharsets.UTF_8)).run("refusing");
            String out = progress.toString(StandardCharsets.UTF_8);
            // The run ended on time with every slot answered, the refusals counted and named.
            assertTrue(r.ops > RefusingProvider.EVERY, r.summary());
            assertTrue(r.ioErrors > 0, r.summary());
            assertEquals(0, r.piErrors() + r.dataMismatches, r.summary());
            assertTrue(out.contains("first problem: java.lang.IllegalStateException: " + RefusingProvider.REASON), out);
            assertFalse(out.contains("unanswered"), out);
        } finally {
            RefusingProvider.enabled = false;
        }
    }

    @Test
    void impossibleOptionsAreRefusedWithAReason() {
        BenchOptions o = small("randrw", "insert");
        o.blockSize = 1000;
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new BenchRunner(o, null).run("local"));
        assertTrue(e.getMessage().contains("multiple"), e.getMessage());
        BenchOptions q = small("randrw", "insert");
        q.queueDepth = 0;
        assertThrows(IllegalArgumentException.class, () -> new BenchRunner(q, null).run("local"));
        IllegalArgumentException t = assertThrows(IllegalArgumentException.class,
                () -> new BenchRunner(small("randrw", "insert"), null).run("carrier-pigeon"));
        assertTrue(t.getMessage().contains("unknown transport") && t.getMessage().contains("local"), t.getMessage());
    }

    @Test
    void sideBySideRunsEachModeEachRoundAlternatingTheirOrderOverOneTarget() throws Exception {
        BenchOptions o = small("randrw", "insert");
        java.util.List<BenchOptions.PiMode> modes = BenchOptions.PiMode.parseList("insert,off,pass");
        java.util.List<BenchResult> rs = new BenchRunner(o, null).runSideBySide("local", modes, 2);
        StringBuilder order = new StringBuilder();
        for (BenchResult r : rs) {
            order.append(r.round).append(r.pi).append(' ');
            assertTrue(r.ops > 0, r.summary());
            assertEquals(0, r.piErrors() + r.ioErrors + r.dataMismatches, r.summary());
            assertTrue(r.toJson().contains("\"round\":" + r.round + ","), r.toJson());
        }
        assertEquals("1insert 1off 1pass 2pass 2off 2insert ", order.toString());
        PiComparison c = PiComparison.of(rs);
        assertEquals("off", c.baseline);
        assertEquals(2, c.rounds);
        for (PiComparison.Mode m : c.modes) {
            assertEquals(m.pi.equals("off") ? 0 : 2, m.ratios.length, m.pi);
            assertTrue(m.medianIops > 0, m.pi);
        }
        assertTrue(c.summary().contains("insert/off=") && c.summary().contains("pass/off="), c.summary());
    }

    @Test
    void sideBySideVerifyChecksEveryRoundOnEachModesOwnVolume() throws Exception {
        // off beside a PI mode gets a volume without metadata; verify must find what each round wrote
        java.util.List<BenchResult> rs = new BenchRunner(small("verify", "insert"), null)
                .runSideBySide("local", BenchOptions.PiMode.parseList("off,insert"), 3);
        assertEquals(6, rs.size());
        for (BenchResult r : rs) {
            assertTrue(r.ops > 0, r.summary());
            assertEquals(0, r.piErrors() + r.ioErrors + r.dataMismatches, r.summary());
        }
    }

    @Test
    void aModeListIsRefusedWhenItRepeatsOrNamesNothing() {
        assertEquals(java.util.List.of(BenchOptions.PiMode.OFF, BenchOptions.PiMode.INSERT),
                BenchOptions.PiMode.parseList("off, insert"));
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.PiMode.parseList("insert,insert"));
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.PiMode.parseList("insert,"));
        assertThrows(IllegalArgumentException.class, () -> new BenchRunner(small("randrw", "insert"), null)
                .runSideBySide("local", java.util.List.of(), 1));
        assertThrows(IllegalArgumentException.class, () -> new BenchRunner(small("randrw", "insert"), null)
                .runSideBySide("local", java.util.List.of(BenchOptions.PiMode.INSERT), 0));
    }
}
