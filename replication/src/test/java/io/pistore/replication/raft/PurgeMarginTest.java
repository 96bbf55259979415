package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.node.ReplicaNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log is purged up to a snapshot only once a quarter of the snapshot interval of entries was
 * applied after it, so a follower that stopped just before a snapshot catches up from the log rather
 * than being sent a whole copy of the volume; past the margin the log is purged as before.
 */
class PurgeMarginTest {
    private static final BlockFormat FORMAT = BlockFormat.of(4096, 8);
    private static final String NAME = "rv";
    /** 1 MiB: a snapshot every 4 MiB of entries (64 writes), purged 1 MiB (16 writes) after it. */
    private static final long BLOCKS = 256;
    private static final int WRITE_BLOCKS = 16; // 64 KiB a write, one entry each (one writer)
    // Log segments of 1 KiB: a handful of padded headers each, so the log is purged close to a snapshot.

    @TempDir
    Path dir;

    private ThreePeers peers;
    private final Map<Long, byte[]> acked = new HashMap<>();
    private final Random random = new Random(29);

    @AfterEach
    void stop() throws IOException {
        if (peers != null) {
            peers.close();
        }
    }

    /** The index of a peer's newest complete snapshot, or -1. */
    private static long newestSnapshot(Path peerDir) throws IOException {
        try (Stream<Path> s = SnapshotListing.walk(peerDir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("snapshot\\.\\d+_\\d+"))
                    .mapToLong(n -> Long.parseLong(n.replaceAll(".*_", ""))).max().orElse(-1);
        }
    }

    @Test
    void aFollowerStoppedJustBeforeASnapshotCatchesUpFromTheLog() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, ThreePeers.SETTINGS.withLogSegmentBytes(1 << 10));
        int l = peers.leader();
        int f = (l + 1) % 3;
        ReplicaNode leader = peers.node(l);
        String fid = ThreePeers.id(f);
        try (ServedVolume s = new ServedVolume(leader, NAME)) {
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 150, acked);
            // On to the next snapshot: the follower stops just after it, a whole interval before the next.
            long before = newestSnapshot(peers.dir(l));
            for (int i = 0; i < 100 && newestSnapshot(peers.dir(l)) == before; i++) {
                AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 1, acked);
            }
            peers.awaitConverged();
            assertTrue(ReplicaCompare.logStart(leader, NAME) > 0, "snapshots were taken and the log purged before");
            long had = peers.node(f).appliedIndex(NAME);
            peers.stop(f);
            // Up to the first snapshot past what the follower has, then a few entries: within the margin.
            for (int i = 0; i < 100 && newestSnapshot(peers.dir(l)) <= had; i++) {
                AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 1, acked);
            }
            long snapshot = newestSnapshot(peers.dir(l));
            assertTrue(snapshot > had, "the leader took a snapshot past index " + had);
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 4, acked);
            assertTrue(ReplicaCompare.logStart(leader, NAME) <= had + 1, "the leader's log still holds what " + fid + " lacks: starts at "
                    + ReplicaCompare.logStart(leader, NAME) + ", " + fid + " had " + had + ", snapshot at " + snapshot);

            peers.restart(f);
            ThreePeers.await(() -> {
                try {
                    return peers.node(f).appliedIndex(NAME) >= leader.appliedIndex(NAME);
                } catch (IOException e) {
                    return false;
                }
            }, fid + " to catch up");
            assertFalse(peers.log.stream().anyMatch(x -> x.contains("replica " + fid + " restored from the snapshot")),
                    fid + " caught up from the log, not from a snapshot");
            byte[][] want = peers.contents(l);
            byte[][] got = peers.contents(f);
            assertArrayEquals(want[0], got[0], "data of " + fid + " and the leader");
            assertArrayEquals(want[1], got[1], "metadata of " + fid + " and the leader");

            // Past the margin the log is purged up to the snapshot as before.
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 30, acked);
            ThreePeers.await(() -> {
                try {
                    return ReplicaCompare.logStart(leader, NAME) > had + 1;
                } catch (IOException e) {
                    return false;
                }
            }, "the leader to purge its log past index " + had + " once the margin was applied after the snapshot at "
                    + snapshot);
        }
    }
}
