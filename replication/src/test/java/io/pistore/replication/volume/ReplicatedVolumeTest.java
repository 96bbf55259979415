package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockIoException;
import io.pistore.integrity.UnwrittenBlock;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.raft.ReplicaCommand;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Three replicas in one JVM, real Ratis (gRPC) on loopback, real files: the guarantees of a replicated volume. */
class ReplicatedVolumeTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "rv";
    private static final long BLOCKS = 256;

    @TempDir
    Path dir;

    private ThreePeers peers;

    @AfterEach
    void stop() throws Exception {
        if (peers != null) {
            peers.close();
        }
    }

    private ThreePeers start() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        return peers;
    }

    private static byte[] random(Random r, int blocks) {
        byte[] b = new byte[blocks * FORMAT.dataSize()];
        r.nextBytes(b);
        return b;
    }

    private static byte[] read(ServedVolume s, long lba, int blocks) throws BlockIoException {
        ByteBuffer b = ByteBuffer.allocate(blocks * FORMAT.dataSize());
        s.device.readSync(lba, b);
        return b.array();
    }

    private void assertReplicasEqual() throws Exception {
        peers.awaitConverged();
        byte[][] first = peers.contents(0);
        for (int i = 1; i < 3; i++) {
            byte[][] other = peers.contents(i);
            assertArrayEquals(first[0], other[0], "data of replica " + ThreePeers.id(i) + " and n1");
            assertArrayEquals(first[1], other[1], "metadata of replica " + ThreePeers.id(i) + " and n1");
        }
    }

    @Test
    void writesZeroesAndFlushesAreCommittedOnEveryReplicaAndReadBackThroughTheTransport() throws Exception {
        start();
        Random r = new Random(1);
        try (ServedVolume s = new ServedVolume(peers.node(0), NAME)) {
            byte[] a = random(r, 4);
            byte[] b = random(r, 2);
            s.device.writeSync(10, ByteBuffer.wrap(a));
            s.device.writeSync(100, ByteBuffer.wrap(b));
            s.device.writeSync(200, ByteBuffer.wrap(random(r, 3)));
            BlockDevice_await(s.device.writeZeroes(201, 1));
            BlockDevice_await(s.device.deallocate(202, 1));
            s.device.flushSync();
            assertArrayEquals(a, read(s, 10, 4));
            assertArrayEquals(b, read(s, 100, 2));
            byte[] zeroed = read(s, 201, 2);
            assertArrayEquals(new byte[2 * FORMAT.dataSize()], zeroed, "write-zeroes and deallocate read as zeros");
        }
        assertReplicasEqual();
        byte[][] n3 = peers.contents(2);
        byte[] expect = new byte[4 * FORMAT.dataSize()];
        System.arraycopy(n3[0], 10 * FORMAT.dataSize(), expect, 0, expect.length);
        // The replicas hold the data with the PI the target inserted: check it on one replica's bytes.
        PiContext ctx = PiContext.builder(FORMAT).checks(CheckFlags.ALL).initialRefTag(10).build();
        assertEquals(null, Pi.verify(ctx, ScatterList.wrap(expect),
                ScatterList.wrap(Arrays.copyOfRange(n3[1], 10 * 8, 14 * 8)), 4), "stored PI passes on a follower");
        byte[] unwritten = UnwrittenBlock.metadata(FORMAT);
        assertArrayEquals(unwritten, Arrays.copyOfRange(n3[1], 201 * 8, 202 * 8), "zeroed block is unwritten on n3");
    }

    private static void BlockDevice_await(java.util.concurrent.CompletableFuture<io.pistore.spi.Completion> f)
            throws Exception {
        io.pistore.spi.Completion c = f.get();
        assertEquals(Status.SUCCESS, c.status(), c.toString());
    }

    @Test
    void whenTheLeaderDiesANewOneIsElectedAndNoAcknowledgedWriteIsLost() throws Exception {
        start();
        int leader = peers.leader();
        int survivor = (leader + 1) % 3;
        Random r = new Random(2);
        Map<Long, byte[]> acked = new HashMap<>();
        try (ServedVolume s = new ServedVolume(peers.node(survivor), NAME)) {
            for (long lba = 0; lba < 40; lba++) {
                byte[] d = random(r, 1);
                s.device.writeSync(lba, ByteBuffer.wrap(d));
                acked.put(lba, d);
            }
            peers.stop(leader);
            int next = peers.leader();
            assertNotEquals(leader, next, "a surviving node leads");
            for (long lba = 40; lba < 60; lba++) {
                byte[] d = random(r, 1);
                s.device.writeSync(lba, ByteBuffer.wrap(d));
                acked.put(lba, d);
            }
            for (Map.Entry<Long, byte[]> e : acked.entrySet()) {
                assertArrayEquals(e.getValue(), read(s, e.getKey(), 1), "acknowledged write at lba " + e.getKey());
            }
        }
        peers.restart(leader);
        assertReplicasEqual();
    }

    @Test
    void aStoppedFollowerCatchesUpAfterItsRestartAndTheReplicasCompareEqual() throws Exception {
        start();
        int leader = peers.leader();
        int follower = (leader + 1) % 3;
        Random r = new Random(3);
        try (ServedVolume s = new ServedVolume(peers.node(leader), NAME)) {
            s.device.writeSync(0, ByteBuffer.wrap(random(r, 8)));
            peers.stop(follower);
            for (long lba = 8; lba < 120; lba += 4) {
                s.device.writeSync(lba, ByteBuffer.wrap(random(r, 4)));
            }
            BlockDevice_await(s.device.writeZeroes(16, 4));
            s.device.flushSync();
            peers.restart(follower);
            s.device.writeSync(200, ByteBuffer.wrap(random(r, 1)));
        }
        assertReplicasEqual();
        assertTrue(peers.node(follower).stats(NAME).applied() > 0, "the restarted follower applied the entries it missed");
    }

    @Test
    void aWriteWithBadPiIsRefusedAndStoredNowhere() throws Exception {
        start();
        byte[] data = random(new Random(4), 2);
        byte[] meta = new byte[2 * FORMAT.metadataSize()];
        PiContext ctx = PiContext.builder(FORMAT).checks(CheckFlags.ALL).initialRefTag(5).build();
        Pi.generate(ctx, ScatterList.wrap(data), ScatterList.wrap(meta), 2);
        meta[FORMAT.metadataSize()] ^= 0x01; // the second block's guard no longer matches its data
        byte[][] before = peers.contents(0);
        try (ServedVolume s = new ServedVolume(peers.node(peers.leader()), NAME)) {
            // Through the transport: the target service checks it as the request says, before the group sees it.
            BlockIoException e = assertThrows(BlockIoException.class, () -> s.device.writeSync(5, ByteBuffer.wrap(data),
                    ByteBuffer.wrap(meta), Protection.pass(CheckFlags.ALL, 5, 0, 0)));
            assertEquals(Status.GUARD_CHECK, e.completion().status());
            assertEquals(6, e.completion().errorLba());
            // Asking for no check: the replicas' own check refuses it all the same, as the PI failure it is.
            BlockIoException unchecked = assertThrows(BlockIoException.class, () -> s.device.writeSync(5, ByteBuffer.wrap(data),
                    ByteBuffer.wrap(meta), Protection.pass(CheckFlags.NONE, 5, 0, 0)));
            assertEquals(Status.GUARD_CHECK, unchecked.completion().status(), unchecked.completion().toString());
            assertEquals(6, unchecked.completion().errorLba());
            // Straight to the volume: refused before it is sent.
            io.pistore.engine.volume.PiRefusedException direct = assertThrows(io.pistore.engine.volume.PiRefusedException.class,
                    () -> s.volume.write(5, 2, ScatterList.wrap(data), ScatterList.wrap(meta), false));
            assertTrue(direct.getMessage().contains("lba=6 error=guard"), direct.getMessage());
            assertEquals(6, direct.lba());
        }
        // Straight to the leader, past every client-side check: the leader refuses it on entry.
        try (org.apache.ratis.client.RaftClient raw = org.apache.ratis.client.RaftClient.newBuilder()
                .setRaftGroup(peers.node(0).open(NAME).group()).setProperties(ThreePeers.SETTINGS.client()).build()) {
            org.apache.ratis.protocol.RaftClientReply reply = null;
            Exception thrown = null;
            try {
                reply = raw.io().send(ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, 5, 2, ScatterList.wrap(data),
                        ScatterList.wrap(meta), false));
            } catch (java.io.IOException ex) {
                thrown = ex;
            }
            String why = thrown != null ? String.valueOf(thrown.getMessage())
                    : reply.isSuccess() ? "accepted" : String.valueOf(reply.getException());
            assertTrue(why.contains("refused, PI check failed at lba=6 error=guard"), why);
        }
        peers.awaitConverged();
        for (int i = 0; i < 3; i++) {
            byte[][] now = peers.contents(i);
            assertArrayEquals(before[0], now[0], "data of " + ThreePeers.id(i) + " unchanged");
            assertArrayEquals(before[1], now[1], "metadata of " + ThreePeers.id(i) + " unchanged");
            assertEquals(0, peers.node(i).stats(NAME).refusedWrites(), "no replica saw it: refused before the log");
        }
    }

    private long lastLogIndex(int i) throws java.io.IOException {
        return peers.node(i).server().getDivision(io.pistore.replication.ReplicaPeers.groupId(NAME)).getRaftLog()
                .getLastEntryTermIndex().getIndex();
    }

    @Test
    void aFlushSendsNothingThroughTheLogAndReturnsEvenWithoutAQuorum() throws Exception {
        start();
        int leader = peers.leader();
        int follower = (leader + 1) % 3;
        try (ServedVolume l = new ServedVolume(peers.node(leader), NAME);
                ServedVolume f = new ServedVolume(peers.node(follower), NAME)) {
            byte[] a = random(new Random(8), 2);
            l.device.writeSync(7, ByteBuffer.wrap(a));
            f.device.writeSync(9, ByteBuffer.wrap(a));
            peers.awaitConverged();
            long before = lastLogIndex(leader);
            for (int i = 0; i < 10; i++) {
                l.device.flushSync();
                f.device.flushSync();
            }
            // The writes completed before the flushes were committed, that is forced into a quorum's
            // logs: a flush has nothing left to make durable, and an entry for it would cost a round.
            assertEquals(before, lastLogIndex(leader), "no entry for 20 flushes, through the leader and a follower");
            assertArrayEquals(a, read(l, 9, 2), "the follower's write, read on the leader");
            peers.stop(follower, (leader + 2) % 3);
            l.device.flushSync(); // throws on a failed flush: with no quorum it still has nothing to wait for
            CompletableFuture<Completion> write = l.device.write(3, ScatterList.wrap(random(new Random(9), 1)));
            assertEquals(Status.MEDIA_ERROR, write.get(60, TimeUnit.SECONDS).status(), "a write still needs a quorum");
        }
    }

    @Test
    void twoCompareAndWritesOfOneBlockThroughTwoPeersAtOnceNeverBothWin() throws Exception {
        start();
        int leader = peers.leader();
        Random r = new Random(10);
        try (ReplicatedVolume l = peers.node(leader).open(NAME);
                ReplicatedVolume f = peers.node((leader + 1) % 3).open(NAME)) {
            io.pistore.spi.OrderedCompareAndWrite[] via = {l.orderedCompareAndWrite(), f.orderedCompareAndWrite()};
            byte[][] base = ThreePeers.blocks(FORMAT, r, 5, 2);
            ThreePeers.write(l, 5, base, null);
            byte[] now = base[0];
            for (int round = 0; round < 12; round++) {
                byte[][] a = ThreePeers.blocks(FORMAT, r, 5, 2);
                byte[][] b = ThreePeers.blocks(FORMAT, r, 5, 2);
                // each compares the blocks as they are now: only the one the log orders first may find them so
                CompletableFuture<Long> x = via[round % 2].compareAndWrite(5, 2, now, ScatterList.wrap(a[0]),
                        ScatterList.wrap(a[1]), false, null);
                CompletableFuture<Long> y = via[(round + 1) % 2].compareAndWrite(5, 2, now, ScatterList.wrap(b[0]),
                        ScatterList.wrap(b[1]), false, null);
                long rx = x.get(60, TimeUnit.SECONDS);
                long ry = y.get(60, TimeUnit.SECONDS);
                long w = io.pistore.spi.OrderedCompareAndWrite.WRITTEN;
                assertTrue((rx == w) != (ry == w), "round " + round + ": exactly one wins, not " + rx + " and " + ry);
                byte[] before = now;
                now = rx == w ? a[0] : b[0];
                assertEquals(Arrays.mismatch(before, now), rx == w ? ry : rx,
                        "round " + round + ": the loser says where the blocks differed from what it expected");
            }
            byte[] last = now;
            java.util.concurrent.ExecutionException e = assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> f.orderedCompareAndWrite().compareAndWrite(5, 2, last, ScatterList.wrap(last),
                            ScatterList.wrap(base[1]), false, null).get(60, TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("refused, PI check failed at lba=5"), e.getCause().getMessage());
            peers.awaitConverged();
            for (int i = 0; i < 3; i++) {
                assertArrayEquals(last, Arrays.copyOfRange(peers.contents(i)[0], 5 * FORMAT.dataSize(), 7 * FORMAT.dataSize()),
                        "replica " + ThreePeers.id(i) + " holds the last winner's blocks");
            }
            // the metadata compared too, through the follower: a differing bit under the mask is a difference
            // at its place after the data, one outside it is not
            byte[] tuples = Arrays.copyOfRange(peers.contents(0)[1], 5 * FORMAT.metadataSize(), 7 * FORMAT.metadataSize());
            byte[] other = tuples.clone();
            other[FORMAT.metadataSize() + 3] ^= 1; // the second block's application tag
            byte[] all = {-1, -1, -1, -1, -1, -1, -1, -1};
            byte[] noApp = {-1, -1, 0, 0, -1, -1, -1, -1};
            byte[][] next = ThreePeers.blocks(FORMAT, r, 5, 2);
            assertEquals(2L * FORMAT.dataSize() + FORMAT.metadataSize() + 3, f.orderedCompareAndWrite().compareAndWrite(5, 2, last,
                    other, all, ScatterList.wrap(next[0]), ScatterList.wrap(next[1]), false, null).get(60, TimeUnit.SECONDS));
            assertEquals(io.pistore.spi.OrderedCompareAndWrite.WRITTEN, f.orderedCompareAndWrite().compareAndWrite(5, 2, last,
                    other, noApp, ScatterList.wrap(next[0]), ScatterList.wrap(next[1]), false, null).get(60, TimeUnit.SECONDS));
            byte[] latest = next[0];
            // the leader gone: the follower's next one waits for the new leader, then is decided as before
            peers.stop(leader);
            byte[][] after = ThreePeers.blocks(FORMAT, r, 5, 2);
            assertEquals(io.pistore.spi.OrderedCompareAndWrite.WRITTEN, f.orderedCompareAndWrite().compareAndWrite(5, 2, latest,
                    ScatterList.wrap(after[0]), ScatterList.wrap(after[1]), false, null).get(60, TimeUnit.SECONDS));
            assertEquals(Arrays.mismatch(latest, after[0]), f.orderedCompareAndWrite().compareAndWrite(5, 2, latest,
                    ScatterList.wrap(after[0]), ScatterList.wrap(after[1]), false, null).get(60, TimeUnit.SECONDS),
                    "the same again: now the blocks differ where the new ones do");
        }
    }

    @Test
    void withoutAQuorumWritesAndReadsFailWithAClearStatusInsteadOfHanging() throws Exception {
        start();
        int leader = peers.leader();
        try (ServedVolume s = new ServedVolume(peers.node(leader), NAME)) {
            s.device.writeSync(1, ByteBuffer.wrap(random(new Random(5), 1)));
            peers.stop((leader + 1) % 3, (leader + 2) % 3);
            peers.awaitLeaseLapsed(leader);
            // The write and the read wait out the operation timeout together. A hang guard, not a
            // speed figure: the operation timeout is 4 s.
            CompletableFuture<Completion> write = s.device.write(2, ScatterList.wrap(random(new Random(6), 1)));
            CompletableFuture<Completion> read = s.device.read(1, ScatterList.wrap(new byte[FORMAT.dataSize()]));
            Completion w = write.get(60, TimeUnit.SECONDS);
            assertEquals(Status.MEDIA_ERROR, w.status(), w.toString());
            assertTrue(w.message().contains("volume rv: write lba=2 not committed by a quorum within"), w.message());
            assertTrue(!w.message().contains("\n"), "one line");
            Completion rd = read.get(60, TimeUnit.SECONDS);
            assertEquals(Status.MEDIA_ERROR, rd.status(), rd.toString());
            assertTrue(rd.message().contains("volume rv: read lba=1"), rd.message());
        }
    }
}
