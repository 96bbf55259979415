package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.FencedWriteException;
import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.spi.WriteFence;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Write fencing in a three-replica group in one JVM: a stale copy of a host's write (an older
 * connection's epoch of the same stream) is refused by every replica once a newer one was applied,
 * and still after a follower was restored from a snapshot, and after every peer restarted.
 */
class FencedGroupTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "fv";
    private static final long BLOCKS = 64;
    private static final ReplicationSettings SETTINGS = ThreePeers.SETTINGS.withSnapshotEveryEntries(8)
            .withSnapshotEveryVolumes(0).withPurgeGap(1).withLogSegmentBytes(1 << 10);
    private static final long KEY = 0x5eed;

    @TempDir
    Path dir;

    private ThreePeers peers;
    private final Random random = new Random(5);

    @AfterEach
    void stop() throws Exception {
        if (peers != null) {
            peers.close();
        }
    }

    private byte[][] blocks(long lba, int n) {
        return ThreePeers.blocks(FORMAT, random, lba, n);
    }

    private static void write(ReplicatedVolume v, long lba, byte[][] dm, WriteFence f) {
        ThreePeers.write(v, lba, dm, f);
    }

    /** The stale write is refused with a FencedWriteException, and every replica still holds {@code kept} at {@code lba}. */
    private void assertStaleRefused(ReplicatedVolume v, long lba, byte[][] kept, long epoch) throws Exception {
        CompletionException e = assertThrows(CompletionException.class, () -> write(v, lba, blocks(lba, 2),
                new WriteFence(KEY, epoch)));
        assertInstanceOf(FencedWriteException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("stale copy"), e.getCause().getMessage());
        FencedWriteException z = assertThrows(FencedWriteException.class,
                () -> v.writeZeroes(lba, 2, false, new WriteFence(KEY, epoch)));
        assertTrue(z.getMessage().contains("write-zeroes lba=" + lba), z.getMessage());
        peers.awaitConverged();
        for (int i = 0; i < 3; i++) {
            byte[][] c = peers.contents(i);
            int from = (int) lba * FORMAT.dataSize();
            assertArrayEquals(kept[0], Arrays.copyOfRange(c[0], from, from + kept[0].length),
                    "replica " + ThreePeers.id(i) + " keeps the newer write");
        }
    }

    @Test
    void aStaleCopyIsRefusedByEveryReplicaAndOtherStreamsAndNewerEpochsGoOn() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        try (ReplicatedVolume v = ReplicatedVolume.connect(NAME, peers.peerList(), SETTINGS, peers.log::add)) {
            byte[][] newer = blocks(8, 2);
            write(v, 8, newer, new WriteFence(KEY, 2));
            assertStaleRefused(v, 8, newer, 1);
            byte[][] other = blocks(8, 2);
            write(v, 8, other, new WriteFence(KEY + 1, 1)); // another host stream is not fenced by this one
            byte[][] same = blocks(8, 2);
            write(v, 8, same, new WriteFence(KEY, 2)); // the current connection's writes go on
            write(v, 16, blocks(16, 2), null); // a write without a fence (NBD, iSCSI) is never refused
            long fenced = 0;
            for (int i = 0; i < 3; i++) {
                fenced += peers.node(i).stats(NAME).fencedWrites();
            }
            assertEquals(6, fenced, "two stale commands refused on each of three replicas");
        }
    }

    private static long logStart(io.pistore.replication.node.ReplicaNode n) throws java.io.IOException {
        return n.server().getDivision(io.pistore.replication.ReplicaPeers.groupId(NAME)).getRaftLog().getStartIndex();
    }

    @Test
    void theFencesSurviveASnapshotRestore() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        int l = peers.leader();
        int f = (l + 1) % 3;
        byte[][] newer = blocks(4, 2);
        try (ReplicatedVolume v = ReplicatedVolume.connect(NAME, peers.peerList(), SETTINGS, peers.log::add)) {
            write(v, 4, newer, new WriteFence(KEY, 3));
            peers.awaitConverged();
            long had = peers.node(f).appliedIndex(NAME);
            peers.stop(f);
            // the leader's log is purged past what the follower has: it can only be restored from a snapshot
            io.pistore.replication.node.ReplicaNode leader = peers.node(l);
            for (int i = 0; i < 200 && logStart(leader) <= had + 1; i++) {
                write(v, 32, blocks(32, 16), new WriteFence(KEY + 7, 1));
            }
            assertTrue(logStart(leader) > had + 1, "the leader's log purged past index " + had);
            peers.restart(f);
            String fid = ThreePeers.id(f);
            ThreePeers.await(() -> peers.log.stream().anyMatch(x -> x.contains("replica " + fid + " restored from the snapshot")),
                    fid + " to be restored from a snapshot");
            assertStaleRefused(v, 4, newer, 2);
        }
    }

    /**
     * Every peer stops cleanly and starts again, without a snapshot: the entries its files hold are
     * passed over, not applied again, and their fences still count.
     */
    @Test
    void theFencesSurviveARestartOfEveryPeer() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, ThreePeers.SETTINGS);
        byte[][] newer = blocks(4, 2);
        try (ReplicatedVolume v = ReplicatedVolume.connect(NAME, peers.peerList(), ThreePeers.SETTINGS, peers.log::add)) {
            write(v, 4, newer, new WriteFence(KEY, 3));
            write(v, 20, blocks(20, 2), new WriteFence(KEY + 7, 1));
            peers.awaitConverged();
        }
        peers.stop(0, 1, 2);
        for (int i = 0; i < 3; i++) {
            peers.restart(i);
        }
        peers.readyLeader();
        try (ReplicatedVolume v = ReplicatedVolume.connect(NAME, peers.peerList(), ThreePeers.SETTINGS, peers.log::add)) {
            assertStaleRefused(v, 4, newer, 2);
        }
    }
}
