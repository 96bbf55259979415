package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.node.ReplicaNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots copied while entries go on being applied: writes are acknowledged while a snapshot's copy
 * is held half done, the copy comes out torn (data of earlier entries, metadata of later ones), and a
 * follower restored from it is whole once it applied the entries the copy overlapped.
 */
class SnapshotBesideApplyingTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "rv";
    private static final long BLOCKS = 256;
    private static final int WRITE_BLOCKS = 16;
    /**
     * Snapshots every 8 entries, purged at once, as in {@link SnapshotCatchUpTest}, each copied as it
     * is taken (as over gRPC; a copy made on demand is copied the same way, {@link SnapshotOnDemandTest}).
     */
    private static final ReplicationSettings SETTINGS = SnapshotCatchUpTest.SETTINGS.withSnapshotCopiedOnDemand(false);

    @TempDir
    Path dir;

    private ThreePeers peers;
    private final Map<Long, byte[]> acked = new HashMap<>();
    private final Random random = new Random(17);
    /** Lets the first copy of each peer go on (after a checkpoint that moves the held writes home). */
    private final CountDownLatch releaseFirst = new CountDownLatch(1);
    /** Lets later copies go on: until then the torn snapshot stays each peer's newest. */
    private final CountDownLatch releaseLater = new CountDownLatch(1);
    private final Set<ReplicaFiles> held = ConcurrentHashMap.newKeySet();

    @AfterEach
    void stop() throws Exception {
        releaseFirst.countDown();
        releaseLater.countDown();
        VolumeSnapshots.betweenCopies = f -> { };
        if (peers != null) {
            peers.close();
        }
    }

    private void holdCopies() {
        Set<ReplicaFiles> seen = ConcurrentHashMap.newKeySet();
        VolumeSnapshots.betweenCopies = files -> {
            try {
                if (seen.add(files)) {
                    held.add(files);
                    releaseFirst.await();
                    // The writes applied while this copy waited go home now: the data file was copied
                    // before them, the metadata file will be copied with them.
                    files.checkpoint();
                } else {
                    releaseLater.await();
                }
            } catch (InterruptedException | IOException e) {
                throw new IllegalStateException("copy held by the test ended: " + e, e);
            }
        };
    }

    private static VolumeStateMachine stateMachine(ReplicaNode n) throws IOException {
        return (VolumeStateMachine) n.server().getDivision(ReplicaPeers.groupId(NAME)).getStateMachine();
    }

    /** The newest complete snapshot directory of a peer, or null. */
    private static Path newestSnapshot(Path peerDir) throws IOException {
        try (Stream<Path> s = SnapshotListing.walk(peerDir)) {
            return s.filter(p -> p.getFileName().toString().matches("snapshot\\.\\d+_\\d+") && Files.isDirectory(p))
                    .max(Comparator.comparingLong(p -> Long.parseLong(p.getFileName().toString().replaceAll(".*_", ""))))
                    .orElse(null);
        }
    }

    private static long snapshotIndex(Path snapshot) {
        return Long.parseLong(snapshot.getFileName().toString().replaceAll(".*_", ""));
    }

    /** The index a snapshot's copy is whole at, from its {@code settled} file. */
    private static long settledIndex(Path snapshot) throws IOException {
        return Long.parseLong(Files.readString(snapshot.resolve(VolumeSnapshots.SETTLED)).strip().substring("index ".length()));
    }

    /** Blocks of a snapshot's copy whose PI does not match their data (with the LBA as reference tag). */
    private static int tornBlocks(Path snapshot) throws IOException {
        byte[] d = Files.readAllBytes(snapshot.resolve(VolumeSnapshots.DATA));
        byte[] m = Files.readAllBytes(snapshot.resolve(VolumeSnapshots.META));
        int torn = 0;
        for (int lba = 0; lba < BLOCKS; lba++) {
            PiContext ctx = PiContext.builder(FORMAT).checks(CheckFlags.ALL).initialRefTag(lba).build();
            ScatterList data = ScatterList.of(java.nio.ByteBuffer.wrap(d, lba * FORMAT.dataSize(), FORMAT.dataSize()));
            ScatterList meta = ScatterList.of(java.nio.ByteBuffer.wrap(m, lba * FORMAT.metadataSize(), FORMAT.metadataSize()));
            if (Pi.verify(ctx, data, meta, 1) != null) {
                torn++;
            }
        }
        return torn;
    }

    @Test
    void writesGoOnWhileASnapshotCopiesAndAFollowerRestoredFromItsTornCopyEndsWhole() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        int l = peers.leader();
        int f = (l + 1) % 3;
        ReplicaNode leader = peers.node(l);
        try (ServedVolume s = new ServedVolume(leader, NAME)) {
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 4, acked);
            peers.awaitConverged();
            long had = peers.node(f).appliedIndex(NAME);
            peers.stop(f);
            // Past a few snapshots taken whole, so the held one lies well past what the follower has.
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 24, acked);

            holdCopies();
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 10, acked);
            ThreePeers.await(() -> held.size() == 2, "both running peers to start a snapshot copy");
            Path before = newestSnapshot(peers.dir(l)); // taken whole before the hold: not the held one
            long beforeIndex = before == null ? -1 : snapshotIndex(before);
            // Applying goes on beside the held copies: these writes are acknowledged by a quorum of two.
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 30, acked);
            assertTrue(stateMachine(leader).isCopying(), "the leader's copy was under way all along");
            releaseFirst.countDown();

            ThreePeers.await(() -> {
                try {
                    Path n = newestSnapshot(peers.dir(l));
                    return n != null && snapshotIndex(n) > beforeIndex;
                } catch (IOException e) {
                    return false;
                }
            }, "the leader's held snapshot, which overlapped later entries, to be done");
            Path snapshot = newestSnapshot(peers.dir(l));
            long index = snapshotIndex(snapshot);
            assertTrue(tornBlocks(snapshot) > 0, "blocks of the copy hold data and PI of two different entries");

            // The next entries let Ratis see the snapshot and purge the log the stopped follower needs.
            ThreePeers.await(() -> {
                try {
                    AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 1, acked);
                    return ReplicaCompare.logStart(leader, NAME) > had + 1;
                } catch (Exception e) {
                    return false;
                }
            }, "the leader to purge its log past index " + had);
            assertEquals(snapshot, newestSnapshot(peers.dir(l)), "the torn snapshot is still the newest");

            peers.restart(f);
            String fid = ThreePeers.id(f);
            ThreePeers.await(() -> peers.log.stream().anyMatch(x -> x.contains("replica " + fid
                    + " restored from the snapshot at index " + index) && x.contains("whole again at index")),
                    fid + " to be restored from the torn snapshot");
            ReplicaCompare.assertSameAsLeader(leader, peers.node(f), NAME, FORMAT, BLOCKS, acked);
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 5, acked);
            ReplicaCompare.assertSameAsLeader(leader, peers.node(f), NAME, FORMAT, BLOCKS, acked);
        }
        releaseLater.countDown();
        ReplicaCompare.assertScrubClean(NAME, BLOCKS, peers.peerList(), SETTINGS, peers.log::add);
    }

    @Test
    void aCopyThatFailsLeavesNoPartCopyAndTheNextOneIsTaken() throws Exception {
        Set<ReplicaFiles> failed = ConcurrentHashMap.newKeySet();
        VolumeSnapshots.betweenCopies = files -> {
            if (failed.add(files)) {
                throw new IllegalStateException("the test fails this copy");
            }
        };
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        int l = peers.leader();
        try (ServedVolume s = new ServedVolume(peers.node(l), NAME)) {
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 40, acked);
            peers.awaitConverged();
        }
        assertEquals(3, failed.size(), "each peer's first copy failed");
        assertTrue(peers.log.stream().anyMatch(x -> x.contains("could not take a snapshot")), "the failure is logged");
        for (int i = 0; i < 3; i++) {
            Path peer = peers.dir(i);
            try (Stream<Path> all = SnapshotListing.walk(peer)) {
                List<String> names = all.map(p -> p.getFileName().toString()).collect(Collectors.toList());
                assertTrue(names.stream().noneMatch(n -> n.startsWith("tmp.")), ThreePeers.id(i) + ": no part copy left: " + names);
            }
            Path newest = newestSnapshot(peer);
            assertTrue(newest != null && settledIndex(newest) >= snapshotIndex(newest),
                    ThreePeers.id(i) + ": a later snapshot was taken whole: " + newest);
        }
    }

    /**
     * A volume grown while a snapshot's copy is held between its data and metadata files: applying the
     * growth cancels the copy (a copy of files about to grow would hold parts of both sizes), so the
     * growth never waits on it; the next snapshots are whole at the new size, and a follower that was
     * down is restored from one, growing first.
     */
    @Test
    void growingCancelsACopyUnderWayAndLaterSnapshotsHoldTheNewSize() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        int l = peers.leader();
        int f = (l + 1) % 3;
        ReplicaNode leader = peers.node(l);
        Set<ReplicaFiles> waiting = ConcurrentHashMap.newKeySet();
        Set<ReplicaFiles> cancelled = ConcurrentHashMap.newKeySet();
        try (ServedVolume s = new ServedVolume(leader, NAME)) {
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 4, acked);
            peers.awaitConverged();
            long had = peers.node(f).appliedIndex(NAME);
            peers.stop(f);
            VolumeSnapshots.betweenCopies = files -> {
                waiting.add(files);
                try {
                    releaseLater.await();
                } catch (InterruptedException e) {
                    cancelled.add(files);
                    throw new IllegalStateException("copy cancelled");
                }
            };
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, 10, acked);
            ThreePeers.await(() -> waiting.size() == 2, "both running peers to hold a copy");
            s.volume.grow(2 * BLOCKS);
            ThreePeers.await(() -> cancelled.size() == 2, "both held copies to be cancelled by the growth");
            releaseLater.countDown(); // copies started since go on
            ThreePeers.await(() -> {
                try {
                    AcknowledgedRuns.write(s, random, FORMAT, 2 * BLOCKS, WRITE_BLOCKS, 1, acked);
                    Path n = newestSnapshot(peers.dir(l));
                    return n != null && Files.size(n.resolve(VolumeSnapshots.DATA)) == 2 * BLOCKS * FORMAT.dataSize()
                            && ReplicaCompare.logStart(leader, NAME) > had + 1;
                } catch (Exception e) {
                    return false;
                }
            }, "a snapshot of the grown volume, and the log the stopped follower needs purged");
            peers.restart(f);
            String fid = ThreePeers.id(f);
            ThreePeers.await(() -> peers.log.stream().anyMatch(x -> x.contains("replica " + fid + " restored from the snapshot")),
                    fid + " to be restored from a snapshot of the grown volume");
            ThreePeers.await(() -> peers.node(f).replica(NAME).blockCount() == 2 * BLOCKS, fid + " to hold the new size");
            AcknowledgedRuns.write(s, random, FORMAT, 2 * BLOCKS, WRITE_BLOCKS, 3, acked);
            ReplicaCompare.assertSameAsLeader(leader, peers.node(f), NAME, FORMAT, 2 * BLOCKS, acked);
        }
        ReplicaCompare.assertScrubClean(NAME, 2 * BLOCKS, peers.peerList(), SETTINGS, peers.log::add);
    }

}
