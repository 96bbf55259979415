package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Large writes bound the log by their bytes, not by a count of entries: snapshots come once the
 * data applied reaches the settings' share of the volume (here after the fewest entries allowed,
 * far below the 10 000 a count once asked for), the log is purged up to them and the entry data
 * files before it deleted, and a segment of headers rolls after a bounded amount of data because
 * each header is padded by its data's size.
 */
class SnapshotByBytesTest {
    private static final BlockFormat FORMAT = BlockFormat.of(4096, 8);
    private static final String NAME = "rv";
    private static final long BLOCKS = 256; // 1 MiB: a snapshot is due every 2 MiB of entries
    private static final int WRITE_BLOCKS = 64; // 256 KiB a write, one entry each (one writer)
    private static final int WRITES = 200;
    /** Log segments of 8 KiB: with padded headers each holds the headers of at most 8 MiB of data. */
    private static final long SEGMENT = 8 << 10;
    /** A closed log segment: {@code log_FIRST-LAST}. */
    private static final Pattern CLOSED = Pattern.compile("log_(\\d+)-(\\d+)");

    @TempDir
    Path dir;

    private ThreePeers peers;
    private final Map<Long, byte[]> acked = new HashMap<>();
    private final Random random = new Random(23);

    @AfterEach
    void stop() throws IOException {
        if (peers != null) {
            peers.close();
        }
    }

    @Test
    void headersArePaddedByTheirData() {
        for (int size : new int[] {EntryData.BESIDE_FROM, 4096, 4096 + 64, 256 << 10, (2 << 20) + 17}) {
            ByteString data = ByteString.copyFrom(new byte[size]);
            ByteString h = EntryData.header(data);
            assertEquals(EntryData.HEADER + size / EntryData.DATA_PER_PAD_BYTE, h.size(), "header of " + size + " bytes");
            assertTrue(EntryData.isHeader(h), "a padded header is a header");
            assertEquals(null, EntryData.mismatch(h, data), "the data matches its padded header");
            assertNotNull(EntryData.mismatch(h, ByteString.copyFrom(new byte[size + 1])), "a longer data does not");
        }
    }

    /** {@code n} writes of 256 KiB through the leader, one at a time (so one entry each). */
    private void write(int n) throws Exception {
        try (ServedVolume s = new ServedVolume(peers.node(peers.leader()), NAME)) {
            AcknowledgedRuns.write(s, random, FORMAT, BLOCKS, WRITE_BLOCKS, n, acked);
        }
        peers.awaitConverged();
    }

    private void assertHoldsWhatWasAcknowledged(int i) throws IOException {
        byte[][] got = peers.contents(i);
        for (Map.Entry<Long, byte[]> e : acked.entrySet()) {
            int lba = e.getKey().intValue();
            assertArrayEquals(e.getValue(), Arrays.copyOfRange(got[0], lba * FORMAT.dataSize(),
                    (lba + 1) * FORMAT.dataSize()), ThreePeers.id(i) + ": acknowledged lba " + lba);
        }
    }

    @Test
    void largeWritesAreSnapshottedAndPurgedByTheirBytes() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, ThreePeers.SETTINGS.withLogSegmentBytes(SEGMENT));
        write(WRITES);
        for (int i = 0; i < 3; i++) {
            String who = ThreePeers.id(i);
            long start = peers.node(i).server().getDivision(ReplicaPeers.groupId(NAME)).getRaftLog().getStartIndex();
            assertTrue(start > 0, who + ": the log was purged (" + WRITES + " entries of 256 KiB)");
            List<Path> snapshots = under(peers.dir(i), p -> p.getFileName().toString().startsWith("snapshot.")
                    && Files.isDirectory(p));
            assertEquals(1, snapshots.size(), who + ": one snapshot kept: " + snapshots);
            // data files of 8 MiB (what a segment stands for): those wholly before the log's start as
            // the last drop saw it are gone (drops follow snapshots and applied entries, not the purge)
            List<Path> files = under(peers.dir(i), p -> p.getParent().getFileName().toString().equals(EntryDataLog.DIR)
                    && Files.isRegularFile(p));
            long beside = files.stream().mapToLong(p -> p.toFile().length()).sum();
            long written = WRITES * (long) WRITE_BLOCKS * (FORMAT.dataSize() + FORMAT.metadataSize());
            assertTrue(beside < written * 3 / 4, who + ": " + beside + " bytes beside the log of " + written + " written");
            long oldest = files.stream().mapToLong(p -> Long.parseLong(p.getFileName().toString().substring(5))).min()
                    .orElseThrow();
            long perFile = (SEGMENT * EntryData.DATA_PER_PAD_BYTE) / (WRITE_BLOCKS * (long) FORMAT.dataSize()) + 1;
            assertTrue(oldest > 1 + perFile, who + ": the first data file is gone: " + files);
            assertHoldsWhatWasAcknowledged(i);
        }
    }

    @Test
    void aSegmentOfHeadersStandsForABoundedAmountOfData() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS, ThreePeers.SETTINGS.withLogSegmentBytes(SEGMENT)
                .withSnapshotEveryEntries(1_000_000)); // nothing purged: every segment stays to be looked at
        write(WRITES / 2);
        long entryBytes = (long) WRITE_BLOCKS * (FORMAT.dataSize() + FORMAT.metadataSize());
        long perSegment = SEGMENT * EntryData.DATA_PER_PAD_BYTE / entryBytes + 1;
        for (int i = 0; i < 3; i++) {
            String who = ThreePeers.id(i);
            List<Path> closed = under(peers.dir(i), p -> CLOSED.matcher(p.getFileName().toString()).matches());
            assertTrue(closed.size() >= 2, who + ": closed segments " + closed);
            for (Path p : closed) {
                Matcher m = CLOSED.matcher(p.getFileName().toString());
                assertTrue(m.matches());
                long entries = Long.parseLong(m.group(2)) - Long.parseLong(m.group(1)) + 1;
                assertTrue(entries <= perSegment, who + ": " + p.getFileName() + " holds " + entries
                        + " entries, more than its " + SEGMENT + " bytes of headers stand for (" + perSegment + ")");
            }
            assertHoldsWhatWasAcknowledged(i);
        }
    }

    private static List<Path> under(Path root, java.util.function.Predicate<Path> which) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(which).collect(Collectors.toList());
        }
    }
}
