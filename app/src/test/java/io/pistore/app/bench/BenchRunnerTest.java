package io.pistore.app.bench;

import io.pistore.testkit.FreePorts;

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
        try (SwitchedOffLocalProvider.Switch on = SwitchedOffLocalProvider.on("corrupting")) {
            BenchResult r = new BenchRunner(small("verify", "off"), null).run("corrupting");
            assertTrue(r.dataMismatches > 0, "corrupted reads must be counted: " + r.summary());
            assertEquals(0, r.ioErrors + r.piErrors(), "nothing reported them: " + r.summary());
        }
    }

    @Test
    void requestsAnsweredBeforeTheirSubmitReturnsDoNotRecurseOutOfStack() throws Exception {
        // Each answer's callback runs inside the submit before it and submits the next request: a
        // bench that chains them so recurses until the thread's stack runs out and loses the slot.
        try (SwitchedOffLocalProvider.Switch on = SwitchedOffLocalProvider.on("answer-at-once")) {
            BenchResult r = new BenchRunner(small("randrw", "insert"), null).run("answer-at-once");
            assertTrue(r.ops > 0, r.summary());
            assertEquals(0, r.piErrors() + r.ioErrors + r.dataMismatches + r.unanswered, r.summary());
        }
    }

    @Test
    void aRequestRefusedBeforeItIsSentIsAnIoErrorWithItsReason() throws Exception {
        try (SwitchedOffLocalProvider.Switch on = SwitchedOffLocalProvider.on("refusing")) {
            ByteArrayOutputStream progress = new ByteArrayOutputStream();
            BenchOptions o = small("randwrite", "insert");
            // long enough for more than EVERY writes on a busy machine (the tests' bench seconds are short)
            o.seconds = 4;
            BenchResult r = new BenchRunner(o, new PrintStream(progress, true, StandardCharsets.UTF_8)).run("refusing");
            // The run ended on time with every slot answered, the refusals counted and named.
            assertTrue(r.ops > RefusingProvider.EVERY, r.summary());
            assertTrue(r.ioErrors > 0, r.summary());
            assertEquals(0, r.piErrors() + r.dataMismatches, r.summary());
            assertTrue(r.summary().contains("first problem: java.lang.IllegalStateException: " + RefusingProvider.REASON),
                    r.summary());
            assertEquals(0, r.unanswered, r.summary());
        }
    }

    @Test
    void requestsForAVolumeDeletedUnderTheRunAreSentAgainEveryRetryPauseNotAtOnce() throws Exception {
        VanishingVolumeProvider.REFUSED.set(0);
        try (SwitchedOffLocalProvider.Switch on = SwitchedOffLocalProvider.on("vanishing")) {
            BenchOptions o = small("randread", "insert");
            o.prefill = false;
            long start = System.nanoTime();
            BenchResult r = new BenchRunner(o, null).run("vanishing");
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            long slots = (long) o.queueDepth * o.queues;
            long refused = VanishingVolumeProvider.REFUSED.get();
            // each slot sends its failed request again no sooner than a pause after the answer: at most
            // one try per slot per pause over the whole run (a scheduler only ever runs a delay late)
            long most = slots * (elapsedMs / BenchRunner.RETRY_PAUSE_MS + 1);
            assertTrue(refused >= slots, "every slot met the deleted volume: " + refused + "; " + r.summary());
            assertTrue(refused <= most, refused + " tries answered NO_SUCH_VOLUME in " + elapsedMs + " ms by "
                    + slots + " slots: more than one per slot every " + BenchRunner.RETRY_PAUSE_MS + " ms");
            assertTrue(r.ioErrors > 0 && r.ioErrors <= refused, "counted as I/O errors: " + r.summary());
        }
    }

    @Test
    void aHostOfARunningTargetShowsItsVolumesHostSeriesFromTheStart() throws Exception {
        try (io.pistore.engine.volume.VolumeStore store = io.pistore.engine.volume.VolumeStore.inMemory();
             io.pistore.spi.BlockTransport t = new io.pistore.engine.local.LocalTransportProvider().create();
             io.pistore.spi.TargetListener l = t.listen("bench-host-metrics",
                     new io.pistore.engine.service.TargetService(store))) {
            store.create("v1", io.pistore.integrity.BlockFormat.of(4096, 8), 2048);
            int port = FreePorts.next();
            BenchOptions o = small("randread", "insert");
            o.target = l.address();
            o.volume = "v1";
            o.seconds = 2400; // ended below once scraped (as Ctrl-C ends it): a slow first scrape still finds it running
            o.metrics = "127.0.0.1:" + port;
            java.util.concurrent.CompletableFuture<BenchResult> run = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            return new BenchRunner(o, null).run("local");
                        } catch (Exception e) {
                            throw new java.util.concurrent.CompletionException(e);
                        }
                    });
            java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
            String[] seen = {""};
            // a healthy run: the host's PI error series of its volume are there, at zero
            io.pistore.testkit.Eventually.await("the where=\"host\" series of v1", java.time.Duration.ofSeconds(30),
                    () -> {
                        try {
                            seen[0] = http.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(
                                    "http://127.0.0.1:" + port + "/metrics")).build(),
                                    java.net.http.HttpResponse.BodyHandlers.ofString()).body();
                        } catch (java.io.IOException e) {
                            return false;
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return false;
                        }
                        return seen[0].lines().anyMatch(x -> x.startsWith("pistore_pi_errors_total{")
                                && x.contains("volume=\"v1\"") && x.contains("where=\"host\""));
                    });
            o.interrupted.set(true);
            assertTrue(seen[0].lines().filter(x -> x.startsWith("pistore_pi_errors_total{") && x.contains("where=\"host\""))
                    .allMatch(x -> Double.parseDouble(x.substring(x.lastIndexOf(' ') + 1)) == 0), seen[0]);
            BenchResult r = run.get(120, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(0, r.piErrors() + r.ioErrors, r.summary());
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
