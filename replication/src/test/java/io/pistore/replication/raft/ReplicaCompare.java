package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.node.ReplicaNode;
import java.io.IOException;
import java.util.Arrays;
import java.util.Map;

/** A replica compared with its leader's and with the writes acknowledged (the snapshot tests' check). */
final class ReplicaCompare {
    private ReplicaCompare() {
    }

    /** The first index in a node's Raft log of volume {@code name} (what purging left). */
    static long logStart(ReplicaNode n, String name) throws IOException {
        return n.server().getDivision(io.pistore.replication.ReplicaPeers.groupId(name)).getRaftLog().getStartIndex();
    }

    /** Scrubs every replica of volume {@code name} through {@code peerList}: every block checked, none bad. */
    static void assertScrubClean(String name, long blocks, String peerList, io.pistore.replication.ReplicationSettings settings,
            java.util.function.Consumer<String> log) throws IOException {
        try (io.pistore.replication.volume.ReplicatedVolume v = io.pistore.replication.volume.ReplicatedVolume.connect(
                name, peerList, settings, log)) {
            io.pistore.replication.volume.ReplicaScrubReport r = v.scrub(x -> { });
            assertEquals(blocks, r.blocks);
            org.junit.jupiter.api.Assertions.assertTrue(r.clean(), "scrub: bad " + r.badCopies + " unreachable " + r.unreachable);
        }
    }

    /** A node's replica of volume {@code name} as stored: data, then metadata. */
    static byte[][] contents(ReplicaNode n, String name, BlockFormat format, long blocks) throws IOException {
        var v = n.replica(name);
        byte[] d = new byte[(int) (blocks * format.dataSize())];
        byte[] m = new byte[(int) (blocks * format.metadataSize())];
        v.read(0, (int) blocks, ScatterList.wrap(d), ScatterList.wrap(m));
        return new byte[][] {d, m};
    }

    /**
     * Waits until {@code n} applied as far as the leader has, then checks its replica equals the
     * leader's, and holds each acknowledged block with PI that passes (the LBA as reference tag).
     */
    static void assertSameAsLeader(ReplicaNode leader, ReplicaNode n, String name, BlockFormat format, long blocks,
            Map<Long, byte[]> acked) throws IOException {
        long target = leader.appliedIndex(name);
        ThreePeers.await(() -> {
            try {
                return n.appliedIndex(name) >= target;
            } catch (IOException e) {
                return false;
            }
        }, n.id() + " to apply up to index " + target);
        byte[][] want = contents(leader, name, format, blocks);
        byte[][] got = contents(n, name, format, blocks);
        assertArrayEquals(want[0], got[0], "data of " + n.id() + " and the leader " + leader.id());
        assertArrayEquals(want[1], got[1], "metadata of " + n.id() + " and the leader " + leader.id());
        for (Map.Entry<Long, byte[]> e : acked.entrySet()) {
            int lba = e.getKey().intValue();
            byte[] d = Arrays.copyOfRange(got[0], lba * format.dataSize(), (lba + 1) * format.dataSize());
            byte[] m = Arrays.copyOfRange(got[1], lba * format.metadataSize(), (lba + 1) * format.metadataSize());
            assertArrayEquals(e.getValue(), d, "acknowledged lba " + lba + " on " + n.id());
            PiContext ctx = PiContext.builder(format).checks(CheckFlags.ALL).initialRefTag(lba).build();
            assertEquals(null, Pi.verify(ctx, ScatterList.wrap(d), ScatterList.wrap(m), 1), "PI of lba " + lba + " on " + n.id());
        }
    }
}
