package io.pistore.replication.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.testkit.SmallTmpfs;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A follower whose file system fills up under its Raft log: writes go on through the other two, the
 * follower says why it fell behind, and once there is room it catches up by itself (its group
 * restarted from its files, as Ratis's log worker never recovers from an I/O error) and holds every
 * block the others do. n3's directory is a small tmpfs the test mounts (root only; skipped elsewhere).
 */
class FullLogDiskTest {
    private static final BlockFormat FORMAT = BlockFormat.of(4096, 8);
    private static final String NAME = "rv";
    private static final long BLOCKS = 64;

    @TempDir
    Path dir;

    private ThreePeers peers;
    private Path mounted;

    @AfterEach
    void close() throws Exception {
        if (peers != null) {
            peers.close();
        }
        if (mounted != null) {
            SmallTmpfs.unmount(mounted);
        }
    }

    /** Moves the lead off n3 (its own log failing would cost the group its leader: a follower's is the case here). */
    private void leadOffN3(ServedVolume s, int f) {
        if (peers.leads(2)) {
            ThreePeers.await(() -> {
                try {
                    s.volume.transferLeadership(ThreePeers.id(f));
                } catch (IOException e) {
                    return false;
                }
                return !peers.leads(2);
            }, "the lead to move off n3");
        }
    }

    /** Every acknowledged write reads back through {@code s}. */
    private static void assertAcked(ServedVolume s, Map<Long, byte[]> acked) throws IOException {
        for (Map.Entry<Long, byte[]> e : acked.entrySet()) {
            ByteBuffer b = ByteBuffer.allocate(FORMAT.dataSize());
            s.device.readSync(e.getKey(), b);
            assertArrayEquals(e.getValue(), b.array(), "acknowledged write at lba " + e.getKey());
        }
    }

    /** Once every replica applied all, n3 holds what peer {@code f} does, data and metadata. */
    private void assertN3Equals(int f) throws IOException {
        peers.awaitConverged();
        byte[][] want = peers.contents(f);
        byte[][] got = peers.contents(2);
        assertArrayEquals(want[0], got[0], "n3's data");
        assertArrayEquals(want[1], got[1], "n3's metadata");
    }

    /**
     * Waits until n3 applied as far as peer {@code f}; restarts its serve once if its line asks for
     * that (Ratis failed a start and holds its storage). Returns whether it did.
     */
    private boolean awaitN3CaughtUp(int f) {
        boolean[] restarted = {false};
        ThreePeers.await(() -> {
            try {
                if (!restarted[0] && peers.log.stream().anyMatch(l -> l.startsWith(
                        "volume rv: replica n3 could not start its group again") && l.endsWith("restart this serve to "
                        + "start it (with room on its file system)"))) {
                    restarted[0] = true; // as the line asks: Ratis failed the start and holds its storage here
                    peers.stop(2);
                    peers.restart(2);
                }
                return peers.node(2).appliedIndex(NAME) >= peers.node(f).appliedIndex(NAME);
            } catch (IOException e) {
                return false; // stopped between starts
            }
        }, "n3 to catch up once there is room");
        return restarted[0];
    }

    @Test
    void aFollowerWhoseDiskFillsFallsBehindSaysWhyAndCatchesUpOnceThereIsRoom() throws Exception {
        Path n3 = Files.createDirectories(dir.resolve("n3"));
        // the replica's journal takes two 32 MiB segments on tmpfs; a few MiB more are for the Raft log
        assumeTrue(SmallTmpfs.mount(n3, "size=70M"), "mounting a tmpfs (root only)");
        mounted = n3;
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        int f = peers.leader() == 0 ? 1 : 0;
        Map<Long, byte[]> acked = new HashMap<>();
        Random r = new Random(7);
        try (ServedVolume s = new ServedVolume(peers.node(f), NAME)) {
            leadOffN3(s, f);
            // every write is acknowledged (n1 and n2 are a quorum) while n3's log runs out of room
            for (int round = 0; round < 400 && peers.log.stream().noneMatch(l -> l.contains("could not write its Raft log"));
                    round++) {
                s.writeRandom(0, BLOCKS, r, acked);
            }
            assertTrue(peers.log.stream().anyMatch(l -> l.startsWith("volume rv: replica n3 could not write its Raft log (")
                    && l.contains("No space left on device")), "n3 said why it fell behind: " + peers.log);
            // its first start again comes while the file system is still full (it fails, or its log fails
            // again, and it is tried again later); writes go on meanwhile
            while (peers.log.stream().noneMatch(l -> l.startsWith("volume rv: replica n3 started its group again")
                    || l.startsWith("volume rv: replica n3 could not start its group again"))) {
                s.writeRandom(0, 8, r, acked);
            }
            assertTrue(SmallTmpfs.remount(n3, "size=400M"), "room made");
            s.writeRandom(0, BLOCKS, r, acked);
            boolean restarted = awaitN3CaughtUp(f);
            System.out.println("[full log disk] n3 " + (restarted ? "restarted, as its line asked" : "caught up by itself"));
            assertAcked(s, acked);
        }
        peers.log.stream().filter(l -> l.contains("Raft log")).limit(8)
                .forEach(l -> System.out.println("[full log disk] " + l));
        assertN3Equals(f);
    }

    /**
     * A follower whose replica's file system fills while its log still takes entries: the replica
     * cannot apply a committed entry, so its group stops at once (it differs from the others and must
     * not serve, take a snapshot or record past that entry) and starts again from its files after a
     * pause, while full again and again; once there is room its volume heals, the start applies the
     * log again and n3 holds every block the others do, without a restart of its serve.
     */
    @Test
    void aFollowerWhoseReplicaCannotTakeAnEntryStopsAndCatchesUpOnceThereIsRoom() throws Exception {
        Path replicas = Files.createDirectories(dir.resolve("n3").resolve("replicas"));
        // the journal's two segments on tmpfs and the metadata fit; about 3 MiB of data blocks do
        assumeTrue(SmallTmpfs.mount(replicas, "size=68M"), "mounting a tmpfs (root only)");
        mounted = replicas;
        long blocks = 4096;
        peers = ThreePeers.start(dir, NAME, FORMAT, blocks);
        int f = peers.leader() == 0 ? 1 : 0;
        Map<Long, byte[]> acked = new HashMap<>();
        Random r = new Random(11);
        try (ServedVolume s = new ServedVolume(peers.node(f), NAME)) {
            leadOffN3(s, f);
            long lba = 0;
            while (lba < blocks && peers.log.stream().noneMatch(l -> l.contains("n3 could not apply log entry"))) {
                s.writeRandom(lba, lba + 64, r, acked); // new blocks: each takes room on n3's replica
                lba += 64;
            }
            assertTrue(peers.log.stream().anyMatch(l -> l.startsWith("volume rv: replica n3 could not apply log entry ")
                    && l.contains("No space left on device") && l.contains("its group stops here and starts again from its "
                    + "files in ")), "n3 said why it stopped: " + peers.log);
            s.writeRandom(0, 64, r, acked); // the others go on
            // the status tells a stopped group from a peer down
            ThreePeers.await(() -> io.pistore.replication.group.GroupStatus.of(NAME, peers.peerList(), ThreePeers.SETTINGS)
                    .describe().stream().anyMatch(l -> l.startsWith("n3 ") && l.contains("unreachable: it runs without the "
                            + "group (stopped there after its storage failed, see its log, or never joined)")),
                    "replicas status to show n3 running without its group");
            assertTrue(SmallTmpfs.remount(replicas, "size=200M"), "room made");
            s.writeRandom(0, 64, r, acked);
            boolean restarted = awaitN3CaughtUp(f);
            System.out.println("[full replica disk] n3 " + (restarted ? "restarted, as its line asked" : "caught up by itself"));
            assertAcked(s, acked);
        }
        peers.log.stream().filter(l -> l.contains("n3")).limit(12)
                .forEach(l -> System.out.println("[full replica disk] " + l));
        assertN3Equals(f);
    }
}
