package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.ViewChangedException;
import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.ThreePeers;
import io.pistore.spi.SharedVolumeState;
import io.pistore.spi.SharedVolumeState.Versioned;
import io.pistore.spi.WriteFence;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shared state of a replicated volume in a three-replica group in one JVM: a change made through
 * any peer is seen by every peer at the same version, and every watcher hears it; a write checked
 * against an older version is refused by every replica, whichever peer it came through, and writes
 * nothing; the state survives a restart and a restore from a snapshot.
 */
class ReplicatedSharedStateTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "sv";
    private static final long BLOCKS = 64;
    private static final long KEY = 0x5a5a;

    @TempDir
    Path dir;

    private ThreePeers peers;
    private final List<ReplicatedVolume> opened = new ArrayList<>();
    private final Random random = new Random(11);

    @AfterEach
    void stop() throws Exception {
        for (ReplicatedVolume v : opened) {
            v.close();
        }
        if (peers != null) {
            peers.close();
        }
    }

    private ReplicatedVolume open(int i) throws Exception {
        ReplicatedVolume v = peers.node(i).open(NAME);
        opened.add(v);
        return v;
    }

    private byte[][] blocks(long lba, int n) {
        return ThreePeers.blocks(FORMAT, random, lba, n);
    }

    private static void write(ReplicatedVolume v, long lba, byte[][] dm, WriteFence f) {
        ThreePeers.write(v, lba, dm, f);
    }

    private static boolean set(SharedVolumeState s, long expected, String value) throws Exception {
        return s.compareAndSet(expected, value.getBytes(StandardCharsets.UTF_8)).get(30, TimeUnit.SECONDS);
    }

    private static String text(Versioned v) {
        return new String(v.value(), StandardCharsets.UTF_8);
    }

    /** Every replica holds {@code kept} at {@code lba}, once each has applied what the leader has. */
    private void assertEveryReplicaHolds(long lba, byte[] kept) throws Exception {
        peers.awaitConverged();
        for (int i = 0; i < 3; i++) {
            byte[][] c = peers.contents(i);
            int from = (int) lba * FORMAT.dataSize();
            assertArrayEquals(kept, Arrays.copyOfRange(c[0], from, from + kept.length), "replica " + ThreePeers.id(i));
        }
    }

    @Test
    void aChangeThroughAFollowerIsSeenEverywhereAndAWriteOfAnOlderViewIsRefusedByEveryReplica() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        int l = peers.leader();
        int f = (l + 1) % 3;
        int o = (l + 2) % 3;
        ReplicatedVolume[] vs = new ReplicatedVolume[3];
        List<List<Versioned>> heard = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            vs[i] = open(i);
            assertSame(vs[i].sharedState(), vs[i].sharedState(), "one shared state per volume");
            List<Versioned> h = new CopyOnWriteArrayList<>();
            vs[i].sharedState().watch(h::add);
            heard.add(h);
            assertEquals(0, vs[i].sharedState().current().version(), "never set");
        }

        assertTrue(set(vs[f].sharedState(), 0, "a"), "a change through a follower");
        Versioned v1 = vs[f].sharedState().current(); // applied here before the change completed
        assertTrue(v1.version() > 0);
        assertEquals("a", text(v1));
        for (int i = 0; i < 3; i++) {
            Versioned there = vs[i].sharedState().awaitVersion(v1.version()).get(30, TimeUnit.SECONDS);
            assertEquals(v1.version(), there.version(), "the same version on " + ThreePeers.id(i));
            assertEquals("a", text(there));
        }
        assertFalse(set(vs[l].sharedState(), 0, "stale"), "a change from a version that is gone");
        assertEquals(v1.version(), vs[l].sharedState().current().version());
        assertTrue(set(vs[o].sharedState(), v1.version(), "b"));
        long v2 = vs[o].sharedState().current().version();
        for (int i = 0; i < 3; i++) { // each peer, once synced, has the change another peer made just before
            Versioned synced = vs[i].sharedState().sync().get(30, TimeUnit.SECONDS);
            assertEquals(v2, synced.version(), "synced on " + ThreePeers.id(i));
            assertEquals(v2, vs[i].sharedState().current().version());
        }
        assertTrue(v2 > v1.version(), "versions only grow");
        for (int i = 0; i < 3; i++) {
            int n = i;
            ThreePeers.await(() -> heard.get(n).size() == 2, "the watchers on " + ThreePeers.id(i) + " to hear both changes");
            assertEquals(List.of(v1.version(), v2), heard.get(i).stream().map(Versioned::version).toList(),
                    "in order, the refused change not heard");
            assertEquals("b", text(heard.get(i).get(1)));
        }

        byte[][] current = blocks(8, 2);
        write(vs[f], 8, current, new WriteFence(KEY, 1, 1, v2 + 1)); // checked against the version now: applied
        for (int via : new int[] {l, f}) {
            CompletionException e = assertThrows(CompletionException.class,
                    () -> write(vs[via], 8, blocks(8, 2), new WriteFence(KEY + 1, 9, 1, v1.version() + 1)));
            assertInstanceOf(ViewChangedException.class, e.getCause(), "through " + ThreePeers.id(via));
            assertTrue(e.getCause().getMessage().contains("version " + v1.version()), e.getCause().getMessage());
        }
        ViewChangedException z = assertThrows(ViewChangedException.class,
                () -> vs[o].writeZeroes(8, 2, false, new WriteFence(KEY + 1, 9, 2, v1.version() + 1)));
        assertTrue(z.getMessage().contains("write-zeroes lba=8"), z.getMessage());
        assertEveryReplicaHolds(8, current[0]);
        long refused = 0;
        for (int i = 0; i < 3; i++) {
            refused += peers.node(i).stats(NAME).viewChangedWrites();
        }
        assertEquals(9, refused, "three refused commands on each of three replicas");
        // the refused writes moved no fence: an older epoch of their stream is still admitted
        byte[][] older = blocks(8, 2);
        write(vs[l], 8, older, new WriteFence(KEY + 1, 1, 1));
        assertEveryReplicaHolds(8, older[0]);

        assertThrows(IllegalArgumentException.class,
                () -> vs[l].sharedState().compareAndSet(v2, new byte[SharedVolumeState.MAX_BYTES + 1]));
        try (ReplicatedVolume outside = ReplicatedVolume.connect(NAME, peers.peerList(), ThreePeers.SETTINGS, peers.log::add)) {
            assertNull(outside.sharedState(), "opened outside the peers: no replica of its own to show it");
        }

        // a restart applies the log again (no snapshot yet) and shows the same state
        peers.stop(f);
        peers.restart(f);
        ReplicatedVolume back = open(f);
        Versioned after = back.sharedState().awaitVersion(v2).get(30, TimeUnit.SECONDS);
        assertEquals(v2, after.version());
        assertEquals("b", text(after));
    }

    @Test
    void aPeerRestoredFromASnapshotHasTheSameStateAndStillRefusesAnOlderView() throws Exception {
        ReplicationSettings settings = ThreePeers.SETTINGS.withSnapshotEveryEntries(8).withSnapshotEveryVolumes(0)
                .withPurgeGap(1).withLogSegmentBytes(1 << 10);
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, settings);
        int l = peers.leader();
        int f = (l + 1) % 3;
        ReplicatedVolume v = open(l);
        assertTrue(set(v.sharedState(), 0, "first"));
        long v1 = v.sharedState().current().version();
        peers.awaitConverged();
        long had = peers.node(f).appliedIndex(NAME);
        peers.stop(f);
        assertTrue(set(v.sharedState(), v1, "second"));
        long v2 = v.sharedState().current().version();
        io.pistore.replication.node.ReplicaNode leader = peers.node(l);
        for (int i = 0; i < 200 && logStart(leader) <= had + 1; i++) {
            write(v, 32, blocks(32, 16), new WriteFence(KEY, 1, i + 1, v2 + 1));
        }
        assertTrue(logStart(leader) > had + 1, "the leader's log purged past index " + had);
        peers.restart(f);
        String fid = ThreePeers.id(f);
        ThreePeers.await(() -> peers.log.stream().anyMatch(x -> x.contains("replica " + fid + " restored from the snapshot")),
                fid + " to be restored from a snapshot");
        ReplicatedVolume restored = open(f);
        Versioned there = restored.sharedState().awaitVersion(v2).get(30, TimeUnit.SECONDS);
        assertEquals(v2, there.version());
        assertEquals("second", text(there));
        byte[][] kept = blocks(4, 1);
        write(v, 4, kept, null);
        CompletionException e = assertThrows(CompletionException.class,
                () -> write(restored, 4, blocks(4, 1), new WriteFence(KEY + 3, 1, 1, v1 + 1)));
        assertInstanceOf(ViewChangedException.class, e.getCause());
        assertEveryReplicaHolds(4, kept[0]);
    }

    private static long logStart(io.pistore.replication.node.ReplicaNode n) throws java.io.IOException {
        return n.server().getDivision(io.pistore.replication.ReplicaPeers.groupId(NAME)).getRaftLog().getStartIndex();
    }
}
