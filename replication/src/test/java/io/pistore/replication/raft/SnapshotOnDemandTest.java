package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.server.storage.StorageImplUtils;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.util.SizeInBytes;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots copied on demand (the default over pistore's peer RPC): a snapshot is a checkpoint and a
 * few small files, a peer keeps no copy of its volume until a follower needs one; the leader then
 * copies it while its appender goes on beating (the follower never loses its leader while it waits),
 * and the follower is restored from that copy. A copy a crash interrupted is dropped at the next start.
 */
class SnapshotOnDemandTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "rv";
    private static final long BLOCKS = 256;
    private static final int WRITE_BLOCKS = 16;
    private static final ReplicationSettings SETTINGS = SnapshotCatchUpTest.SETTINGS.withSnapshotCopiedOnDemand(true);

    @TempDir
    Path dir;

    private ThreePeers peers;
    private final Map<Long, byte[]> acked = new HashMap<>();
    private final Random random = new Random(23);
    private final CountDownLatch release = new CountDownLatch(1);

    @AfterEach
    void stop() throws Exception {
        release.countDown();
        VolumeSnapshots.betweenCopies = f -> { };
        if (peers != null) {
            peers.close();
        }
    }

    /** The snapshot directories of a peer, newest last. */
    private static List<Path> snapshots(Path peerDir) throws IOException {
        try (Stream<Path> s = SnapshotListing.walk(peerDir)) {
            return s.filter(p -> p.getFileName().toString().matches("snapshot\\.\\d+_\\d+") && Files.isDirectory(p))
                    .sorted(Comparator.comparingLong(p -> Long.parseLong(p.getFileName().toString().replaceAll(".*_", ""))))
                    .toList();
        }
    }

    /** A peer's newest snapshot directory. */
    private static Path newest(Path peerDir) throws IOException {
        List<Path> all = snapshots(peerDir);
        return all.get(all.size() - 1);
    }

    /**
     * Waits for follower {@code f} to be restored from a snapshot, and checks that {@code leader} said
     * it copied one to ship it and that {@code f} equals it.
     */
    private void restoredFromACopy(ReplicaNode leader, int f) throws Exception {
        String fid = ThreePeers.id(f);
        ThreePeers.await(() -> peers.log.stream().anyMatch(x -> x.contains("replica " + fid + " restored from the snapshot")),
                fid + " to be restored from a copy made for it");
        assertTrue(peers.log.stream().anyMatch(x -> x.contains("replica " + leader.id() + " copied the snapshot at index")),
                "the leader says it copied its snapshot to ship it");
        ReplicaCompare.assertSameAsLeader(leader, peers.node(f), NAME, FORMAT, BLOCKS, acked);
    }

    /** {@code writes} more writes through {@code leader}, after which follower {@code f} still equals it. */
    private void equalAfterMoreWrites(ServedVolume s, ReplicaNode leader, int f, int writes) throws Exception {
        AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, writes, acked);
        ReplicaCompare.assertSameAsLeader(leader, peers.node(f), NAME, FORMAT, BLOCKS, acked);
    }

    private static List<String> names(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    /**
     * Writes through {@code leader}, then stops follower {@code f} and writes on until the leader
     * purged its log past what {@code f} holds: it can only catch up from a snapshot.
     */
    private void stopPastThePurge(ServedVolume s, ReplicaNode leader, int f) throws Exception {
        AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 4, acked);
        peers.awaitConverged();
        long had = peers.node(f).appliedIndex(NAME);
        peers.stop(f);
        ThreePeers.await(() -> {
            try {
                AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 1, acked);
                return ReplicaCompare.logStart(leader, NAME) > had + 1;
            } catch (Exception e) {
                return false;
            }
        }, "the leader to purge its log past index " + had);
    }

    @Test
    void aSnapshotHoldsNoCopyUntilAFollowerNeedsOneWhichWaitsForItWithoutLosingItsLeader() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        int l = peers.leader();
        int f = (l + 1) % 3;
        ReplicaNode leader = peers.node(l);
        try (ServedVolume s = new ServedVolume(leader, NAME)) {
            stopPastThePurge(s, leader, f);
            for (int i = 0; i < 3; i++) {
                if (i == f) {
                    continue;
                }
                List<Path> kept = snapshots(peers.dir(i));
                assertFalse(kept.isEmpty(), ThreePeers.id(i) + " took a snapshot");
                for (Path k : kept) {
                    assertEquals(List.of(VolumeSnapshots.ON_DEMAND, WriteFences.FILE, ReplicaSharedState.FILE), names(k),
                            ThreePeers.id(i) + ": a snapshot of small files only, no copy of the volume: " + k);
                }
            }

            AtomicInteger copies = new AtomicInteger();
            VolumeSnapshots.betweenCopies = files -> {
                copies.incrementAndGet();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    throw new IllegalStateException("copy held by the test ended", e);
                }
            };
            String lid = leader.id();
            peers.restart(f);
            ThreePeers.await(() -> copies.get() == 1, "the leader to start copying its snapshot for " + ThreePeers.id(f));
            // While the copy is held, the follower keeps hearing from its leader: its leader and term
            // stay as they are for five of its longest election timeouts (without heartbeats it has
            // no leader, and would start elections).
            var info = peers.node(f).server().getDivision(ReplicaPeers.groupId(NAME)).getInfo();
            long term = peers.node(l).server().getDivision(ReplicaPeers.groupId(NAME)).getInfo().getCurrentTerm();
            List<Object> held = Eventually.steady("the waiting follower's leader and term to stay for five election timeouts",
                    java.time.Duration.ofMillis(5 * 600), java.time.Duration.ofSeconds(30), // ThreePeers: elections after 300-600 ms
                    () -> List.of(String.valueOf(info.getLeaderId()), info.getCurrentTerm()));
            assertEquals(List.of(lid, term), held, "the follower keeps its leader and term while the copy is made");
            assertEquals(1, copies.get(), "the copy was held all along");
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 3, acked); // a quorum of two goes on
            release.countDown();
            restoredFromACopy(leader, f);
            assertEquals(1, copies.get(), "one copy made");
            Path shipped = newest(peers.dir(l));
            assertTrue(names(shipped).contains(VolumeSnapshots.DATA) && !names(shipped).contains(VolumeSnapshots.ON_DEMAND),
                    "the shipped snapshot holds its copy now: " + names(shipped));
            equalAfterMoreWrites(s, leader, f, 5);
        }
        ReplicaCompare.assertScrubClean(NAME, BLOCKS, peers.peerList(), SETTINGS, peers.log::add);
    }

    /**
     * Peers restarted with their log purged up to a snapshot that holds no copy: each starts from its
     * own files and the log after it (nothing restored), and whichever leads then copies the snapshot
     * it found at start for a follower that was down all along.
     */
    @Test
    void peersRestartedOnSnapshotsWithoutCopiesStartFromTheirFilesAndShipACopyLater() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        int l = peers.leader();
        int f = (l + 1) % 3;
        int o = (l + 2) % 3;
        try (ServedVolume s = new ServedVolume(peers.node(l), NAME)) {
            stopPastThePurge(s, peers.node(l), f);
        }
        peers.awaitConverged();
        peers.stop(l, o);
        peers.restart(l);
        peers.restart(o);
        int n = peers.leader();
        assertTrue(peers.log.stream().noneMatch(x -> x.contains("restored from the snapshot")), "nothing restored at start");
        for (int i : new int[] {l, o}) {
            assertTrue(names(newest(peers.dir(i))).contains(VolumeSnapshots.ON_DEMAND),
                    ThreePeers.id(i) + " started on a snapshot without a copy");
        }
        ReplicaNode now = peers.node(n);
        try (ServedVolume s = new ServedVolume(now, NAME)) {
            peers.restart(f);
            restoredFromACopy(now, f);
            equalAfterMoreWrites(s, now, f, 4);
        }
        ReplicaCompare.assertScrubClean(NAME, BLOCKS, peers.peerList(), SETTINGS, peers.log::add);
    }

    /**
     * A volume grown while the copy for a follower is under way: the growth cancels the copy (it
     * never waits on it), the appender asks again, and the second copy, of the grown volume, restores
     * the follower, which applies the growth again over it (nothing to do) and ends equal.
     */
    @Test
    void aGrowthCancelsACopyUnderWayAndTheNextCopyHoldsTheNewSize() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        int l = peers.leader();
        int f = (l + 1) % 3;
        ReplicaNode leader = peers.node(l);
        try (ServedVolume s = new ServedVolume(leader, NAME)) {
            stopPastThePurge(s, leader, f);
            AtomicInteger copies = new AtomicInteger();
            AtomicInteger cancelled = new AtomicInteger();
            VolumeSnapshots.betweenCopies = files -> {
                if (copies.incrementAndGet() == 1) {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        cancelled.incrementAndGet();
                        throw new IllegalStateException("copy cancelled");
                    }
                }
            };
            peers.restart(f);
            String fid = ThreePeers.id(f);
            ThreePeers.await(() -> copies.get() == 1, "the leader to start copying its snapshot for " + fid);
            s.volume.grow(2 * BLOCKS);
            ThreePeers.await(() -> cancelled.get() == 1, "the growth to cancel the copy under way");
            ThreePeers.await(() -> peers.log.stream().anyMatch(x -> x.contains("replica " + fid + " restored from the snapshot")),
                    fid + " to be restored from the next copy");
            assertEquals(2, copies.get(), "copied again once");
            ThreePeers.await(() -> peers.node(f).replica(NAME).blockCount() == 2 * BLOCKS, fid + " to hold the new size");
            AcknowledgedRuns.write(s, random, FORMAT, 2 * BLOCKS, WRITE_BLOCKS, 6, acked);
            ReplicaCompare.assertSameAsLeader(leader, peers.node(f), NAME, FORMAT, 2 * BLOCKS, acked);
        }
        ReplicaCompare.assertScrubClean(NAME, 2 * BLOCKS, peers.peerList(), SETTINGS, peers.log::add);
    }

    /**
     * What a crash leaves of an on-demand copy (parts, or whole files beside the marker) is deleted at
     * the next start, where the snapshot is found without a copy again; a replica whose record says
     * it holds less than such a snapshot cannot be restored from it and says so.
     */
    @Test
    void aCopyACrashInterruptedIsDroppedAtTheNextStart() throws Exception {
        RaftStorage raft = StorageImplUtils.newRaftStorage(dir.resolve("raft").toFile(), SizeInBytes.valueOf(0),
                RaftStorage.StartupOption.FORMAT, RaftServerConfigKeys.Log.CorruptionPolicy.EXCEPTION);
        raft.initialize();
        try (VolumeStore store = VolumeStore.open(dir.resolve("replicas"))) {
            store.create("v", FORMAT, 8);
            VolumeSnapshots snapshots = new VolumeSnapshots();
            snapshots.init(raft);
            ReplicaFiles files = new ReplicaFiles(store, "v", dir.resolve("v.applied"));
            FileListSnapshotInfo taken = snapshots.takeOnDemand(TermIndex.valueOf(1, 22), new byte[0], new byte[0]);
            OnDemandSnapshot lazy = (OnDemandSnapshot) taken;
            assertThrows(IOException.class, () -> VolumeSnapshots.data(lazy), "no copy to restore from");
            assertEquals(22, VolumeSnapshots.settledIndex(lazy));
            Path d = lazy.dir();
            Files.write(d.resolve("data.part"), new byte[4096]);
            Files.write(d.resolve(VolumeSnapshots.DATA), new byte[4096]); // renamed, the marker not yet gone
            Files.write(d.resolve("settled.part"), "index 30\n".getBytes());

            VolumeSnapshots found = new VolumeSnapshots(); // as a restarted peer finds it
            found.init(raft);
            FileListSnapshotInfo s = found.load();
            assertTrue(s instanceof OnDemandSnapshot, "still made on demand: " + s);
            assertEquals(List.of(VolumeSnapshots.ON_DEMAND, WriteFences.FILE, ReplicaSharedState.FILE), names(d),
                    "the part copy is gone");

            found.copyWith(o -> {
                try {
                    return found.copyInto(o, files, () -> 25);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            });
            Path data = s.getFiles().get(0).getPath();
            assertEquals(d.resolve(VolumeSnapshots.DATA), data, "shipping makes the copy, the data first");
            assertEquals(8L * FORMAT.dataSize(), Files.size(data));
            FileListSnapshotInfo now = found.getLatestSnapshot();
            assertFalse(now instanceof OnDemandSnapshot, "the newest snapshot is the copied one");
            assertEquals(25, VolumeSnapshots.settledIndex(now));
            assertNotNull(VolumeSnapshots.meta(now));
            assertFalse(Files.exists(d.resolve(VolumeSnapshots.ON_DEMAND)), "the marker goes last");
        } finally {
            raft.close();
        }
    }
}
