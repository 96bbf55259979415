package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local read paths: a volume opened on the peer that leads reads its own replica in process, and
 * one opened on a follower reads its own replica once it has applied the leader's read index; each
 * sees every write acknowledged before the read, whichever peer it went through (a write the leader
 * acknowledged and the follower has not applied yet included); after a leadership change each switches.
 */
class LocalLeaderTest {
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

    private static byte[] read(ServedVolume s, long lba, int blocks) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(blocks * FORMAT.dataSize());
        s.device.readSync(lba, b);
        return b.array();
    }

    @Test
    void theLocalLeaderItsOwnReplicaAndSeesWritesAcknowledgedThroughAnotherPeer() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        int l = peers.leader();
        int f = (l + 1) % 3;
        Random r = new Random(21);
        try (ServedVolume onLeader = new ServedVolume(peers.node(l), NAME);
                ServedVolume onFollower = new ServedVolume(peers.node(f), NAME)) {
            for (int round = 0; round < 20; round++) {
                byte[] a = new byte[4 * FORMAT.dataSize()];
                r.nextBytes(a);
                long lba = 4L * (round % 16);
                onFollower.device.writeSync(lba, ByteBuffer.wrap(a)); // acknowledged: committed by a quorum
                assertArrayEquals(a, read(onLeader, lba, 4), "a read after the acknowledgement sees the write");
                assertArrayEquals(a, read(onFollower, lba, 4));
                byte[] c = new byte[4 * FORMAT.dataSize()];
                r.nextBytes(c);
                onLeader.device.writeSync(lba, ByteBuffer.wrap(c)); // the follower may not have applied it yet
                assertArrayEquals(c, read(onFollower, lba, 4), "a follower's read waits for the leader's read index");
            }
            assertEquals(20, onLeader.volume.localReads(), "every read on the leader came from its own replica");
            assertEquals(0, onFollower.volume.localReads(), "a follower does not lead");
            assertEquals(40, onFollower.volume.followerReads(), "every read on the follower came from its own replica");
            assertEquals(0, onLeader.volume.followerReads());

            // Leadership moves to the follower: the old leader's reads go through Ratis, the new one's are local.
            onFollower.volume.transferLeadership(ThreePeers.id(f));
            ThreePeers.await(() -> peers.leads(f) && !peers.leads(l), ThreePeers.id(f) + " to lead and " + ThreePeers.id(l) + " to step down");
            byte[] b = new byte[FORMAT.dataSize()];
            r.nextBytes(b);
            onLeader.device.writeSync(63, ByteBuffer.wrap(b));
            assertArrayEquals(b, read(onFollower, 63, 1));
            assertArrayEquals(b, read(onLeader, 63, 1));
            assertTrue(onFollower.volume.localReads() >= 1, "the new leader reads its own replica");
            assertEquals(20, onLeader.volume.localReads(), "the old leader no longer reads its own replica as leader");
            assertTrue(onLeader.volume.followerReads() >= 1, "but as a follower, after the new leader's read index");
        }
    }

    /**
     * Reads received before a read index was asked share it; a read received after a write was
     * acknowledged asks again and sees the write, and so does one whose transport gave no time.
     */
    @Test
    void aReadReceivedBeforeAConfirmationSharesItAndOneReceivedLaterAsksAgain() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        int l = peers.leader();
        int f = (l + 1) % 3;
        Random r = new Random(24);
        try (ServedVolume onLeader = new ServedVolume(peers.node(l), NAME);
                ServedVolume onFollower = new ServedVolume(peers.node(f), NAME)) {
            byte[] a = new byte[FORMAT.dataSize()];
            r.nextBytes(a);
            onLeader.device.writeSync(5, ByteBuffer.wrap(a));
            for (int round = 0; round < 10; round++) {
                long received = System.nanoTime();
                long calls = onLeader.volume.readIndexCalls();
                assertArrayEquals(a, onLeader.readReceived(5, received));
                assertEquals(calls + 1, onLeader.volume.readIndexCalls(), "the first read received asks Ratis");
                for (int i = 0; i < 5; i++) {
                    assertArrayEquals(a, onLeader.readReceived(5, received));
                }
                assertEquals(calls + 1, onLeader.volume.readIndexCalls(), "reads received before that call share it");

                byte[] b = new byte[FORMAT.dataSize()];
                r.nextBytes(b);
                onFollower.device.writeSync(5, ByteBuffer.wrap(b)); // acknowledged: committed by a quorum
                byte[] seen = onLeader.readReceived(5, received); // overlaps the write: either copy
                assertTrue(java.util.Arrays.equals(a, seen) || java.util.Arrays.equals(b, seen), "the old or the new copy");
                assertEquals(calls + 1, onLeader.volume.readIndexCalls());
                assertArrayEquals(b, onLeader.readReceived(5, System.nanoTime()), "a read received after the write sees it");
                assertEquals(calls + 2, onLeader.volume.readIndexCalls(), "and asked Ratis again");
                assertArrayEquals(b, onLeader.readReceived(5, 0), "a read without a receive time");
                assertEquals(calls + 3, onLeader.volume.readIndexCalls(), "always asks");
                a = b;
            }
        }
    }

    /**
     * Writes on the peer that leads go into its own log in process; on a follower through the group's
     * client. Leadership then moves while a writer keeps writing on the old leader, one write at a time:
     * every acknowledged write is on every replica afterwards, and the new leader's writes go in process.
     */
    @Test
    void theLeaderPutsItsWritesIntoItsOwnLogAndAWriterOnItLosesNothingWhenLeadershipMoves() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        int l = peers.leader();
        int f = (l + 1) % 3;
        Random r = new Random(22);
        java.util.Map<Long, byte[]> acked = new java.util.concurrent.ConcurrentHashMap<>();
        try (ServedVolume onLeader = new ServedVolume(peers.node(l), NAME);
                ServedVolume onFollower = new ServedVolume(peers.node(f), NAME)) {
            for (int i = 0; i < 10; i++) {
                byte[] a = new byte[FORMAT.dataSize()];
                r.nextBytes(a);
                onLeader.device.writeSync(i, ByteBuffer.wrap(a));
                acked.put((long) i, a);
            }
            assertEquals(10, onLeader.volume.localEntryCount(), "one entry per write, each put into the leader's own log");
            byte[] b = new byte[FORMAT.dataSize()];
            r.nextBytes(b);
            onFollower.device.writeSync(10, ByteBuffer.wrap(b));
            acked.put(10L, b.clone());
            assertEquals(0, onFollower.volume.localEntryCount(), "a follower's writes go through the group's client");

            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
            // counted apart from the map, whose size stops at the blocks written
            java.util.concurrent.atomic.AtomicLong writes = new java.util.concurrent.atomic.AtomicLong();
            Thread writer = new Thread(() -> {
                Random w = new Random(23);
                try {
                    for (long n = 0; !stop.get(); n++) {
                        long lba = 11 + n % 53;
                        byte[] a = new byte[FORMAT.dataSize()];
                        w.nextBytes(a);
                        onLeader.device.writeSync(lba, ByteBuffer.wrap(a));
                        acked.put(lba, a);
                        writes.incrementAndGet();
                    }
                } catch (Throwable t) {
                    failed.set(t);
                }
            });
            writer.start();
            long before = onLeader.volume.localEntryCount();
            ThreePeers.await(() -> onLeader.volume.localEntryCount() > before + 20, "the writer to write in process");
            onFollower.volume.transferLeadership(ThreePeers.id(f));
            ThreePeers.await(() -> peers.leads(f) && !peers.leads(l), ThreePeers.id(f) + " to lead and " + ThreePeers.id(l) + " to step down");
            long movedAt = writes.get();
            ThreePeers.await(() -> writes.get() > movedAt + 20 || failed.get() != null, "the writer to go on through the new leader");
            stop.set(true);
            writer.join();
            assertEquals(null, failed.get(), "every write of the writer was acknowledged");

            long onNew = onFollower.volume.localEntryCount();
            r.nextBytes(b);
            onFollower.device.writeSync(0, ByteBuffer.wrap(b));
            acked.put(0L, b.clone());
            assertEquals(onNew + 1, onFollower.volume.localEntryCount(), "the new leader puts its writes into its own log");
        }
        peers.awaitConverged();
        for (int i = 0; i < 3; i++) {
            var v = peers.node(i).replica(NAME);
            for (java.util.Map.Entry<Long, byte[]> e : acked.entrySet()) {
                byte[] got = new byte[FORMAT.dataSize()];
                v.read(e.getKey(), 1, io.pistore.integrity.ScatterList.wrap(got),
                        io.pistore.integrity.ScatterList.wrap(new byte[FORMAT.metadataSize()]));
                assertArrayEquals(e.getValue(), got, "acknowledged lba " + e.getKey() + " on " + ThreePeers.id(i));
            }
        }
    }

    /** The metadata of {@code n} blocks from a whole read of {@code v}. */
    private static byte[] metadataOfWholeRead(ReplicatedVolume v, long lba, int n) throws Exception {
        byte[] m = new byte[n * FORMAT.metadataSize()];
        v.read(lba, n, ScatterList.wrap(new byte[n * FORMAT.dataSize()]), ScatterList.wrap(m));
        return m;
    }

    /**
     * A read of metadata alone (block status) comes from the peer's own replica after the read index,
     * on the leader and on a follower, and gives what a whole read gives; with follower reads off it
     * goes through the group, read whole. Block status through each peer's device matches the writes.
     */
    @Test
    void metadataAloneComesFromTheOwnReplicaAndMatchesAWholeRead() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        int l = peers.leader();
        int f = (l + 1) % 3;
        Random r = new Random(77);
        try (ServedVolume onLeader = new ServedVolume(peers.node(l), NAME);
                ServedVolume onFollower = new ServedVolume(peers.node(f), NAME)) {
            BitSet written = new BitSet(64);
            for (int i = 0; i < 12; i++) {
                int lba = r.nextInt(60);
                int n = 1 + r.nextInt(4);
                byte[] a = new byte[n * FORMAT.dataSize()];
                r.nextBytes(a);
                (i % 2 == 0 ? onLeader : onFollower).device.writeSync(lba, ByteBuffer.wrap(a));
                written.set(lba, lba + n);
            }
            for (ServedVolume s : new ServedVolume[] {onLeader, onFollower}) {
                long local = s.volume.localReads() + s.volume.followerReads();
                long metadataAlone = s.volume.localMetadataReads();
                for (int k = 0; k < 10; k++) {
                    int lba = r.nextInt(64);
                    int n = 1 + r.nextInt(64 - lba);
                    byte[] alone = new byte[n * FORMAT.metadataSize()];
                    s.volume.readMetadata(lba, n, ScatterList.wrap(alone));
                    assertArrayEquals(metadataOfWholeRead(s.volume, lba, n), alone, "lba " + lba + " + " + n);
                    BitSet unwritten = s.device.unwrittenBlocks(lba, n).get();
                    for (int i = 0; i < n; i++) {
                        assertEquals(!written.get(lba + i), unwritten.get(i), "block " + (lba + i));
                    }
                }
                assertTrue(s.volume.localReads() + s.volume.followerReads() - local >= 30,
                        "each metadata read, whole read and block status came from the own replica");
                assertEquals(20, s.volume.localMetadataReads() - metadataAlone,
                        "ten reads of metadata alone and ten block statuses read no data");
            }
            onFollower.volume.readOwnReplicaWhileFollowing(false);
            long followerReads = onFollower.volume.followerReads();
            long metadataAlone = onFollower.volume.localMetadataReads();
            byte[] alone = new byte[64 * FORMAT.metadataSize()];
            onFollower.volume.readMetadata(0, 64, ScatterList.wrap(alone));
            assertArrayEquals(metadataOfWholeRead(onLeader.volume, 0, 64), alone, "through the group");
            assertEquals(followerReads, onFollower.volume.followerReads(), "not from the follower's own replica");
            assertEquals(metadataAlone, onFollower.volume.localMetadataReads());
        }
    }
}
