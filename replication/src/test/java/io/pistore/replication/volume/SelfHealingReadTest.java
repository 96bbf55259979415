package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockIoException;
import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.spi.Status;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bits flipped in a replica's data file at rest: a read returns the good data from another replica,
 * and the bad copy is rewritten; the same block bad on every replica fails with a PI error at its LBA.
 */
class SelfHealingReadTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "rv";

    @TempDir
    Path dir;

    private ThreePeers peers;

    @AfterEach
    void stop() throws Exception {
        if (peers != null) {
            peers.close();
        }
    }

    /** Flips one bit of block {@code lba}'s data in node {@code i}'s data file; the node must be stopped. */
    private void flip(int i, long lba) throws IOException {
        Path data = peers.dir(i).resolve("replicas").resolve(NAME + ".data");
        try (FileChannel c = FileChannel.open(data, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            long at = lba * FORMAT.dataSize() + 100;
            c.read(b, at);
            b.put(0, (byte) (b.get(0) ^ 0x04)).rewind();
            c.write(b, at);
        }
    }

    /** Writes a non-zero byte into block {@code lba}'s data on peer {@code i} (under its stored PI, whatever it is). */
    private void soil(int i, long lba) throws IOException {
        Path data = peers.dir(i).resolve("replicas").resolve(NAME + ".data");
        try (FileChannel c = FileChannel.open(data, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            c.write(ByteBuffer.wrap(new byte[] {0x5A}), lba * FORMAT.dataSize() + 100);
        }
    }

    private void stopAll() throws IOException {
        peers.stop(0, 1, 2);
    }

    private void restartAll() throws IOException {
        for (int i = 0; i < 3; i++) {
            peers.restart(i);
        }
        peers.awaitConverged();
    }

    @Test
    void aBlockBadOnTheLeaderIsServedFromAGoodReplicaAndRewritten() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        byte[] written = new byte[16 * FORMAT.dataSize()];
        new Random(11).nextBytes(written);
        try (ServedVolume s = new ServedVolume(peers.node(0), NAME)) {
            s.device.writeSync(0, ByteBuffer.wrap(written));
            s.device.flushSync();
        }
        peers.awaitConverged();
        stopAll();
        flip(0, 7);
        restartAll();
        try (ServedVolume s = new ServedVolume(peers.node(1), NAME)) {
            // The read is served by the leader through Ratis (not by this follower's own good replica):
            // make the replica with the bad copy lead.
            s.volume.readOwnReplicaWhileFollowing(false);
            s.volume.transferLeadership(ThreePeers.id(0));
            ThreePeers.await(() -> peers.leader() == 0, "n1 to lead");
            // A read that the leader does not answer within an attempt's time (a loaded machine) is
            // answered by another replica, with its good copy and nothing to heal: read until the leader's
            // copy was the one read (every read returns the good data).
            ThreePeers.await(() -> {
                ByteBuffer back = ByteBuffer.allocate(written.length);
                try {
                    s.device.readSync(0, back);
                } catch (java.io.IOException e) {
                    throw new AssertionError(e);
                }
                assertArrayEquals(written, back.array(), "the client gets the good data");
                return s.volume.healedBlocks() > 0;
            }, "a read served by the leader's replica");
            assertEquals(1, s.volume.healedBlocks());
            assertEquals(0, s.volume.unhealableBlocks());
        }
        peers.awaitConverged();
        assertEquals(1, peers.node(0).stats(NAME).rewrittenBlocks(), "n1's bad copy rewritten");
        assertEquals(0, peers.node(1).stats(NAME).rewrittenBlocks(), "good copies left alone");
        assertEquals(0, peers.node(2).stats(NAME).rewrittenBlocks());
        assertTrue(peers.log.stream().anyMatch(l -> l.startsWith("volume rv lba=7 replica n1 error=guard: read from replica")
                && l.endsWith("bad copy rewritten")), String.join("\n", peers.log));
        byte[][] n1 = peers.contents(0);
        for (int i = 1; i < 3; i++) {
            assertArrayEquals(peers.contents(i)[0], n1[0], "replicas equal again");
        }
    }

    /**
     * The leader's own read of its replica (no Ratis query) finds the bad block through its one-pass
     * check, lists it, serves the good copy and rewrites its own bad one; good reads on either side
     * of it are left alone.
     */
    @Test
    void aBlockBadOnTheLeaderIsHealedByTheLeadersOwnRead() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        byte[] written = new byte[16 * FORMAT.dataSize()];
        new Random(13).nextBytes(written);
        try (ServedVolume s = new ServedVolume(peers.node(0), NAME)) {
            s.device.writeSync(0, ByteBuffer.wrap(written));
            s.device.flushSync();
        }
        peers.awaitConverged();
        stopAll();
        flip(0, 5);
        restartAll();
        try (ServedVolume other = new ServedVolume(peers.node(1), NAME)) {
            other.volume.transferLeadership(ThreePeers.id(0));
            ThreePeers.await(() -> peers.leader() == 0, "n1 to lead");
        }
        try (ServedVolume s = new ServedVolume(peers.node(0), NAME)) {
            ByteBuffer good = ByteBuffer.allocate(4 * FORMAT.dataSize());
            s.device.readSync(0, good);
            assertArrayEquals(java.util.Arrays.copyOfRange(written, 0, 4 * 512), good.array(), "blocks 0-3 as written");
            assertEquals(0, s.volume.healedBlocks(), "good blocks are not healed");
            ByteBuffer back = ByteBuffer.allocate(written.length);
            s.device.readSync(0, back);
            assertArrayEquals(written, back.array(), "the client gets the good data");
            assertEquals(2, s.volume.localReads(), "both reads served by the leader's own replica");
            assertEquals(1, s.volume.healedBlocks());
            assertEquals(0, s.volume.unhealableBlocks());
        }
        peers.awaitConverged();
        assertEquals(1, peers.node(0).stats(NAME).rewrittenBlocks(), "n1's bad copy rewritten");
        assertEquals(0, peers.node(1).stats(NAME).rewrittenBlocks(), "good copies left alone");
        assertTrue(peers.log.stream().anyMatch(l -> l.startsWith("volume rv lba=5 replica n1 error=guard: read from replica")
                && l.endsWith("bad copy rewritten")), String.join("\n", peers.log));
        for (int i = 1; i < 3; i++) {
            assertArrayEquals(peers.contents(i)[0], peers.contents(0)[0], "replicas equal again");
        }
    }

    @Test
    void theSameBlockBadOnEveryReplicaFailsWithAPiErrorAtItsLba() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        byte[] written = new byte[16 * FORMAT.dataSize()];
        new Random(12).nextBytes(written);
        try (ServedVolume s = new ServedVolume(peers.node(0), NAME)) {
            s.device.writeSync(0, ByteBuffer.wrap(written));
        }
        peers.awaitConverged();
        stopAll();
        for (int i = 0; i < 3; i++) {
            flip(i, 9);
        }
        restartAll();
        try (ServedVolume s = new ServedVolume(peers.node(0), NAME)) {
            BlockIoException e = assertThrows(BlockIoException.class, () -> s.device.readSync(8, ByteBuffer.allocate(
                    4 * FORMAT.dataSize())));
            assertEquals(Status.GUARD_CHECK, e.completion().status());
            assertEquals(9, e.completion().errorLba());
            assertEquals(1, s.volume.unhealableBlocks());
            assertEquals(0, s.volume.healedBlocks());
            ByteBuffer other = ByteBuffer.allocate(FORMAT.dataSize());
            s.device.readSync(10, other);
            assertArrayEquals(java.util.Arrays.copyOfRange(written, 10 * 512, 11 * 512), other.array());
        }
        for (int i = 0; i < 3; i++) {
            assertEquals(0, peers.node(i).stats(NAME).rewrittenBlocks(), "nothing rewritten with wrong data");
        }
        assertTrue(peers.log.stream().anyMatch(l -> l.contains("lba=9") && l.endsWith("no replica has a good copy")),
                String.join("\n", peers.log));
    }

    @Test
    void aScrubChecksEveryReplicaRepairsWhatItCanAndReportsWhatNoReplicaHas() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        byte[] written = new byte[16 * FORMAT.dataSize()];
        new Random(13).nextBytes(written);
        try (ServedVolume s = new ServedVolume(peers.node(0), NAME)) {
            s.device.writeSync(0, ByteBuffer.wrap(written));
        }
        peers.awaitConverged();
        stopAll();
        flip(1, 5); // one follower's copy, whoever leads
        flip(2, 6);
        for (int i = 0; i < 3; i++) {
            flip(i, 9);
        }
        restartAll();
        try (ReplicatedVolume v = peers.node(0).open(NAME)) {
            ReplicaScrubReport r = v.scrub(done -> { });
            assertEquals(64, r.blocks);
            assertEquals(java.util.Map.of("n1", 1L, "n2", 2L, "n3", 2L), r.badCopies, "unreachable: " + r.unreachable);
            assertEquals(2, r.repairedCopies, "n2's lba 5 and n3's lba 6");
            assertEquals(java.util.List.of(9L), r.unrepairable);
            peers.awaitConverged();
            ReplicaScrubReport again = v.scrub(done -> { });
            assertEquals(0, again.repairedCopies);
            assertEquals(java.util.Map.of("n1", 1L, "n2", 1L, "n3", 1L), again.badCopies, "only the block no replica had");
            assertEquals(java.util.List.of(9L), again.unrepairable);
        }
        assertEquals(1, peers.node(1).stats(NAME).rewrittenBlocks());
        assertEquals(1, peers.node(2).stats(NAME).rewrittenBlocks());
        assertEquals(0, peers.node(0).stats(NAME).rewrittenBlocks());
        byte[][] n1 = peers.contents(0);
        for (int i = 1; i < 3; i++) {
            assertArrayEquals(n1[0], peers.contents(i)[0], "replicas equal after the scrub (lba 9 flipped alike)");
        }
        assertTrue(peers.log.stream().anyMatch(l -> l.startsWith("volume rv lba=5 replica n2 error=guard: rewritten from")),
                String.join("\n", peers.log));
    }

    /**
     * The unwritten tuple is an escape no PI check looks behind: a never-written block whose data is
     * not zero on every replica (no good copy to heal from) fails at its LBA, and its neighbours read
     * as zeros.
     */
    @Test
    void aNeverWrittenBlockWithDataOnEveryReplicaFailsAtItsLba() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        try (ServedVolume s = new ServedVolume(peers.node(0), NAME)) {
            s.device.writeSync(0, ByteBuffer.wrap(new byte[FORMAT.dataSize()]));
        }
        peers.awaitConverged();
        stopAll();
        for (int i = 0; i < 3; i++) {
            soil(i, 21);
        }
        restartAll();
        try (ServedVolume s = new ServedVolume(peers.node(0), NAME)) {
            BlockIoException e = assertThrows(BlockIoException.class,
                    () -> s.device.readSync(20, ByteBuffer.allocate(2 * FORMAT.dataSize())));
            assertEquals(Status.GUARD_CHECK, e.completion().status(), e.completion().toString());
            assertEquals(21, e.completion().errorLba());
            ByteBuffer other = ByteBuffer.allocate(FORMAT.dataSize());
            s.device.readSync(22, other);
            assertArrayEquals(new byte[FORMAT.dataSize()], other.array(), "a never-written block reads as zeros");
        }
    }
}
