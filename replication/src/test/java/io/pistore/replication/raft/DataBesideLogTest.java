package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.engine.volume.file.FileVolume;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes keep their data beside the Raft log ({@link EntryData}): each peer's log holds headers, its
 * entry data log the bytes; and a peer that was down catches up from a leader that restarted, so
 * that every byte it is sent and applies comes back from the entry data logs on disk, not memory.
 * By default a leader whose log is on a disk keeps the data inside the log.
 */
class DataBesideLogTest {
    private static final BlockFormat FORMAT = BlockFormat.of(4096, 8);
    private static final String NAME = "rv";
    private static final long BLOCKS = 64;

    @TempDir
    Path dir;

    private ThreePeers peers;
    private final Map<Long, byte[]> acked = new HashMap<>();
    private final Random random = new Random(17);

    @AfterEach
    void stop() throws IOException {
        if (peers != null) {
            peers.close();
        }
    }

    private void write(ServedVolume s, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            long lba = random.nextInt((int) BLOCKS);
            byte[] d = new byte[FORMAT.dataSize()];
            random.nextBytes(d);
            s.device.writeSync(lba, ByteBuffer.wrap(d));
            acked.put(lba, d);
        }
    }

    private static long bytesUnder(Path root, String dirName, String prefix) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> Files.isRegularFile(p) && p.getParent().getFileName().toString().equals(dirName)
                    && p.getFileName().toString().startsWith(prefix)).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    private void assertHoldsWhatWasAcknowledged(int i) throws IOException {
        byte[][] got = peers.contents(i);
        for (Map.Entry<Long, byte[]> e : acked.entrySet()) {
            int lba = e.getKey().intValue();
            byte[] d = Arrays.copyOfRange(got[0], lba * FORMAT.dataSize(), (lba + 1) * FORMAT.dataSize());
            byte[] m = Arrays.copyOfRange(got[1], lba * FORMAT.metadataSize(), (lba + 1) * FORMAT.metadataSize());
            assertArrayEquals(e.getValue(), d, "acknowledged lba " + lba + " on " + ThreePeers.id(i));
            PiContext ctx = PiContext.builder(FORMAT).checks(CheckFlags.ALL).initialRefTag(lba).build();
            assertEquals(null, Pi.verify(ctx, ScatterList.wrap(d), ScatterList.wrap(m), 1),
                    "PI of lba " + lba + " on " + ThreePeers.id(i));
        }
    }

    @Test
    void theRaftLogHoldsHeadersAndTheDataLiesBesideIt() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        int l = peers.leader();
        try (ServedVolume s = new ServedVolume(peers.node(l), NAME)) {
            write(s, 128);
        }
        peers.awaitConverged();
        long written = 128L * (FORMAT.dataSize() + FORMAT.metadataSize());
        for (int i = 0; i < 3; i++) {
            long log = bytesUnder(peers.dir(i), "current", "log_");
            long beside = bytesUnder(peers.dir(i), EntryDataLog.DIR, "data-");
            assertTrue(beside >= written, ThreePeers.id(i) + ": " + beside + " bytes beside the log for " + written
                    + " written");
            assertTrue(log * 4 < written, ThreePeers.id(i) + ": the Raft log holds " + log + " bytes for " + written
                    + " written");
            assertHoldsWhatWasAcknowledged(i);
        }
    }

    @Test
    void onADiskTheDefaultKeepsTheDataInsideTheLog() throws Exception {
        Assumptions.assumeFalse(FileVolume.inMemory(dir), "the temporary directory is on a disk");
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS,
                ThreePeers.SETTINGS.withDataBeside(ReplicationSettings.DataBeside.AUTO));
        int l = peers.leader();
        try (ServedVolume s = new ServedVolume(peers.node(l), NAME)) {
            write(s, 32);
        }
        peers.awaitConverged();
        long written = 32L * (FORMAT.dataSize() + FORMAT.metadataSize());
        for (int i = 0; i < 3; i++) {
            assertTrue(bytesUnder(peers.dir(i), "current", "log_") >= written, ThreePeers.id(i) + ": the data in the log");
            assertEquals(0, bytesUnder(peers.dir(i), EntryDataLog.DIR, "data-"), ThreePeers.id(i) + ": nothing beside it");
            assertHoldsWhatWasAcknowledged(i);
        }
    }

    @Test
    void aFollowerThatWasDownCatchesUpFromALeaderThatRestarted() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        int l = peers.leader();
        int f = (l + 1) % 3;
        try (ServedVolume s = new ServedVolume(peers.node(l), NAME)) {
            write(s, 20);
            peers.awaitConverged();
            peers.stop(f);
            write(s, 40); // f misses these
        }
        long target = peers.node(l).appliedIndex(NAME); // the leader answers a write once it applied it
        peers.stop(0, 1, 2); // nothing of the entries' data is left in any memory
        for (int i = 0; i < 3; i++) {
            peers.restart(i);
        }
        // f catches up; the others apply what they had not applied when they stopped
        for (int i = 0; i < 3; i++) {
            int n = i;
            ThreePeers.await(() -> {
                try {
                    return peers.node(n).appliedIndex(NAME) >= target;
                } catch (IOException e) {
                    return false;
                }
            }, ThreePeers.id(n) + " to apply up to index " + target);
        }
        for (int i = 0; i < 3; i++) {
            assertHoldsWhatWasAcknowledged(i);
        }
        assertTrue(peers.log.stream().noneMatch(m -> m.contains("could not apply")), String.join("\n", peers.log));
    }
}
