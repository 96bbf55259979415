package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.frontend.iscsi.IscsiServer;
import io.pistore.frontend.iscsi.IscsiTestInitiator;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Persistent reservations of a replicated volume served over iSCSI by its three peers, as a cluster
 * that fences with them (fence_scsi, Windows failover clustering) uses them through different
 * peers: a reservation made through one peer holds on the others, every peer reports the same
 * keys, and once a PREEMPT AND ABORT through one peer is answered, a write of the preempted
 * initiator through another peer is refused and nothing of it is stored; once the leader stops,
 * the state is the same on the others and changes go on. COMPARE AND WRITE and ORWRITE through two
 * peers at once are atomic across them.
 */
@Timeout(180)
class ReplicatedIscsiReservationsTest {
    @TempDir
    Path dir;

    private static final String TARGET = IscsiServer.targetName("rv");
    private static final long KEY_A = 0xA1A1_0000_0000_0001L;
    private static final long KEY_B = 0xB2B2_0000_0000_0002L;
    private static final int WE_RO = 5;
    private static final int GOOD = 0;
    private static final int CONFLICT = 0x18;
    private static final int TASK_ABORTED = 0x40;

    private static IscsiTestInitiator.Result prout(IscsiTestInitiator c, int action, int type, long key, long serviceKey)
            throws IOException {
        byte[] cdb = new byte[10];
        cdb[0] = 0x5F;
        cdb[1] = (byte) action;
        cdb[2] = (byte) type;
        cdb[8] = 24;
        byte[] p = new byte[24];
        ByteBuffer.wrap(p).putLong(key).putLong(serviceKey);
        return ReplicatedIscsiPeers.settled(c, cdb, p, false);
    }

    /** READ KEYS: the generation and the keys. */
    private static long[] keys(IscsiTestInitiator c) throws IOException {
        byte[] cdb = new byte[10];
        cdb[0] = 0x5E;
        cdb[8] = (byte) 200;
        IscsiTestInitiator.Result r = ReplicatedIscsiPeers.settled(c, cdb, new byte[0], true);
        assertEquals(GOOD, r.status());
        ByteBuffer b = ByteBuffer.wrap(r.dataIn());
        int generation = b.getInt();
        long[] k = new long[1 + b.getInt() / 8];
        k[0] = generation;
        for (int i = 1; i < k.length; i++) {
            k[i] = b.getLong();
        }
        return k;
    }

    private static byte[] cdb10(int op, int lba) {
        byte[] c = new byte[10];
        c[0] = (byte) op;
        ByteBuffer.wrap(c, 2, 4).putInt(lba);
        c[8] = 1;
        return c;
    }

    private static int write(IscsiTestInitiator c, byte[] block) throws IOException {
        return ReplicatedIscsiPeers.settled(c, cdb10(0x2A, 3), block, false).status();
    }

    private static byte[] read(IscsiTestInitiator c) throws IOException {
        IscsiTestInitiator.Result r = ReplicatedIscsiPeers.settled(c, cdb10(0x28, 3), new byte[0], true);
        assertEquals(GOOD, r.status());
        return r.dataIn();
    }

    /**
     * COMPARE AND WRITE of block 9 through peers 1 and 2 at once, each expecting what the block
     * holds: every round exactly one wins and the other answers MISCOMPARE, as VMware's ATS locking
     * needs of hosts on different paths; peer 3 reads the winner's block.
     */
    private static void compareAndWriteRaces(IscsiTestInitiator a, IscsiTestInitiator b, IscsiTestInitiator c) throws Exception {
        byte[] cdb = new byte[16];
        cdb[0] = (byte) 0x89;
        cdb[9] = 9;
        cdb[13] = 1;
        byte[] read = cdb10(0x28, 9);
        IscsiTestInitiator[] via = {a, b};
        Random r = new Random(9);
        byte[] now = new byte[512]; // never written: zeros
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 8; round++) {
                java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(2);
                List<java.util.concurrent.Future<IscsiTestInitiator.Result>> answers = new ArrayList<>();
                byte[][] next = new byte[2][512];
                for (int i = 0; i < 2; i++) {
                    r.nextBytes(next[i]);
                    byte[] out = new byte[1024];
                    System.arraycopy(now, 0, out, 0, 512);
                    System.arraycopy(next[i], 0, out, 512, 512);
                    IscsiTestInitiator s = via[i];
                    answers.add(two.submit(() -> {
                        together.await();
                        return ReplicatedIscsiPeers.settled(s, cdb, out, false);
                    }));
                }
                IscsiTestInitiator.Result x = answers.get(0).get(60, java.util.concurrent.TimeUnit.SECONDS);
                IscsiTestInitiator.Result y = answers.get(1).get(60, java.util.concurrent.TimeUnit.SECONDS);
                assertTrue((x.status() == GOOD) != (y.status() == GOOD), "round " + round + ": exactly one wins, not "
                        + x.status() + " and " + y.status());
                IscsiTestInitiator.Result lost = x.status() == GOOD ? y : x;
                assertEquals(0x0E, lost.senseKey(), "round " + round + ": the other answers MISCOMPARE");
                now = next[x.status() == GOOD ? 0 : 1];
                IscsiTestInitiator.Result back = ReplicatedIscsiPeers.settled(c, read, new byte[0], true);
                assertArrayEquals(now, back.dataIn(), "round " + round + ": peer 3 reads the winner's block");
            }
        } finally {
            two.shutdownNow();
        }
    }

    /** Block {@code lba} of random data followed by its tuple: the T10 guard, {@code app}, the LBA. */
    private static byte[] withTuple(long lba, int app, Random r) {
        byte[] b = new byte[520];
        r.nextBytes(b);
        int guard = (int) io.pistore.integrity.GuardType.CRC16.compute(b, 0, 512);
        ByteBuffer.wrap(b, 512, 8).putShort((short) guard).putShort((short) app).putInt((int) lba);
        return b;
    }

    /**
     * COMPARE AND WRITE with WRPROTECT 1 through peer 2 (a follower or the leader): the tuples travel
     * into the log and every replica compares them too; peer 3 reads the block and tuple written, and
     * a verify instance whose application tag differs answers MISCOMPARE 10h/02h at its LBA.
     */
    private static void compareAndWriteWithPi(IscsiTestInitiator a, IscsiTestInitiator b, IscsiTestInitiator c) throws Exception {
        Random r = new Random(11);
        byte[] old = withTuple(11, 0x0101, r);
        byte[] write = {(byte) 0x8A, 0x20, 0, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0, 1, 0, 0};
        assertEquals(GOOD, ReplicatedIscsiPeers.settled(a, write, old, false).status(), "WRITE(16) WRPROTECT 1 through peer 1");
        byte[] fresh = withTuple(11, 0x0202, r);
        byte[] caw = {(byte) 0x89, 0x20, 0, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0, 1, 0, 0};
        byte[] both = java.util.Arrays.copyOf(old, 1040);
        System.arraycopy(fresh, 0, both, 520, 520);
        assertEquals(GOOD, ReplicatedIscsiPeers.settled(b, caw, both, false).status(), "COMPARE AND WRITE WRPROTECT 1 through peer 2");
        byte[] read = {(byte) 0x88, 0x60, 0, 0, 0, 0, 0, 0, 0, 11, 0, 0, 0, 1, 0, 0}; // RDPROTECT 3
        assertArrayEquals(fresh, ReplicatedIscsiPeers.settled(c, read, new byte[0], 520).dataIn(),
                "peer 3 reads the block and tuple written");
        byte[] wrongTag = both.clone();
        System.arraycopy(fresh, 0, wrongTag, 0, 520);
        wrongTag[512 + 3] ^= 1;
        IscsiTestInitiator.Result miss = ReplicatedIscsiPeers.settled(b, caw, wrongTag, false);
        assertEquals(0x0E, miss.senseKey(), "MISCOMPARE");
        assertEquals(0x1002, miss.ascq(), "in the application tag");
        // WRPROTECT 3 checks nothing, yet no replica stores a block that fails its guard: refused alike by both
        byte[] badGuard = withTuple(11, 0x0303, r);
        badGuard[512] ^= 1;
        byte[] write3 = write.clone();
        write3[1] = 0x60;
        IscsiTestInitiator.Result w3 = ReplicatedIscsiPeers.settled(b, write3, badGuard, false);
        assertEquals(0x0B, w3.senseKey(), "WRITE(16) WRPROTECT 3 of a bad guard: ABORTED COMMAND");
        assertEquals(0x1001, w3.ascq());
        byte[] caw3 = caw.clone();
        caw3[1] = 0x60;
        byte[] both3 = java.util.Arrays.copyOf(fresh, 1040);
        System.arraycopy(badGuard, 0, both3, 520, 520);
        IscsiTestInitiator.Result c3 = ReplicatedIscsiPeers.settled(b, caw3, both3, false);
        assertEquals(0x0B, c3.senseKey(), "COMPARE AND WRITE WRPROTECT 3 of a bad guard: the same");
        assertEquals(0x1001, c3.ascq());
        assertArrayEquals(fresh, ReplicatedIscsiPeers.settled(c, read, new byte[0], 520).dataIn(), "nothing stored");
    }

    /**
     * Random COMPARE AND WRITE commands with PI through peer 2, against the model the one-server tests
     * use ({@code ScsiPiCompareModel}): one to three blocks from block 40, every WRPROTECT value; in
     * the verify instance one flipped bit of a tuple, or up to three anywhere (half of them in tuples). Peer 3 then reads what the
     * replicas hold: the write instance after GOOD, else the blocks as they were.
     */
    private static void randomCompareAndWritesWithPi(IscsiTestInitiator a, IscsiTestInitiator b, IscsiTestInitiator c)
            throws Exception {
        Random r = new Random(13);
        for (int round = 0; round < 60; round++) {
            int n = 1 + r.nextInt(3);
            long lba = 40 + r.nextInt(8);
            byte[] stored = new byte[n * 520];
            byte[] fresh = new byte[n * 520];
            for (int i = 0; i < n; i++) {
                System.arraycopy(withTuple(lba + i, r.nextInt(0xFFFF), r), 0, stored, i * 520, 520);
                System.arraycopy(withTuple(lba + i, 0x0404, r), 0, fresh, i * 520, 520);
            }
            byte[] write = {(byte) 0x8A, 0x20, 0, 0, 0, 0, 0, 0, 0, (byte) lba, 0, 0, 0, (byte) n, 0, 0};
            assertEquals(GOOD, ReplicatedIscsiPeers.settled(a, write, stored, false).status(), "round " + round);
            byte[] sent = stored.clone();
            boolean oneTupleByte = r.nextBoolean(); // a difference in one field alone: what the mask decides
            for (int k = oneTupleByte ? 1 : r.nextInt(4); k > 0; k--) {
                int at = !oneTupleByte && r.nextBoolean() ? r.nextInt(sent.length) : r.nextInt(n) * 520 + 512 + r.nextInt(8);
                sent[at] ^= (byte) (1 << r.nextInt(8));
            }
            int p = 1 + r.nextInt(5);
            long[] want = io.pistore.frontend.iscsi.ScsiPiCompareModel.expected(p, false, lba, sent, stored, n);
            byte[] caw = {(byte) 0x89, (byte) (p << 5), 0, 0, 0, 0, 0, 0, 0, (byte) lba, 0, 0, 0, (byte) n, 0, 0};
            byte[] both = java.util.Arrays.copyOf(sent, 2 * n * 520);
            System.arraycopy(fresh, 0, both, n * 520, n * 520);
            IscsiTestInitiator.Result got = ReplicatedIscsiPeers.settled(b, caw, both, false);
            String what = "round " + round + ", WRPROTECT " + p;
            assertEquals(want[0], got.status(), what);
            if (want[0] != GOOD) {
                assertEquals(want[1], got.senseKey(), what);
                assertEquals(want[2], got.ascq(), what);
                assertEquals(want[3], got.information(), what + ": the LBA, or the offset in the Data-Out");
            }
            byte[] read = {(byte) 0x88, 0x60, 0, 0, 0, 0, 0, 0, 0, (byte) lba, 0, 0, 0, (byte) n, 0, 0};
            assertArrayEquals(want[0] == GOOD ? fresh : stored, ReplicatedIscsiPeers.settled(c, read, new byte[0], n * 520).dataIn(),
                    what + ": what peer 3 reads");
        }
    }

    /**
     * ORWRITE of block 10 through peers 1 and 2 at once, one setting the low four bits of every byte
     * and the other the high four: every round ends with every bit set, neither OR lost to the other.
     */
    private static void orWriteRaces(IscsiTestInitiator a, IscsiTestInitiator b, IscsiTestInitiator c) throws Exception {
        byte[] write = cdb10(0x2A, 10);
        byte[] or = new byte[16];
        or[0] = (byte) 0x8B;
        or[9] = 10;
        or[13] = 1;
        byte[] all = new byte[512];
        java.util.Arrays.fill(all, (byte) 0xFF);
        IscsiTestInitiator[] via = {a, b};
        java.util.concurrent.ExecutorService two = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 6; round++) {
                assertEquals(GOOD, ReplicatedIscsiPeers.settled(c, write, new byte[512], false).status());
                java.util.concurrent.CyclicBarrier together = new java.util.concurrent.CyclicBarrier(2);
                List<java.util.concurrent.Future<IscsiTestInitiator.Result>> answers = new ArrayList<>();
                for (int i = 0; i < 2; i++) {
                    byte[] mask = new byte[512];
                    java.util.Arrays.fill(mask, (byte) (i == 0 ? 0x0F : 0xF0));
                    IscsiTestInitiator s = via[i];
                    answers.add(two.submit(() -> {
                        together.await();
                        return ReplicatedIscsiPeers.settled(s, or, mask, false);
                    }));
                }
                for (java.util.concurrent.Future<IscsiTestInitiator.Result> f : answers) {
                    assertEquals(GOOD, f.get(60, java.util.concurrent.TimeUnit.SECONDS).status(), "round " + round);
                }
                assertArrayEquals(all, ReplicatedIscsiPeers.settled(c, cdb10(0x28, 10), new byte[0], true).dataIn(),
                        "round " + round + ": both ORs landed");
            }
        } finally {
            two.shutdownNow();
        }
    }

    /** This port's target port group, from the device identification page. */
    private static int ownGroup(IscsiTestInitiator c) throws IOException {
        IscsiTestInitiator.Result r = c.command(new byte[] {0x12, 0x01, (byte) 0x83, 0x01, 0x00, 0x00}, new byte[0],
                0, 256, true);
        byte[] d = r.dataIn();
        for (int o = 4; o < d.length; o += 4 + (d[o + 3] & 0xff)) {
            if ((d[o + 1] & 0x0f) == 5) {
                return (d[o + 6] & 0xff) << 8 | d[o + 7] & 0xff;
            }
        }
        throw new AssertionError("no target port group designator");
    }

    /** SET TARGET PORT GROUPS of one descriptor. */
    private static byte[] stpg() {
        byte[] cdb = new byte[12];
        cdb[0] = (byte) 0xA4;
        cdb[1] = 0x0A;
        cdb[9] = 8;
        return cdb;
    }

    /** The parameter list naming {@code group} active/optimized. */
    private static byte[] stpgList(int group) {
        return new byte[] {0, 0, 0, 0, 0x00, 0, (byte) (group >>> 8), (byte) group};
    }

    @Test
    void reservationsAreTheVolumesOnEveryPeer() throws Exception {
        List<IscsiTestInitiator> sessions = new ArrayList<>();
        ReplicatedIscsiPeers peers = new ReplicatedIscsiPeers(dir, "replicated-pr");
        try {
            String[] names = {"a", "b", "c"};
            for (int i = 0; i < 3; i++) {
                sessions.add(new IscsiTestInitiator(peers.portal(i), TARGET,
                        "InitiatorName", "iqn.2026-12.io.pistore:" + names[i]));
            }
            IscsiTestInitiator a = sessions.get(0);
            IscsiTestInitiator b = sessions.get(1);
            IscsiTestInitiator c = sessions.get(2);
            compareAndWriteRaces(a, b, c);
            compareAndWriteWithPi(a, b, c);
            randomCompareAndWritesWithPi(a, b, c);
            orWriteRaces(a, b, c);
            byte[] mine = new byte[512];
            new Random(3).nextBytes(mine);
            assertEquals(GOOD, write(a, mine), "a write before any reservation, through peer 1");

            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A).status(), "REGISTER through peer 1");
            assertEquals(GOOD, prout(b, 0, 0, 0, KEY_B).status(), "REGISTER through peer 2");
            assertEquals(GOOD, prout(a, 1, WE_RO, KEY_A, 0).status(), "RESERVE Write Exclusive, Registrants Only");
            Eventually.until("peer 3 to report both keys", () -> keys(c), k -> k.length == 3);
            assertEquals(2, keys(c)[0], "one generation on every peer");
            assertEquals(CONFLICT, write(c, new byte[512]), "an unregistered initiator through peer 3 is held off");
            assertEquals(CONFLICT, prout(c, 1, WE_RO, 0, 0).status(), "and cannot reserve");

            // the cluster fences b: PREEMPT AND ABORT through peer 1, then b writes through peer 2 at once
            assertEquals(GOOD, prout(a, 5, WE_RO, KEY_A, KEY_B).status(), "PREEMPT AND ABORT of b's key");
            byte[] fenced = new byte[512];
            new Random(4).nextBytes(fenced);
            int first = write(b, fenced);
            // in flight when peer 2 applied the PREEMPT AND ABORT: aborted there; else held off
            assertTrue(first == CONFLICT || first == TASK_ABORTED, "the preempted initiator's write through another peer: "
                    + Integer.toHexString(first));
            assertEquals(CONFLICT, write(b, fenced), "and the next one");
            assertArrayEquals(mine, read(a), "nothing of it stored");
            assertArrayEquals(mine, read(c), "Write Exclusive lets others read, on every peer");
            long[] left = keys(b);
            assertEquals(2, left.length, "b's key is gone on its own peer too");
            assertEquals(KEY_A, left[1]);

            // peer 1 leads (SET TARGET PORT GROUPS naming its own group), then stops: the state stays
            // with the volume, and changes go on through the new leader
            assertEquals(GOOD, ReplicatedIscsiPeers.settled(a, stpg(), stpgList(ownGroup(a)), false).status());
            a.close();
            sessions.remove(a);
            peers.stop(0);
            assertEquals(left[0], Eventually.until("peer 3 to answer after the leader stopped", () -> keys(c),
                    k -> k.length == 2)[0], "the same generation");
            assertEquals(CONFLICT, write(c, fenced), "still held off");
            try (IscsiTestInitiator again = new IscsiTestInitiator(peers.portal(2), TARGET,
                    "InitiatorName", "iqn.2026-12.io.pistore:a")) {
                assertEquals(GOOD, write(again, mine), "the holder's initiator port, through another peer");
                assertEquals(GOOD, prout(c, 0, 0, 0, KEY_B).status(), "REGISTER after the leader stopped");
                assertEquals(GOOD, write(c, mine), "a registrant writes under Registrants Only");
                assertEquals(3, keys(b).length, "both keys, seen through peer 2");
            }
        } finally {
            peers.close(sessions);
        }
    }

    /**
     * libiscsi's conformance tests of persistent reservations, its second initiator logged in through
     * another peer than the first (the multipath URL): each test's changes through one peer must hold
     * at once through the other. Skipped without {@code iscsi-test-cu} (Debian {@code libiscsi-bin}).
     */
    @Test
    void libiscsiReservationTestsPassWithTheTwoInitiatorsOnTwoPeers() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.util.Arrays.stream(System.getenv().getOrDefault("PATH", "")
                .split(java.io.File.pathSeparator)).anyMatch(d -> java.nio.file.Files.isExecutable(Path.of(d, "iscsi-test-cu"))),
                "iscsi-test-cu is not installed (Debian libiscsi-bin)");
        try (ReplicatedIscsiPeers peers = new ReplicatedIscsiPeers(dir, "replicated-cu")) {
            peers.awaitLeader(); // else the suite's first commands meet the election's unit attentions
            String[] urls = new String[2];
            for (int i = 0; i < 2; i++) {
                urls[i] = "iscsi://127.0.0.1:" + peers.portal(i).getPort() + "/" + TARGET + "/0";
            }
            Process p = new ProcessBuilder("iscsi-test-cu", "-d", "-t",
                    "ALL.PrinReadKeys,ALL.PrinReportCapabilities,ALL.ProutRegister,ALL.ProutReserve,ALL.ProutClear,ALL.ProutPreempt",
                    urls[0], urls[1]).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS));
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("tests\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)")
                    .matcher(out);
            assertTrue(m.find(), out);
            assertEquals(0, Integer.parseInt(m.group(4)), "failed tests:\n" + out);
            assertTrue(Integer.parseInt(m.group(3)) >= 19, "passed " + m.group(3) + " tests:\n" + out);
        }
    }
}
