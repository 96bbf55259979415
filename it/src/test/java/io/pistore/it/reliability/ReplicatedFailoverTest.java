package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hosts fail over by themselves: a replicated volume on three {@code pistore serve} processes
 * ({@link FaultCluster}: one for the tcp tests, restored and n2 leading before each, one for the
 * rdma test), a host given all three peers ({@code --target A,B,C}, the leader's first) and
 * connected to the leader's {@code serve};
 * the leader is killed with SIGKILL under a flushing write load, the host's connection moves to
 * the next peer of its list by itself, and every write it had acknowledged reads back.
 * <ul>
 *   <li>tcp, and rdma (the soft NIC across processes): writer threads through the transport (writes,
 *       a flush every fourth), each failed write sent again until it is acknowledged; afterwards
 *       every block reads back as written.</li>
 *   <li>NBD: fio through an NBD gateway ({@code serve --nbd --transport tcp --target A,B,C}) writing
 *       with crc32c verify headers and an fsync every 8 writes; the gateway sends the requests in
 *       flight on the lost connection again once its host has failed over ({@code --nbd-resend-ms}),
 *       so fio runs its 10 s to the end without an error (the leader killed once it has written 256
 *       KiB); a {@code --verify_only} pass through the same gateway (now on another peer) then checks
 *       every block fio wrote.</li>
 * </ul>
 * One kill per test by default; {@code -Dpistore.failover.kills=N} kills the leader N times (the
 * killed peer restarts and catches up between kills, and the next leader is the peer the host uses).
 */
@Timeout(value = 900, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReplicatedFailoverTest {
    static final int BS = 4096;
    private static final Pattern FAILED_OVER = Pattern.compile("failed over from (\\S+) to (\\S+) \\(queue");

    /** The part of the volume one fio write phase covers; a phase that wraps around it overwrites. */
    private static final int REGION_MIB = 16;

    /** The class's directory: the tcp cluster's, and the rdma test's. */
    Path dir;

    /** The tcp tests' cluster, shared: each test begins by {@link FaultCluster#restore} (n2 leading). */
    private FaultCluster tcp;

    @BeforeAll
    void startCluster(@TempDir Path classDir) throws Exception {
        dir = classDir;
        tcp = FaultCluster.start(dir.resolve("tcp"), "tcp", (4 * REGION_MIB) + "MiB");
    }

    @AfterAll
    void stopCluster() throws Exception {
        if (tcp != null) {
            tcp.close();
        }
    }

    /** The host's log lines of a transport ({@code tcp}, {@code rdma}), in this JVM. */
    static final class TransportLog extends Handler implements AutoCloseable {
        final List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final Logger logger;

        TransportLog(String transport) {
            logger = Logger.getLogger("io.pistore.transport." + transport);
            logger.addHandler(this);
        }

        @Override
        public void publish(LogRecord r) {
            lines.add(r.getMessage());
        }

        /** The peer the last failover went to, waiting up to 60 s for one beyond {@code seen} lines; null if none came. */
        String awaitFailover(int seen) {
            String[] to = new String[1];
            try {
                Eventually.await("a failover", Duration.ofSeconds(60), () -> {
                    int n = 0;
                    for (String l : lines) {
                        Matcher m = FAILED_OVER.matcher(l);
                        if (m.find() && ++n > seen) {
                            to[0] = m.group(2);
                        }
                    }
                    return to[0] != null;
                });
            } catch (AssertionError e) {
                return null; // the caller says what it waited for
            }
            return to[0];
        }

        int failovers() {
            return (int) lines.stream().filter(l -> FAILED_OVER.matcher(l).find()).count();
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }

    /**
     * Writer threads, each on its own LBAs: write a block (random data), flush after every fourth;
     * a write that fails is sent again, same data, until acknowledged (a failed write may or may not
     * have been stored, so only the resend makes the block's content known).
     */
    static final class Load {
        final Map<Long, byte[]> acked = new ConcurrentHashMap<>();
        final AtomicInteger failures = new AtomicInteger();
        final AtomicInteger flushed = new AtomicInteger();
        final AtomicBoolean stop = new AtomicBoolean();
        final List<Thread> threads = new ArrayList<>();
        final List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();

        Load(BlockDevice dev, int writers, long blocksEach) {
            for (int w = 0; w < writers; w++) {
                long first = w * blocksEach;
                Random rnd = new Random(0xFA11 + w);
                Thread t = new Thread(() -> {
                    try {
                        int sinceFlush = 0;
                        for (long lba = first; lba < first + blocksEach && !stop.get(); lba++) {
                            byte[] d = new byte[BS];
                            rnd.nextBytes(d);
                            writeUntilAcked(dev, lba, d);
                            acked.put(lba, d);
                            if (++sinceFlush == 4) {
                                sinceFlush = 0;
                                if (dev.flush().get(120, TimeUnit.SECONDS).isSuccess()) {
                                    flushed.addAndGet(4);
                                } else {
                                    failures.incrementAndGet();
                                }
                            }
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }, "failover-writer-" + w);
                threads.add(t);
                t.start();
            }
        }

        /** Sends the write again (Eventually paces the tries) until it is acknowledged; a hang guard of 120 s. */
        private void writeUntilAcked(BlockDevice dev, long lba, byte[] d) {
            Completion[] last = new Completion[1];
            try {
                Eventually.await("write lba " + lba + " acknowledged", Duration.ofSeconds(120), () -> {
                    try {
                        last[0] = dev.write(lba, ScatterList.wrap(d)).get(120, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt(); // the wait then ends with the interrupt
                        return false;
                    } catch (Exception e) {
                        throw new AssertionError("write lba " + lba + ": " + e, e);
                    }
                    if (!last[0].isSuccess()) {
                        failures.incrementAndGet();
                    }
                    return last[0].isSuccess();
                });
            } catch (AssertionError e) {
                throw new AssertionError("write lba " + lba + " never acknowledged: " + last[0], e);
            }
        }

        /** Waits until {@code n} more writes are acknowledged than now (the load goes on meanwhile). */
        void awaitMore(int n) {
            int target = acked.size() + n;
            Eventually.await(n + " more acknowledged writes (the load stalled at " + acked.size() + ")",
                    Duration.ofSeconds(240), () -> {
                        assertTrue(errors.isEmpty(), "writer failed: " + errors);
                        return acked.size() >= target;
                    });
        }

        void finish() throws InterruptedException {
            stop.set(true);
            for (Thread t : threads) {
                t.join(TimeUnit.SECONDS.toMillis(300));
            }
            assertTrue(errors.isEmpty(), "writer failed: " + errors);
        }
    }

    @Test
    void aTcpHostFailsOverWhenTheLeaderIsKilledAndLosesNoAcknowledgedWrite() throws Exception {
        hostFailsOverWhenTheLeaderIsKilled("tcp");
    }

    /** The same with the peers serving hosts over rdma (the soft NIC across processes). */
    @Test
    void anRdmaHostFailsOverWhenTheLeaderIsKilledAndLosesNoAcknowledgedWrite() throws Exception {
        hostFailsOverWhenTheLeaderIsKilled("rdma");
    }

    private void hostFailsOverWhenTheLeaderIsKilled(String transport) throws Exception {
        if (transport.equals("tcp")) {
            tcp.restore(2);
            hostFailsOverWhenTheLeaderIsKilled(tcp, transport);
        } else {
            try (FaultCluster cluster = FaultCluster.start(dir.resolve(transport), transport, "16MiB")) {
                hostFailsOverWhenTheLeaderIsKilled(cluster, transport);
            }
        }
    }

    /** With n2 leading: the host's peer list starts with n2's address. */
    private static void hostFailsOverWhenTheLeaderIsKilled(FaultCluster cluster, String transport) throws Exception {
        int kills = Figures.intFlag("pistore.failover.kills", 1);
        int perPhase = 24;
        int failovers;
        Load load;
        try (TransportLog log = new TransportLog(transport);
             BlockTransport t = Transports.find(transport).create();
             HostConnection c = t.connect(cluster.targetsFrom(2), new ConnectOptions(1, 8))) {
            BlockDevice dev = BlockDevice.open(c, FaultCluster.VOLUME);
            load = new Load(dev, 4, 4096 / 4);
            int host = 2; // connect takes the first peer that answers: n2, the leader
            for (int k = 0; k < kills; k++) {
                load.awaitMore(perPhase);
                int seen = log.failovers();
                cluster.kill(host); // the leader, and the peer the host uses
                String to = log.awaitFailover(seen);
                assertNotNull(to, "the host did not fail over from n" + host + ": " + log.lines);
                int killed = host;
                host = cluster.peerOf(to);
                load.awaitMore(perPhase); // the load goes on through the new peer
                // the tcp variant restarts the killed peer after every kill (it catches up under the
                // load); the rdma one only between kills, to keep its CI time down
                if (k + 1 < kills || transport.equals("tcp")) {
                    cluster.restart(killed);
                }
                if (k + 1 < kills) {
                    cluster.lead(host); // the next kill hits the leader the host now uses
                }
            }
            load.awaitMore(perPhase / 2);
            load.finish();
            failovers = log.failovers();
            assertTrue(c.reconnects() >= kills, "reconnects " + c.reconnects());
            for (Map.Entry<Long, byte[]> e : new java.util.TreeMap<>(load.acked).entrySet()) {
                ByteBuffer b = ByteBuffer.allocate(BS);
                Completion r = dev.read(e.getKey(), ScatterList.of(b)).get(60, TimeUnit.SECONDS);
                assertTrue(r.isSuccess(), "lba " + e.getKey() + ": " + r);
                assertArrayEquals(e.getValue(), b.array(), "acknowledged write at lba " + e.getKey());
            }
        }
        Figures.record("replicated failover (" + transport + ")", "3 serve processes, host with the list of all three on the "
                + "leader's; leader killed " + kills + " time(s) under 4 writers (flush every 4th write): the host "
                + "failed over " + failovers + " time(s) by itself (one line per queue), " + load.acked.size()
                + " acknowledged writes (" + load.flushed.get() + " flushed) all read back, " + load.failures.get()
                + " writes or flushes failed meanwhile and were sent again");
    }

    private static final Pattern FIO_WRITE_ERROR = Pattern.compile("write offset=(\\d+)");
    private static final Pattern FIO_VERIFY_BAD = Pattern.compile("offset (\\d+), length");
    private static final Pattern FIO_JOB_ERROR = Pattern.compile("err=\\s*[1-9]");
    /** How much fio writes before the kill. */
    private static final long WRITTEN_KIB = 256;

    /** Waits until fio's progress lines say it wrote {@code kib} KiB (a hang guard of 120 s). */
    private static void awaitWritten(FioOutput out, long kib, String when) {
        Eventually.await("fio to have written " + kib + " KiB " + when + ":\n" + out.sofar(), Duration.ofSeconds(120),
                () -> kib(out.sofar(), "write") >= kib);
    }

    @Test
    void fioThroughAnNbdGatewayVerifiesEveryWriteItCompletedAcrossALeaderKill() throws Exception {
        assumeTrue(onPath("fio"), "skipped: fio is not installed (apt-get install fio)");
        Fio probe = fio(30, "--enghelp=nbd");
        assumeTrue(probe.code == 0, "skipped: this fio has no nbd ioengine (built without libnbd)");
        int kills = Figures.intFlag("pistore.failover.kills", 1);
        tcp.restore(2);
        PistoreProcess gateway = null;
        long verified = 0;
        long resent = 0;
        long givenUp = 0;
        try {
            // without path states: the kill fails the requests in flight on the lost connection, which
            // the gateway counts as it sends them again (a host that follows path states sends them
            // again inside its queue: PeerFaultMatrix)
            gateway = PistoreProcess.serve(List.of(), "--nbd", "127.0.0.1:0", "--transport", "tcp", "--target",
                    tcp.targetsFrom(2), "--metrics", "127.0.0.1:0", "--transport-option", "tcp.pathStates=false");
            String nbd = gateway.awaitNbdListening();
            String metrics = metricsUrl(gateway);
            int host = 2; // the gateway's first peer, the leader
            for (int k = 0; k < kills; k++) {
                String[] job = {"--name=failover" + k, "--ioengine=nbd", "--uri=nbd://" + nbd + "/rv", "--bs=4k",
                    "--iodepth=8", "--offset=" + (k % 4 * REGION_MIB) + "M", "--size=" + REGION_MIB + "M",
                    "--rw=randwrite", "--verify=crc32c", "--randseed=" + (17 + k)};
                List<String> write = new ArrayList<>(List.of(job));
                // fio's progress printed every second: the kill comes once it has written some
                write.addAll(List.of("--do_verify=0", "--fsync=8", "--verify_state_save=1", "--time_based",
                        "--runtime=10", "--status-interval=1"));
                Process writer = fioProcess(write);
                FioOutput out = new FioOutput(writer);
                awaitWritten(out, WRITTEN_KIB, "before the kill");
                int seenFailovers = count(gateway.output(), "failed over from");
                tcp.kill(host);
                String to = awaitLine(gateway, "failed over from", seenFailovers);
                assertTrue(writer.waitFor(300, TimeUnit.SECONDS), "fio's write phase did not end");
                String w = out.text();
                int code = writer.exitValue();
                // the gateway sends what was in flight on the lost connection again after failing
                // over: fio sees no error at all
                assertTrue(code == 0 && !w.contains("Input/output error") && !w.contains("io_u error")
                        && !FIO_JOB_ERROR.matcher(w).find(), "fio write phase: exit " + code + "\n" + w);
                Set<Long> failed = new TreeSet<>();
                Matcher m = FIO_WRITE_ERROR.matcher(w);
                while (m.find()) {
                    failed.add(Long.parseLong(m.group(1)));
                }
                assertTrue(failed.isEmpty(), "writes failed at offsets " + failed + "\n" + w);
                resent = counter(metrics, "pistore_resends_total");
                givenUp = counter(metrics, "pistore_resends_given_up_total");
                int killed = host;
                host = tcp.peerOf(to);
                // every write fio completed, through the gateway now on another peer
                List<String> verify = new ArrayList<>(List.of(job));
                verify.addAll(List.of("--verify_only=1", "--verify_state_load=1", "--verify_fatal=0"));
                Fio v = fio(300, verify.toArray(new String[0]));
                Set<Long> bad = new TreeSet<>();
                Matcher b = FIO_VERIFY_BAD.matcher(v.out);
                while (b.find()) {
                    bad.add(Long.parseLong(b.group(1)));
                }
                assertTrue(bad.isEmpty(), "writes fio completed do not verify at offsets " + bad + "\nwrite phase:\n"
                        + w + "\nverify:\n" + v.out);
                assertTrue(!v.out.contains("io_u error"), "the verify pass failed to read:\n" + v.out);
                long done = kib(w, "write");
                long checked = kib(v.out, "read");
                // the verify pass reads every block fio completed a write to (and may read the failed
                // ones); a fast machine may write more than the region, fio wrapping around in it
                assertTrue(checked >= Math.min(done, REGION_MIB * 1024L) && checked > 0, "verify_only read "
                        + checked + " KiB, fio wrote " + done + " KiB\nwrite phase:\n" + w + "\nverify:\n" + v.out);
                verified += checked / 4;
                if (k + 1 < kills) { // the killed peer restarts and catches up before the next kill
                    tcp.restore(host);
                }
            }
        } finally {
            if (gateway != null) {
                gateway.close();
            }
        }
        Figures.record("replicated failover (NBD, fio)", "3 serve processes and an NBD gateway with the list of all "
                + "three; leader killed " + kills + " time(s) under fio randwrite (crc32c headers, fsync every 8): "
                + "the gateway failed over by itself and sent " + resent + " requests again, fio saw no error, its "
                + "verify_only pass checked " + verified + " blocks, all good");
        assertTrue(resent > 0, "the kill met requests in flight, which the gateway sent again");
        assertEquals(0, givenUp, "no request outlasted the resend deadline");
    }

    private static final Pattern METRICS_AT = Pattern.compile("metrics at (\\S+)");
    private static final java.net.http.HttpClient HTTP = java.net.http.HttpClient.newHttpClient();

    private static String metricsUrl(PistoreProcess p) {
        String[] url = new String[1];
        try {
            Eventually.await("the gateway's metrics address", Duration.ofSeconds(60), () -> {
                Matcher m = METRICS_AT.matcher(p.output());
                url[0] = m.find() ? m.group(1) : null;
                return url[0] != null;
            });
        } catch (AssertionError e) {
            throw new AssertionError("no metrics address: " + p.output(), e);
        }
        return url[0];
    }

    /** The value of a counter without labels but {@code frontend="nbd"} on the gateway's metrics page. */
    private static long counter(String url, String name) throws Exception {
        String page = HTTP.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(url)).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = Pattern.compile("(?m)^" + name + "\\{frontend=\"nbd\"\\} (\\S+)$").matcher(page);
        if (!m.find()) {
            throw new AssertionError("no " + name + " on " + url + ":\n" + page);
        }
        return (long) Double.parseDouble(m.group(1));
    }

    private static final Pattern FIO_AMOUNT = Pattern.compile(
            "(read|write): IOPS=[^,]*, BW=[^(]*\\([^)]*\\)\\((\\d+(?:\\.\\d+)?)(B|KiB|MiB)/");

    /**
     * The KiB fio reports it completed in direction {@code rw} (0 when it reports none): its last
     * report (progress lines, then the summary, each count the whole run so far).
     */
    private static long kib(String fioOutput, String rw) {
        Matcher m = FIO_AMOUNT.matcher(fioOutput);
        long kib = 0;
        while (m.find()) {
            if (m.group(1).equals(rw)) {
                double v = Double.parseDouble(m.group(2));
                kib = Math.round(m.group(3).equals("MiB") ? v * 1024 : m.group(3).equals("B") ? v / 1024 : v);
            }
        }
        return kib;
    }

    private static boolean onPath(String tool) {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(java.io.File.pathSeparator)) {
                if (java.nio.file.Files.isExecutable(Path.of(d, tool))) {
                    return true;
                }
            }
        }
        return false;
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    /** The peer named by the next occurrence (beyond {@code seen}) of {@code what ... to PEER}. */
    private static String awaitLine(PistoreProcess p, String what, int seen) {
        String[] to = new String[1];
        try {
            Eventually.await("a '" + what + "' line", Duration.ofSeconds(120), () -> {
                int n = 0;
                for (String l : new ArrayList<>(p.lines)) {
                    Matcher m = FAILED_OVER.matcher(l);
                    if (l.contains(what) && m.find() && ++n > seen) {
                        to[0] = m.group(2);
                    }
                }
                return to[0] != null;
            });
        } catch (AssertionError e) {
            throw new AssertionError("no '" + what + "' line: " + p.output(), e);
        }
        return to[0];
    }

    record Fio(int code, String out) {
    }

    private Process fioProcess(List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("fio"));
        cmd.addAll(args);
        // in the test's directory: fio saves and loads its verify state in the working directory
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).directory(dir.toFile()).start();
        p.getOutputStream().close();
        return p;
    }

    /** fio's output, read while it runs. */
    static final class FioOutput {
        private final StringBuffer text = new StringBuffer();
        private final Thread reader;

        FioOutput(Process p) {
            reader = new Thread(() -> {
                try (java.io.BufferedReader r = new java.io.BufferedReader(
                        new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String l = r.readLine(); l != null; l = r.readLine()) {
                        text.append(l).append('\n');
                    }
                } catch (IOException ignored) {
                    // ended
                }
            }, "fio-output");
            reader.start();
        }

        /** What fio printed so far, while it runs. */
        String sofar() {
            return text.toString();
        }

        /** All fio printed, once it ended. */
        String text() throws InterruptedException {
            reader.join(10_000);
            return text.toString();
        }
    }

    private Fio fio(long seconds, String... args) throws Exception {
        Process p = fioProcess(List.of(args));
        FioOutput out = new FioOutput(p);
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("fio did not end within " + seconds + " s: " + out.text());
        }
        return new Fio(p.exitValue(), out.text());
    }
}
