package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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
import io.pistore.replication.group.GroupMembership;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.replication.volume.ReplicatedVolume;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Snapshots and log purging in a three-replica group in one JVM: snapshots are taken often and the
 * log is purged up to them, so a follower that was down, and a member added later, can only catch up
 * from a snapshot the leader ships; afterwards their replicas equal the leader's and scrub clean.
 */
class SnapshotCatchUpTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "rv";
    private static final long BLOCKS = 256;
    private static final int WRITE_BLOCKS = 16;
    /**
     * A snapshot every 8 entries whatever they carry, purged at once, 1 KiB log segments (an entry's
     * header takes about 70 bytes of the log, its 8 KiB of data lie beside it).
     */
    private static final ReplicationSettings SETTINGS = ThreePeers.SETTINGS.withSnapshotEveryEntries(8)
            .withSnapshotEveryVolumes(0).withPurgeGap(1).withLogSegmentBytes(1 << 10);

    @TempDir
    Path dir;

    private ThreePeers peers;
    private final List<ReplicaNode> extra = new ArrayList<>();
    private final Map<Long, byte[]> acked = new HashMap<>();
    private final Random random = new Random(7);

    @AfterEach
    void stop() throws Exception {
        for (ReplicaNode n : extra) {
            n.close();
        }
        if (peers != null) {
            peers.close();
        }
    }

    /** {@code n} writes of 16 blocks through the leader, each block remembered as acknowledged. */
    private void write(ServedVolume s, int n) throws Exception {
        AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, n, acked);
    }

    private static long logStart(ReplicaNode n) throws IOException {
        return n.server().getDivision(ReplicaPeers.groupId(NAME)).getRaftLog().getStartIndex();
    }

    private static byte[][] contents(ReplicaNode n) throws IOException {
        var v = n.replica(NAME);
        byte[] d = new byte[(int) (BLOCKS * FORMAT.dataSize())];
        byte[] m = new byte[(int) (BLOCKS * FORMAT.metadataSize())];
        v.read(0, (int) BLOCKS, ScatterList.wrap(d), ScatterList.wrap(m));
        return new byte[][] {d, m};
    }

    /** Waits until {@code n} applied as far as the leader has, then checks its replica equals the leader's. */
    private void assertSameAsLeader(ReplicaNode leader, ReplicaNode n) throws IOException {
        long target = leader.appliedIndex(NAME);
        ThreePeers.await(() -> {
            try {
                return n.appliedIndex(NAME) >= target;
            } catch (IOException e) {
                return false;
            }
        }, n.id() + " to apply up to index " + target);
        byte[][] want = contents(leader);
        byte[][] got = contents(n);
        assertArrayEquals(want[0], got[0], "data of " + n.id() + " and the leader " + leader.id());
        assertArrayEquals(want[1], got[1], "metadata of " + n.id() + " and the leader " + leader.id());
        for (Map.Entry<Long, byte[]> e : acked.entrySet()) {
            int lba = e.getKey().intValue();
            byte[] d = Arrays.copyOfRange(got[0], lba * FORMAT.dataSize(), (lba + 1) * FORMAT.dataSize());
            byte[] m = Arrays.copyOfRange(got[1], lba * FORMAT.metadataSize(), (lba + 1) * FORMAT.metadataSize());
            assertArrayEquals(e.getValue(), d, "acknowledged lba " + lba + " on " + n.id());
            PiContext ctx = PiContext.builder(FORMAT).checks(CheckFlags.ALL).initialRefTag(lba).build();
            assertEquals(null, Pi.verify(ctx, ScatterList.wrap(d), ScatterList.wrap(m), 1), "PI of lba " + lba + " on " + n.id());
        }
    }

    private void assertScrubClean(String peerList) throws IOException {
        try (ReplicatedVolume v = ReplicatedVolume.connect(NAME, peerList, SETTINGS, peers.log::add)) {
            ReplicatedVolume.ScrubReport r = v.scrub(x -> { });
            assertEquals(BLOCKS, r.blocks);
            assertTrue(r.clean(), "scrub: bad " + r.badCopies + " unreachable " + r.unreachable);
        }
    }

    /** Waits until the leader purged its log past {@code index}: entries after it are all that is left. */
    private static void awaitPurgedPast(ReplicaNode leader, long index) {
        ThreePeers.await(() -> {
            try {
                return logStart(leader) > index + 1;
            } catch (IOException e) {
                return false;
            }
        }, "the leader " + leader.id() + " to purge its log past index " + index);
    }

    private boolean logSays(String text) {
        return peers.log.stream().anyMatch(l -> l.contains(text));
    }

    private static long snapshotDirs(Path peerDir) throws IOException {
        try (Stream<Path> s = SnapshotListing.walk(peerDir)) {
            return s.filter(p -> p.getFileName().toString().matches("snapshot\\.\\d+_\\d+") && Files.isDirectory(p))
                    .count();
        }
    }

    @Test
    void aFollowerBehindThePurgedLogCatchesUpFromTheLeadersSnapshotAndScrubsClean() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        int l = peers.leader();
        int f = (l + 1) % 3;
        ReplicaNode leader = peers.node(l);
        try (ServedVolume s = new ServedVolume(leader, NAME)) {
            write(s, 4);
            peers.awaitConverged();
            long had = peers.node(f).appliedIndex(NAME);
            peers.stop(f);
            write(s, 80);
            awaitPurgedPast(leader, had);
            assertTrue(snapshotDirs(peers.dir(l)) <= 2, "at most two snapshots kept on the leader");

            peers.restart(f);
            String fid = ThreePeers.id(f);
            ThreePeers.await(() -> logSays("replica " + fid + " restored from the snapshot"),
                    fid + " to be restored from a snapshot");
            // A read of the replica outside the log (a follower read) sees the restore and is not kept.
            assertTrue(peers.node(f).snapshotRestores(NAME) > 0, "the restore is counted");
            assertSameAsLeader(leader, peers.node(f));
            write(s, 10); // ... and it follows the log after the snapshot
            assertSameAsLeader(leader, peers.node(f));
        }
        assertScrubClean(peers.peerList());
    }

    @Test
    void aMemberAddedAfterThePurgeIsBroughtUpFromTheSnapshot() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        int l = peers.leader();
        ReplicaNode leader = peers.node(l);
        try (ServedVolume s = new ServedVolume(leader, NAME)) {
            write(s, 60);
            awaitPurgedPast(leader, 1);
            ReplicaNode n4 = ReplicaNode.start("n4", "127.0.0.1", 0, dir.resolve("n4"), SETTINGS, peers.log::add);
            extra.add(n4);
            GroupMembership.Change add = n4.join(NAME, ReplicaPeers.parse(peers.peerList()), null);
            assertEquals(4, add.after.size());
            ThreePeers.await(() -> logSays("replica n4 restored from the snapshot"), "n4 to be brought up from a snapshot");
            assertSameAsLeader(leader, n4);
            write(s, 10);
            assertSameAsLeader(leader, n4);
            assertScrubClean(ReplicaPeers.describe(add.after));
        }
    }

    /**
     * A restore that a crash cut short: some of the replica's home files replaced, the record not yet
     * moved on (simulated on a stopped follower: its record removed, its data file scrambled). The
     * next start restores the replica from the snapshot again before it is used, then replays the log.
     */
    @Test
    void aRestoreCutShortByACrashIsDoneAgainAtTheNextStart() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, SETTINGS);
        int l = peers.leader();
        int f = (l + 1) % 3;
        ReplicaNode leader = peers.node(l);
        try (ServedVolume s = new ServedVolume(leader, NAME)) {
            write(s, 40);
            peers.awaitConverged();
            String fid = ThreePeers.id(f);
            Path record = ReplicaFiles.record(peers.dir(f).resolve("groups"), NAME);
            ThreePeers.await(() -> {
                try {
                    return Files.exists(record) && snapshotDirs(peers.dir(f)) > 0;
                } catch (IOException e) {
                    return false;
                }
            }, fid + " to take a snapshot");
            peers.stop(f);
            Files.delete(record);
            byte[] junk = new byte[(int) (BLOCKS * FORMAT.dataSize())];
            random.nextBytes(junk);
            Files.write(peers.dir(f).resolve("replicas").resolve(NAME + ".data"), junk, StandardOpenOption.WRITE);

            peers.restart(f);
            ThreePeers.await(() -> logSays("replica " + fid + " restored from the snapshot"), fid + " restored at start");
            assertTrue(Files.readString(record, StandardCharsets.UTF_8).startsWith("index "), "the record is back");
            write(s, 5);
            assertSameAsLeader(leader, peers.node(f));
        }
        assertScrubClean(peers.peerList());
    }
}
