package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.app.cli.Main;
import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One peer of three {@code pistore serve} processes fails (kill -9 of the leader, kill -9 of a
 * follower, SIGSTOP of the leader for 5 s) while a tcp host given every peer, attached to a peer
 * that stays up, reads, writes, write-zeroes and flushes: no request fails and every block reads
 * back as last acknowledged. The peers elect within 300-600 ms and give an operation up after 8 s
 * ({@code pistore.replication.*} properties), so a request that waited for the operation timeout
 * instead of moving on to the new leader shows as a failure. The first request after the kill is a
 * read, as in the case a user met: a read through a follower right after the leader's kill -9 failed
 * after the operation timeout although a new leader was elected within it; that case is also run
 * as they ran it, with nbdcopy through an NBD gateway. tcp hosts, and two rdma cases (on a follower; following the leader).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class PeerFailureStallTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 64;
    private static final List<String> FAST = List.of("-Dpistore.replication.election.ms=300",
            "-Dpistore.replication.rpc.ms=1000", "-Dpistore.replication.operation.ms=8000");

    @TempDir
    Path dir;

    private final int[] hostPort = new int[4];
    private final int[] repl = new int[4];
    private final PistoreProcess[] servers = new PistoreProcess[4];
    private String peers;
    private String targets;

    @AfterEach
    void stopAll() throws InterruptedException {
        for (int i = 1; i <= 3; i++) {
            if (servers[i] != null) {
                ProcessHandle.of(servers[i].pid()).ifPresent(h -> signal(h.pid(), "CONT"));
            }
        }
        PistoreProcess.closeAll(servers);
    }

    @Test
    void theLeaderKilledWhileTheHostUsesAFollower() throws Exception {
        failAndCheck("tcp", 2, "KILL", false);
    }

    @Test
    void aFollowerKilledWhileTheHostUsesTheOther() throws Exception {
        failAndCheck("tcp", 3, "KILL", false);
    }

    @Test
    void theLeaderFrozenForFiveSecondsWhileTheHostUsesAFollower() throws Exception {
        failAndCheck("tcp", 2, "STOP", false);
    }

    /** With path states the host moves to the leader; killed, the host moves to the next without an error. */
    @Test
    void theLeaderKilledWhileTheHostFollowsIt() throws Exception {
        failAndCheck("tcp", 2, "KILL", true);
    }

    /** The leader the host follows frozen for 5 s: its watch finds it silent, the host moves to the new leader. */
    @Test
    void theLeaderFrozenForFiveSecondsWhileTheHostFollowsIt() throws Exception {
        failAndCheck("tcp", 2, "STOP", true);
    }

    /** The same over rdma (the soft NIC across processes): the peers, not the transport, ride out the failure. */
    @Test
    void theLeaderKilledWhileAnRdmaHostUsesAFollower() throws Exception {
        failAndCheck("rdma", 2, "KILL", false);
    }

    /** An rdma host follows the leader by path states (held PATH_STATES capsules across processes); killed, it moves on. */
    @Test
    void theLeaderKilledWhileAnRdmaHostFollowsIt() throws Exception {
        failAndCheck("rdma", 2, "KILL", true);
    }

    /**
     * The case a user met, as they ran it: an NBD gateway given every peer, attached to a follower,
     * 1 MiB written with nbdcopy, the leader killed with kill -9, the volume read back with nbdcopy
     * right after the kill: it reads without an error and equals what was written. (With path states
     * the gateway's host is on the leader by then: the kill is of its own peer.)
     */
    @Test
    void nbdcopyReadsThroughAGatewayRightAfterTheLeaderIsKilled() throws Exception {
        assumeTrue(onPath("nbdcopy"), "skipped: nbdcopy is not installed (apt-get install libnbd-bin)");
        startGroup("tcp");
        PistoreProcess gateway = PistoreProcess.serve(List.of(), "--nbd", "127.0.0.1:0", "--transport", "tcp",
                "--target", targets);
        try {
            String uri = "nbd://" + gateway.awaitNbdListening() + "/rv";
            byte[] data = new byte[BLOCKS * BS];
            new Random(3).nextBytes(data);
            Path in = dir.resolve("in.bin");
            Path out = dir.resolve("out.bin");
            java.nio.file.Files.write(in, data);
            assertEquals(0, nbdcopy(in.toString(), uri), "nbdcopy write");
            servers[2].kill(); // the leader; the gateway uses n1
            long t0 = System.nanoTime();
            assertEquals(0, nbdcopy(uri, out.toString()), "nbdcopy read right after the leader's kill -9: "
                    + gateway.output());
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertArrayEquals(data, java.nio.file.Files.readAllBytes(out), "what nbdcopy read back");
            Figures.record("one peer fails (NBD gateway, nbdcopy)", "3 serve processes, election 300-600 ms, operation "
                    + "timeout 8 s; the leader killed, the gateway on a follower: nbdcopy read " + (BLOCKS * BS >> 10)
                    + " KiB back in " + ms + " ms, no error, all equal");
        } finally {
            gateway.close();
        }
    }

    private int nbdcopy(String from, String to) throws Exception {
        Process p = new ProcessBuilder("nbdcopy", from, to).redirectErrorStream(true).start();
        byte[] o = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "nbdcopy did not end");
        if (p.exitValue() != 0) {
            System.out.println("nbdcopy " + from + " " + to + ": " + new String(o, java.nio.charset.StandardCharsets.UTF_8));
        }
        return p.exitValue();
    }

    private static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (java.nio.file.Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    /**
     * n2 leads, the host uses n1 (the first of its list), or with {@code pathStates} moves to n2;
     * peer {@code victim} gets {@code signal} (STOP: continued 5 s later) after a first round of
     * requests; the rounds go on until the failed peer's stall is over.
     */
    private void failAndCheck(String transport, int victim, String signal, boolean pathStates) throws Exception {
        startGroup(transport);
        String via = pathStates ? "the leader n2 (path states)" : "n1";
        io.pistore.spi.TransportOptions options = io.pistore.spi.TransportOptions.of(
                java.util.Map.of(transport + ".pathStates", String.valueOf(pathStates)));
        try (ReplicatedFailoverTest.TransportLog log = new ReplicatedFailoverTest.TransportLog(transport);
             BlockTransport t = Transports.find(transport).create(options);
             HostConnection c = t.connect(targets, new ConnectOptions(1, 8))) {
            BlockDevice dev = BlockDevice.open(c, "rv");
            if (pathStates) {
                io.pistore.testkit.Eventually.await("the host on the leader n2: " + log.lines,
                        () -> log.lines.stream().anyMatch(l -> l.contains("moved from") && l.contains("(queue 0)")));
            }
            byte[][] expected = new byte[BLOCKS][];
            Arrays.setAll(expected, i -> new byte[BS]);
            Random rnd = new Random(victim * 31L + signal.hashCode());
            List<String> errors = new ArrayList<>();
            // A write held by a frozen leader can still fail at the operation timeout (not yet ruled out):
            // with SIGSTOP, write failures are counted apart and the write sent again; reads must not fail.
            boolean frozen = signal.equals("STOP");
            List<String> writeErrors = new ArrayList<>();
            Stall longest = new Stall();
            round(dev, rnd, expected, errors, errors, new Stall(), 40); // a fresh group's first requests are slow anyway
            long at = System.nanoTime();
            ProcessHandle victimProcess = ProcessHandle.of(servers[victim].pid()).orElseThrow();
            if (signal.equals("KILL")) {
                servers[victim].kill();
            } else {
                signal(victimProcess.pid(), "STOP");
            }
            // the first request after the failure is a read of every block, then the mix goes on
            for (int lba = 0; lba < BLOCKS && errors.isEmpty(); lba++) {
                checkRead(dev, lba, expected, errors, longest);
            }
            boolean continued = false;
            while (errors.isEmpty() && System.nanoTime() - at < TimeUnit.SECONDS.toNanos(signal.equals("STOP") ? 7 : 3)) {
                round(dev, rnd, expected, errors, frozen ? writeErrors : errors, longest, 10);
                if (!continued && signal.equals("STOP") && System.nanoTime() - at >= TimeUnit.SECONDS.toNanos(5)) {
                    signal(victimProcess.pid(), "CONT");
                    continued = true;
                }
            }
            if (!continued && signal.equals("STOP")) {
                signal(victimProcess.pid(), "CONT");
            }
            assertEquals(List.of(), errors, "requests through " + via + " failed after n" + victim + " got SIG" + signal);
            for (int lba = 0; lba < BLOCKS; lba++) {
                checkRead(dev, lba, expected, errors, longest);
            }
            assertEquals(List.of(), errors, "blocks read back after n" + victim + " got SIG" + signal);
            Figures.record("one peer fails (SIG" + signal + " n" + victim + ", " + transport + " host on " + via + ")",
                    "3 serve processes, election 300-600 ms, operation timeout 8 s: no read failed, " + writeErrors.size()
                    + " writes, write-zeroes or flushes failed (sent again), the longest request took "
                    + TimeUnit.NANOSECONDS.toMillis(longest.nanos) + " ms (" + longest.what + ") after the failure");
        }
    }

    /** {@code n} requests: writes of new data, reads checked against the last acknowledged write, write-zeroes, flushes. */
    private static void round(BlockDevice dev, Random rnd, byte[][] expected, List<String> errors,
            List<String> writeErrors, Stall longest, int n) throws Exception {
        for (int k = 0; k < n && errors.isEmpty(); k++) {
            int lba = rnd.nextInt(BLOCKS);
            int kind = rnd.nextInt(10);
            if (kind < 4) {
                byte[] d = new byte[BS];
                rnd.nextBytes(d);
                boolean ok = timed(dev.write(lba, ScatterList.wrap(d)), "write lba=" + lba, writeErrors, longest);
                // where write failures are tolerated (a frozen leader), a failed write is sent again, as
                // bench and the NBD gateway do, so the block's content is known
                for (int again = 0; !ok && writeErrors != errors && again < 5; again++) {
                    ok = timed(dev.write(lba, ScatterList.wrap(d)), "write lba=" + lba + " (again)", writeErrors, longest);
                }
                if (ok) {
                    expected[lba] = d;
                } else if (writeErrors != errors) {
                    errors.add("write lba=" + lba + " never acknowledged: " + writeErrors);
                }
            } else if (kind < 8) {
                checkRead(dev, lba, expected, errors, longest);
            } else if (kind < 9) {
                if (timed(dev.writeZeroes(lba, 1), "write-zeroes lba=" + lba, writeErrors, longest)) {
                    expected[lba] = new byte[BS];
                } else if (writeErrors != errors) { // unknown whether it took effect: write the block again
                    boolean ok = false;
                    for (int again = 0; !ok && again < 5; again++) {
                        ok = timed(dev.writeZeroes(lba, 1), "write-zeroes lba=" + lba + " (again)", writeErrors, longest);
                    }
                    if (ok) {
                        expected[lba] = new byte[BS];
                    } else {
                        errors.add("write-zeroes lba=" + lba + " never acknowledged: " + writeErrors);
                    }
                }
            } else {
                timed(dev.flush(), "flush", writeErrors, longest);
            }
        }
    }

    private static void checkRead(BlockDevice dev, int lba, byte[][] expected, List<String> errors, Stall longest)
            throws Exception {
        ByteBuffer b = ByteBuffer.allocate(BS);
        if (timed(dev.read(lba, ScatterList.of(b)), "read lba=" + lba, errors, longest)) {
            if (!Arrays.equals(expected[lba], b.array())) {
                errors.add("read lba=" + lba + " returned other data than its last acknowledged write");
            }
        }
    }

    private static boolean timed(java.util.concurrent.CompletableFuture<Completion> f, String what, List<String> errors,
            Stall longest) throws Exception {
        long t0 = System.nanoTime();
        Completion c = f.get(60, TimeUnit.SECONDS);
        long took = System.nanoTime() - t0;
        if (took > longest.nanos) {
            longest.nanos = took;
            longest.what = what;
        }
        if (!c.isSuccess()) {
            errors.add(what + " after " + TimeUnit.NANOSECONDS.toMillis(took) + " ms: " + c);
        }
        return c.isSuccess();
    }

    /** The slowest request so far. */
    private static final class Stall {
        long nanos;
        String what = "none";
    }

    private static void signal(long pid, String sig) {
        try {
            Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start();
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new AssertionError("kill -" + sig + " " + pid + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void run(String... args) {
        StringWriter o = new StringWriter();
        int code = Main.run(new PrintWriter(o), new PrintWriter(o), args);
        if (code != 0) {
            throw new AssertionError(String.join(" ", args) + " -> " + code + ": " + o);
        }
    }

    /** Three peers of volume rv serving hosts over {@code transport} with short elections; n2 leads. */
    private void startGroup(String transport) throws Exception {
        StringBuilder p = new StringBuilder();
        StringBuilder t = new StringBuilder();
        for (int i = 1; i <= 3; i++) {
            hostPort[i] = ReconnectAfterRestartTest.freePort();
            repl[i] = ReconnectAfterRestartTest.freePort();
            p.append(i == 1 ? "" : ",").append("n").append(i).append("=127.0.0.1:").append(repl[i]);
            t.append(i == 1 ? "" : ",").append("127.0.0.1:").append(hostPort[i]);
        }
        peers = p.toString();
        targets = t.toString();
        for (int i = 1; i <= 3; i++) {
            run("volume", "create", "--data", dir.resolve("d" + i).toString(), "rv", "--size", (BLOCKS * BS) + "",
                    "--format", "4096+8", "--replica-id", "n" + i, "--replicas", peers);
        }
        for (int i = 1; i <= 3; i++) {
            servers[i] = PistoreProcess.serve(FAST, "--data", dir.resolve("d" + i).toString(), "--transport", transport,
                    "--listen", "127.0.0.1:" + hostPort[i], "--replica-id", "n" + i, "--replica-listen",
                    "127.0.0.1:" + repl[i]);
        }
        for (int i = 1; i <= 3; i++) {
            servers[i].awaitListening();
        }
        IOException[] last = new IOException[1];
        try {
            Eventually.await("the group to elect a leader and move it to n2", Duration.ofSeconds(60), () -> {
                try (ReplicatedVolume v = ReplicatedVolume.connect("rv", peers, ReplicationSettings.defaults(), line -> { })) {
                    v.transferLeadership("n2");
                    return true;
                } catch (IOException e) {
                    last[0] = e;
                    return false;
                }
            });
        } catch (AssertionError e) {
            if (last[0] != null) {
                e.addSuppressed(last[0]);
            }
            throw e;
        }
    }
}
