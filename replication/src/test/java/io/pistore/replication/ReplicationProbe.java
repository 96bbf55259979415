package io.pistore.replication;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.raft.StoredBlockCheck;
import io.pistore.replication.raft.VolumeStateMachine;
import io.pistore.replication.volume.LocalLeader;
import io.pistore.replication.volume.ReplicatedVolume;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Not a test: a probe of the replicated volume's speed with the three peers in this JVM and no host
 * transport, for finding where the time goes (run it with a profiler or jcmd Thread.print beside it).
 * Prints IOPS of 4 KiB random writes and reads at {@code -Dpistore.replication.probe.qd} (32) for
 * {@code -Dpistore.replication.probe.seconds} (5) each, on the leader's volume and a follower's, with
 * the JVM's CPU time per request (all three peers and the probe's threads);
 * {@code -Dpistore.replication.probe.only=write} or {@code read} runs one kind;
 * {@code -Dpistore.replication.followerReads=false} has the follower read through Ratis's client. {@link #leaderReadCost}
 * takes a leader-local read apart (CPU per call of its steps, on one thread).
 *
 * <pre>mvn -B -o -q verify -pl replication -am -Dtest=ReplicationProbe -Dsurefire.failIfNoSpecifiedTests=false -Dpistore.replication.probe=true</pre>
 */
@EnabledIfSystemProperty(named = "pistore.replication.probe", matches = "true")
class ReplicationProbe {
    private static final BlockFormat FORMAT = BlockFormat.of(4096, 8);
    private static final long BLOCKS = 16384;

    @TempDir
    Path dir;

    @Test
    void probe() throws Exception {
        int qd = Integer.getInteger("pistore.replication.probe.qd", 32);
        int seconds = Integer.getInteger("pistore.replication.probe.seconds", 5);
        try (ThreePeers peers = ThreePeers.start(dir, "rv", FORMAT, BLOCKS)) {
            int l = peers.leader();
            int inFlight = Integer.getInteger("pistore.replication.probe.inflight", 2);
            try (ReplicatedVolume leader = new ReplicatedVolume("rv", FORMAT, BLOCKS, peers.node(l).open("rv").group(),
                    ThreePeers.SETTINGS.withEntriesInFlight(inFlight), s -> { },
                    new LocalLeader(peers.node(l).server(), ReplicaPeers.groupId("rv")));
                    ReplicatedVolume unbatched = new ReplicatedVolume("rv", FORMAT, BLOCKS, leader.group(),
                            ThreePeers.SETTINGS.withEntriesInFlight(64), s -> { }, null);
                    ReplicatedVolume viaRatis = new ReplicatedVolume("rv", FORMAT, BLOCKS, leader.group(),
                            ThreePeers.SETTINGS, s -> { }, null);
                    ReplicatedVolume follower = peers.node((l + 1) % 3).open("rv")) {
                String only = System.getProperty("pistore.replication.probe.only", "");
                for (int round = 1; round <= Integer.getInteger("pistore.replication.probe.rounds", 2); round++) {
                    if (!only.equals("read")) {
                        run("write, " + inFlight + " entries in flight", leader, true, qd, seconds, round);
                        run("write, 64 entries in flight", unbatched, true, qd, seconds, round);
                    }
                    if (only.equals("write")) {
                        continue;
                    }
                    run("read on leader (local)   ", leader, false, qd, seconds, round);
                    run("read on leader via Ratis ", viaRatis, false, qd, seconds, round);
                    run("read on follower         ", follower, false, qd, seconds, round);
                    System.out.printf("probe round %d: follower reads of its own replica so far %d%n", round,
                            follower.followerReads());
                }
            }
        }
    }

    /**
     * A database's commit: one 4 KiB write, then a flush, one at a time on the leader, against writes
     * alone; p50 and p99 of each step in µs and the JVM's CPU per commit. Where the peers' files lie
     * decides what a flush costs: {@code -Dpistore.replication.probe.dir=/dev/shm} (default: the test's
     * temporary directory, on this machine's disk).
     */
    @Test
    void commitLatency() throws Exception {
        int n = Integer.getInteger("pistore.replication.probe.commits", 2000);
        String where = System.getProperty("pistore.replication.probe.dir");
        Path root = where == null ? dir : java.nio.file.Files.createTempDirectory(Path.of(where), "probe");
        try (ThreePeers peers = ThreePeers.start(root, "rv", FORMAT, BLOCKS, ReplicationSettings.defaults());
                ReplicatedVolume v = peers.node(peers.leader()).open("rv")) {
            byte[] data = new byte[FORMAT.dataSize()];
            byte[] meta = new byte[FORMAT.metadataSize()];
            Random r = new Random(7);
            for (int round = 1; round <= Integer.getInteger("pistore.replication.probe.rounds", 3); round++) {
                for (boolean flush : new boolean[] {false, true}) {
                    long[] w = new long[n];
                    long[] f = new long[n];
                    long c0 = processCpuNanos();
                    long t0 = System.nanoTime();
                    for (int i = 0; i < n; i++) {
                        long lba = (long) (r.nextDouble() * BLOCKS);
                        r.nextBytes(data);
                        Pi.generate(PiContext.builder(FORMAT).checks(CheckFlags.ALL).initialRefTag(FORMAT.refTagOf(lba)).build(),
                                ScatterList.wrap(data), ScatterList.wrap(meta), 1);
                        long a = System.nanoTime();
                        v.write(lba, 1, ScatterList.wrap(data), ScatterList.wrap(meta), false);
                        long b = System.nanoTime();
                        if (flush) {
                            v.flush();
                        }
                        w[i] = b - a;
                        f[i] = System.nanoTime() - b;
                    }
                    long t1 = System.nanoTime();
                    long c1 = processCpuNanos();
                    java.util.Arrays.sort(w);
                    java.util.Arrays.sort(f);
                    System.out.printf("probe round %d %s: %.0f commits/s, write p50 %d p99 %d us, flush p50 %d p99 %d us,"
                            + " cpu_us_per_commit=%.1f%n", round, flush ? "write+flush" : "write only ", n * 1e9 / (t1 - t0),
                            w[n / 2] / 1000, w[n * 99 / 100] / 1000, f[n / 2] / 1000, f[n * 99 / 100] / 1000,
                            (c1 - c0) / 1000.0 / n);
                }
            }
        } finally {
            if (where != null) {
                io.pistore.testkit.TestFiles.deleteTree(root);
            }
        }
    }

    /**
     * COMPARE AND WRITE of one 4 KiB block, one at a time, through the leader and through a follower
     * (each a log entry sent through the group's client), against writes one at a time on the leader:
     * p50 and p99 in µs and the JVM's CPU per operation.
     */
    @Test
    void compareAndWriteLatency() throws Exception {
        int n = Integer.getInteger("pistore.replication.probe.commits", 1000);
        try (ThreePeers peers = ThreePeers.start(dir, "rv", FORMAT, BLOCKS, ReplicationSettings.defaults());
                ReplicatedVolume l = peers.node(peers.leader()).open("rv");
                ReplicatedVolume f = peers.node((peers.leader() + 1) % 3).open("rv")) {
            Random r = new Random(3);
            byte[][] now = ThreePeers.blocks(FORMAT, r, 9, 1);
            ThreePeers.write(l, 9, now, null);
            for (int round = 1; round <= Integer.getInteger("pistore.replication.probe.rounds", 3); round++) {
                for (String what : new String[] {"write         ", "caw on leader ", "caw on follower"}) {
                    long[] t = new long[n];
                    long c0 = processCpuNanos();
                    for (int i = 0; i < n; i++) {
                        byte[][] next = ThreePeers.blocks(FORMAT, r, 9, 1);
                        long a = System.nanoTime();
                        if (what.startsWith("write")) {
                            ThreePeers.write(l, 9, next, null);
                        } else {
                            long o = (what.endsWith("leader ") ? l : f).orderedCompareAndWrite().compareAndWrite(9, 1, now[0],
                                    ScatterList.wrap(next[0]), ScatterList.wrap(next[1]), false, null).join();
                            if (o != io.pistore.spi.OrderedCompareAndWrite.WRITTEN) {
                                throw new AssertionError("miscompare at " + o);
                            }
                        }
                        t[i] = System.nanoTime() - a;
                        now = next;
                    }
                    long c1 = processCpuNanos();
                    java.util.Arrays.sort(t);
                    System.out.printf("probe round %d %s: p50 %d p99 %d us, cpu_us_per_op=%.1f%n", round, what,
                            t[n / 2] / 1000, t[n * 99 / 100] / 1000, (c1 - c0) / 1000.0 / n);
                }
            }
        }
    }

    /**
     * A follower's reads both ways, alternated on the same peers: through Ratis's client (the leader
     * reads and sends the blocks back) and of its own replica after the leader's read index. Election
     * timeouts of the defaults (1-2 s), so a loaded machine keeps its leader; each run says whether it
     * did and how many reads the follower served itself. {@code -Dpistore.replication.probe.qd} (8).
     */
    @Test
    void followerReadCost() throws Exception {
        int qd = Integer.getInteger("pistore.replication.probe.qd", 8);
        int seconds = Integer.getInteger("pistore.replication.probe.seconds", 5);
        try (ThreePeers peers = ThreePeers.start(dir, "rv", FORMAT, BLOCKS, ReplicationSettings.defaults())) {
            int l = peers.leader();
            int f = (l + 1) % 3;
            try (ReplicatedVolume follower = peers.node(f).open("rv")) {
                for (int round = 1; round <= Integer.getInteger("pistore.replication.probe.rounds", 2); round++) {
                    for (boolean own : new boolean[] {false, true}) {
                        follower.readOwnReplicaWhileFollowing(own);
                        long before = follower.followerReads();
                        long leaderBefore = follower.localReads();
                        run(own ? "follower read, own replica" : "follower read, via Ratis ", follower, false, qd, seconds,
                                round);
                        System.out.printf("probe round %d: %d reads of the follower's own replica, %d as leader; peer %d"
                                + " still leads: %s%n", round, follower.followerReads() - before,
                                follower.localReads() - leaderBefore, l, peers.node(l).isLeader("rv"));
                    }
                }
            }
        }
    }

    /**
     * CPU of the calling thread per call on the leader, one thread, no transport: the read-index
     * confirmation, a read of the local replica's volume, and a whole leader-local replicated read
     * (confirmation, read, the replica-side PI check). Rounds repeat so the later ones are warm.
     */
    @Test
    void leaderReadCost() throws Exception {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        try (ThreePeers peers = ThreePeers.start(dir, "rv", FORMAT, 4096)) {
            int l = peers.leader();
            LocalLeader ll = new LocalLeader(peers.node(l).server(), ReplicaPeers.groupId("rv"));
            try (ReplicatedVolume v = new ReplicatedVolume("rv", FORMAT, 4096, peers.node(l).open("rv").group(),
                    ThreePeers.SETTINGS, s -> { }, ll)) {
                VolumeStateMachine sm = ll.confirm(4000, "probe", "rv");
                ScatterList d = ScatterList.wrap(new byte[FORMAT.dataSize()]);
                ScatterList m = ScatterList.wrap(new byte[FORMAT.metadataSize()]);
                // Written blocks (random data, good PI), as a host's reads find them: an unwritten
                // block skips the PI checks.
                Random rnd = new Random(1);
                byte[] wd = new byte[FORMAT.dataSize() * 64];
                byte[] wm = new byte[FORMAT.metadataSize() * 64];
                for (long lba = 0; lba < 4096; lba += 64) {
                    rnd.nextBytes(wd);
                    Pi.generate(PiContext.builder(FORMAT).checks(CheckFlags.ALL).initialRefTag(FORMAT.refTagOf(lba)).build(),
                            ScatterList.wrap(wd), ScatterList.wrap(wm), 64);
                    v.write(lba, 64, ScatterList.wrap(wd), ScatterList.wrap(wm), false);
                }
                int n = 20000;
                for (int round = 1; round <= 6; round++) {
                    long c0 = mx.getCurrentThreadCpuTime();
                    for (int i = 0; i < n; i++) {
                        ll.confirm(4000, "probe", "rv");
                    }
                    long c1 = mx.getCurrentThreadCpuTime();
                    for (int i = 0; i < n; i++) {
                        sm.applier().volume().read(i % 4096, 1, d, m);
                    }
                    long c2 = mx.getCurrentThreadCpuTime();
                    for (int i = 0; i < n; i++) {
                        v.read(i % 4096, 1, d, m);
                    }
                    long c3 = mx.getCurrentThreadCpuTime();
                    for (int i = 0; i < n; i++) {
                        sm.applier().volume().read(i % 4096, 1, d, m);
                        if (!StoredBlockCheck.badStoredBlocks(FORMAT, i % 4096, d, m, 1).isEmpty()) {
                            throw new AssertionError("bad block " + i % 4096);
                        }
                    }
                    long c4 = mx.getCurrentThreadCpuTime();
                    System.out.printf("probe round %d leader read cost: confirmation %.2f us, local volume read %.2f us,"
                            + " replicated read %.2f us, local read and stored-block check %.2f us"
                            + " (CPU of the calling thread per call)%n",
                            round, (c1 - c0) / 1e3 / n, (c2 - c1) / 1e3 / n, (c3 - c2) / 1e3 / n, (c4 - c3) / 1e3 / n);
                    // The steps a leader read took before and takes now, alternated on the same blocks: the
                    // full list of bad blocks against the quick pass, the server's division lookup
                    // against the kept one, and the read's name made on every read.
                    long sink = 0;
                    long[] t = new long[4];
                    long last = (n - 1) % 4096; // the block d and m hold
                    for (int step = 0; step < 4; step++) {
                        long s0 = mx.getCurrentThreadCpuTime();
                        for (int i = 0; i < n; i++) {
                            long lba = i % 4096;
                            switch (step) {
                                case 0: sink += StoredBlockCheck.badStoredBlocks(FORMAT, last, d, m, 1).size(); break;
                                case 1: sink += StoredBlockCheck.allPass(FORMAT, last, d, m, 1) ? 0 : 1; break;
                                case 2: sink += peers.node(l).server().getDivision(ReplicaPeers.groupId("rv")).getInfo()
                                        .isLeader() ? 1 : 0; break;
                                default: sink += ("read lba=" + lba).length(); break;
                            }
                        }
                        t[step] = mx.getCurrentThreadCpuTime() - s0;
                    }
                    System.out.printf("probe round %d steps: bad-block list %.3f us, quick pass %.3f us, division lookup"
                            + " and isLeader %.3f us, read name %.3f us (sink %d)%n",
                            round, t[0] / 1e3 / n, t[1] / 1e3 / n, t[2] / 1e3 / n, t[3] / 1e3 / n, sink);
                    System.out.printf("probe round %d: peer %d leads: %s, reads served locally so far %d%n", round, l,
                            peers.node(l).server().getDivision(ReplicaPeers.groupId("rv")).getInfo().isLeader(),
                            v.localReads());
                }
            }
        }
    }

    private static void run(String what, ReplicatedVolume v, boolean write, int qd, int seconds, int round)
            throws Exception {
        System.out.printf("probe round %d %s: starting%n", round, what);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong ops = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        java.util.concurrent.atomic.AtomicReference<String> firstError = new java.util.concurrent.atomic.AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < qd; t++) {
            long seed = t;
            Thread th = new Thread(() -> {
                Random r = new Random(seed);
                byte[] data = new byte[FORMAT.dataSize()];
                byte[] meta = new byte[FORMAT.metadataSize()];
                while (!stop.get()) {
                    long lba = (long) (r.nextDouble() * BLOCKS);
                    try {
                        if (write) {
                            r.nextBytes(data);
                            PiContext c = PiContext.builder(FORMAT).checks(CheckFlags.ALL).initialRefTag(FORMAT.refTagOf(lba))
                                    .build();
                            Pi.generate(c, ScatterList.wrap(data), ScatterList.wrap(meta), 1);
                            v.write(lba, 1, ScatterList.wrap(data), ScatterList.wrap(meta), false);
                        } else {
                            v.read(lba, 1, ScatterList.wrap(data), ScatterList.wrap(meta));
                        }
                        ops.incrementAndGet();
                    } catch (Exception e) {
                        errors.incrementAndGet();
                        firstError.compareAndSet(null, String.valueOf(e));
                    }
                }
            });
            th.start();
            threads.add(th);
        }
        Thread.sleep(1000); // not a synchronisation: the warm-up before the measured window
        long o0 = ops.get();
        long t0 = System.nanoTime();
        long c0 = processCpuNanos();
        Thread.sleep(seconds * 1000L); // not a synchronisation: the measured window
        long o1 = ops.get();
        long t1 = System.nanoTime();
        long c1 = processCpuNanos();
        stop.set(true);
        for (Thread th : threads) {
            th.join();
        }
        // CPU per request: this whole JVM's (three peers, their Ratis and the writers), the figure that
        // a shared machine does not distort the way it distorts IOPS.
        System.out.printf("probe round %d %s qd=%d iops=%.0f cpu_us_per_op=%.1f errors=%d%s%n", round, what, qd,
                (o1 - o0) * 1e9 / (t1 - t0), (c1 - c0) / 1e3 / Math.max(1, o1 - o0), errors.get(),
                firstError.get() == null ? "" : " first: " + firstError.get());
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }
}
