package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.PrivateFiles;
import io.pistore.engine.volume.file.FileVolume;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The entry data log against a plain sorted map of what it must hold, through reopenings, torn tails
 * and bad input; and the state machine's side of it: headers, forcing, refusals.
 */
class EntryDataLogTest {
    /** Small segments, so that records span many files. */
    private static final long SEGMENT = 8 << 10;

    @TempDir
    Path dir;

    private static ByteString bytes(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        // a rope of two pieces, as a batch entry is
        int cut = n / 3;
        return ByteString.copyFrom(b, 0, cut).concat(ByteString.copyFrom(b, cut, n - cut));
    }

    private static void append(EntryDataLog log, long index, ByteString data) throws IOException {
        log.append(index, data, EntryDataLog.crcOf(data));
    }

    private static void assertHolds(TreeMap<Long, ByteString> model, EntryDataLog log, long upTo) throws IOException {
        for (long i = 0; i <= upTo; i++) {
            ByteString want = model.get(i);
            ByteString got = log.read(i);
            if (want == null) {
                assertNull(got, "no record of entry " + i);
            } else {
                assertEquals(want, got, "the data of entry " + i);
            }
        }
        assertEquals(model.isEmpty() ? -1 : model.lastKey(), log.lastIndex(), "the newest entry");
    }

    /**
     * Reusing: emptied files are kept mapped and taken by new segments, their old records behind the
     * new ones; a crash (a second open while the first log still has its files) finds only the new.
     */
    @ParameterizedTest(name = "reuse={0}")
    @ValueSource(booleans = {false, true})
    void randomAppendsTruncationsDropsAndReopeningsKeepWhatAPlainMapKeeps(boolean reuse) throws IOException {
        Random r = new Random(11);
        TreeMap<Long, ByteString> model = new TreeMap<>();
        EntryDataLog log = EntryDataLog.open(dir, SEGMENT, reuse);
        long taken = 0;
        long next = 1;
        long dropped = 0; // entries before this may be gone from the log (whole files dropped)
        try {
            for (int step = 0; step < 3000; step++) {
                int op = r.nextInt(100);
                if (op < 70) {
                    next += r.nextInt(4) == 0 ? 1 + r.nextInt(3) : 0; // gaps: entries without data
                    ByteString d = bytes(r, 1 + r.nextInt(3000));
                    append(log, next, d);
                    model.put(next++, d);
                } else if (op < 80 && next > dropped + 2) {
                    long at = dropped + 1 + (long) r.nextInt((int) (next - dropped - 1));
                    if (r.nextBoolean()) {
                        log.truncate(at);
                    } else { // an entry replaced: appending at it drops it and what follows
                        ByteString d = bytes(r, 1 + r.nextInt(3000));
                        append(log, at, d);
                        model.tailMap(at, true).clear();
                        model.put(at, d);
                        next = at + 1;
                        continue;
                    }
                    model.tailMap(at, true).clear();
                    next = at;
                } else if (op < 85 && next > dropped + 2) {
                    long before = dropped + r.nextInt((int) (next - dropped));
                    log.dropBefore(before);
                    dropped = Math.max(dropped, before);
                    long first = log.firstIndex();
                    Long keep = model.ceilingKey(before);
                    assertTrue(keep == null || first <= keep, "dropped entry " + keep + " at or after " + before
                            + ": the oldest left is " + first);
                    model.headMap(first, false).clear(); // whole files go: some before the cut may stay
                } else if (op < 88) {
                    taken += log.sparesTaken();
                    if (r.nextBoolean()) {
                        log.close();
                        log = EntryDataLog.open(dir, SEGMENT, reuse);
                    } else { // a crash: the files as they are, opened again
                        EntryDataLog crashed = log;
                        log = EntryDataLog.open(dir, SEGMENT, reuse);
                        crashed.close();
                    }
                }
                if (step % 97 == 0) {
                    assertHolds(model, log, next + 2);
                }
            }
            assertHolds(model, log, next + 2);
            taken += log.sparesTaken();
            assertEquals(reuse, taken > 0, "new segments took emptied files: " + taken);
        } finally {
            log.close();
        }
    }

    /**
     * A reused file filled with smaller records than it held before: once full, its old records
     * behind the new ones go, so an open does not take them for a torn tail (which would drop every
     * file after it).
     */
    @Test
    void aReusedFileFilledWithSmallerRecordsKeepsTheFilesAfterItAtOpen() throws IOException {
        Random r = new Random(4);
        TreeMap<Long, ByteString> model = new TreeMap<>();
        try (EntryDataLog log = EntryDataLog.open(dir, SEGMENT, true)) {
            for (long i = 1; i <= 27; i++) { // 1 020 bytes a record, nine to a file: three files
                append(log, i, bytes(r, 1000));
            }
            log.dropBefore(19);
            assertEquals(2, log.spares());
            for (long i = 28; i <= 50; i++) { // 520 bytes a record, sixteen to a file: two spares taken
                ByteString d = bytes(r, 500);
                append(log, i, d);
                model.put(i, d);
            }
            assertEquals(2, log.sparesTaken());
        }
        try (EntryDataLog log = EntryDataLog.open(dir, SEGMENT, true)) {
            assertEquals(50, log.lastIndex(), "the file after the reused one is still there");
            for (long i = 28; i <= 50; i++) {
                assertEquals(model.get(i), log.read(i), "entry " + i);
            }
        }
    }

    /**
     * A record copied into a reused file whose header was not yet stored when the process died: the
     * header there is an old record's, which ends the file at open; the records before it stay.
     */
    @Test
    void inAReusedFileARecordWithoutItsHeaderEndsTheLogAtOpen() throws IOException {
        Random r = new Random(9);
        TreeMap<Long, ByteString> model = new TreeMap<>();
        EntryDataLog log = EntryDataLog.open(dir, SEGMENT, true);
        try {
            for (long i = 1; i <= 30; i++) { // 1 020 bytes a record: nine to a file
                append(log, i, bytes(r, 1000));
            }
            log.dropBefore(20); // the full files before entry 20 become spares
            assertTrue(log.spares() > 0, "spares kept: " + log.spares());
            long offset = 0;
            long i = 31;
            for (; i <= 45; i++) { // 31 to 36 end the current file; then one takes a spare
                ByteString d = bytes(r, 1000);
                append(log, i, d);
                model.put(i, d);
                if (log.sparesTaken() > 0) {
                    offset += 1020;
                }
                if (offset == 3 * 1020) {
                    break;
                }
            }
            assertEquals(1, log.sparesTaken(), "a new file took a spare");
            Path file = dir.resolve("data-" + (i - 2));
            assertTrue(Files.exists(file), file + " holds the records since the spare was taken");
            ByteBuffer old = ByteBuffer.allocate(20);
            try (FileChannel c = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                ByteString d = bytes(r, 1000);
                c.read(old, offset);
                append(log, i + 1, d); // lands at offset: copy the old header back, as a crash would leave it
                c.write(old.flip(), offset);
            }
            assertTrue(old.getInt(0) == 0x50494544, "an old record's header was there");
        } finally {
            EntryDataLog crashed = log;
            log = EntryDataLog.open(dir, SEGMENT, true);
            crashed.close();
        }
        try {
            for (Long k : model.keySet()) { // 31 to 39: the file before and the reused one
                assertEquals(model.get(k), log.read(k), "entry " + k);
            }
            assertEquals(model.lastKey(), log.lastIndex(), "the record without its header is gone");
            assertNull(log.read(model.lastKey() + 1));
        } finally {
            log.close();
        }
    }

    @Test
    void aTornLastRecordIsDroppedAtOpenAndTheRecordsBeforeItStay() throws IOException {
        Random r = new Random(5);
        TreeMap<Long, ByteString> model = new TreeMap<>();
        try (EntryDataLog log = EntryDataLog.open(dir, 1 << 20)) {
            for (long i = 1; i <= 20; i++) {
                ByteString d = bytes(r, 500);
                append(log, i, d);
                model.put(i, d);
            }
        }
        Path file = onlyFile();
        long size = Files.size(file);
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
            c.truncate(size - 100); // the last record loses its end
        }
        model.remove(20L);
        try (EntryDataLog log = EntryDataLog.open(dir, 1 << 20)) {
            assertHolds(model, log, 22);
            ByteString d = bytes(r, 700); // appending goes on after the last whole record
            append(log, 20, d);
            model.put(20L, d);
        }
        try (EntryDataLog log = EntryDataLog.open(dir, 1 << 20)) {
            assertHolds(model, log, 22);
        }
    }

    @Test
    void aRecordWhoseBytesChangedEndsTheLogThereAtOpen() throws IOException {
        Random r = new Random(6);
        TreeMap<Long, ByteString> model = new TreeMap<>();
        try (EntryDataLog log = EntryDataLog.open(dir, 1 << 20)) {
            for (long i = 1; i <= 10; i++) {
                ByteString d = bytes(r, 300);
                append(log, i, d);
                model.put(i, d);
            }
        }
        long at = 7 * (20 + 300) + 20 + 17; // a byte of entry 8's data
        try (FileChannel c = FileChannel.open(onlyFile(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            c.read(b, at);
            c.write(ByteBuffer.wrap(new byte[] {(byte) ~b.get(0)}), at);
        }
        model.tailMap(8L, true).clear();
        try (EntryDataLog log = EntryDataLog.open(dir, 1 << 20)) {
            assertHolds(model, log, 12);
        }
    }

    @Test
    void dataThatFailsItsChecksumIsRefusedAndNothingIsWritten() throws IOException {
        Random r = new Random(7);
        try (EntryDataLog log = EntryDataLog.open(dir, 1 << 20)) {
            ByteString good = bytes(r, 400);
            append(log, 1, good);
            long size = Files.size(onlyFile());
            ByteString d = bytes(r, 400);
            IOException e = assertThrows(IOException.class, () -> log.append(2, d, EntryDataLog.crcOf(d) ^ 1));
            assertTrue(e.getMessage().contains("log entry 2 fails its checksum"), e.getMessage());
            assertEquals(size, Files.size(onlyFile()), "nothing written");
            assertEquals(1, log.lastIndex());
            assertNull(log.read(2));
            assertEquals(good, log.read(1));
        }
    }

    @Test
    void droppingKeepsTheNewestFileAndEveryFileIsTheOwnersAlone() throws IOException {
        Random r = new Random(8);
        try (EntryDataLog log = EntryDataLog.open(dir.resolve("d"), SEGMENT)) {
            for (long i = 1; i <= 40; i++) {
                append(log, i, bytes(r, 1000));
            }
            assertTrue(log.files() > 3, "several files: " + log.files());
            log.dropBefore(1_000);
            assertEquals(1, log.files(), "the newest file stays: appends go on in it");
            assertEquals(40, log.lastIndex());
            assertTrue(log.read(40) != null);
        }
        assertEquals("0700", PrivateFiles.mode(dir.resolve("d")));
        try (Stream<Path> s = Files.list(dir.resolve("d"))) {
            for (Path p : s.toList()) {
                assertEquals("0600", PrivateFiles.mode(p), p.toString());
            }
        }
    }

    @Test
    void theHeaderInTheLogNamesTheDataBesideItAndAChangeIsFound() {
        Random r = new Random(9);
        ByteString d = bytes(r, 4096);
        ByteString h = EntryData.header(d);
        assertTrue(EntryData.isHeader(h));
        assertNull(EntryData.mismatch(h, d));
        byte[] changed = d.toByteArray();
        changed[4000] ^= 1;
        assertTrue(EntryData.mismatch(h, ByteString.copyFrom(changed)).contains("fails its checksum"));
        assertTrue(EntryData.mismatch(h, d.substring(1)).contains("4095 bytes where its header says 4096"));
        // no command's encoding is taken for a header: their first byte is an op code below 32
        for (ReplicaCommand.Op op : ReplicaCommand.Op.values()) {
            assertTrue(op.code < EntryData.CODE, op.toString());
        }
    }

    @Test
    void onADiskAWriteIsDoneOnlyOnceItsRecordIsForcedAndInMemoryNothingIsForced() throws Exception {
        Random r = new Random(10);
        Assumptions.assumeFalse(FileVolume.inMemory(dir), "the temporary directory is on a disk");
        try (EntryData d = EntryData.open(dir.resolve("disk"), 64 << 10)) {
            assertTrue(d.forces());
            for (long i = 1; i <= 5; i++) {
                ByteString b = bytes(r, 5000);
                d.write(i, EntryData.header(b), b).get();
                assertTrue(d.log().allForced(), "entry " + i + " forced before its write was done");
            }
        }
        Path shm = Path.of("/dev/shm");
        Assumptions.assumeTrue(Files.isDirectory(shm) && FileVolume.inMemory(shm), "a tmpfs at /dev/shm");
        Path mem = Files.createTempDirectory(shm, "entry-data-");
        try (EntryData d = EntryData.open(mem, 64 << 10)) {
            assertFalse(d.forces());
            ByteString b = bytes(r, 5000);
            d.write(1, EntryData.header(b), b).get();
            assertFalse(d.log().allForced(), "nothing forced in memory");
            assertEquals(b, d.read(1, EntryData.header(b)));
        } finally {
            io.pistore.testkit.TestFiles.deleteTree(mem);
        }
    }

    @Test
    void dataThatIsNotWhatItsHeaderNamesIsRefusedAndNotKept() throws Exception {
        Random r = new Random(12);
        try (EntryData d = EntryData.open(dir, 64 << 10)) {
            ByteString b = bytes(r, 3000);
            ByteString other = bytes(r, 3000);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> d.write(1, EntryData.header(other), b).get());
            assertTrue(e.getCause().getMessage().contains("log entry 1 fails its checksum"), e.getCause().getMessage());
            e = assertThrows(ExecutionException.class, () -> d.write(1, EntryData.header(b.substring(1)), b).get());
            assertTrue(e.getCause().getMessage().contains("holds 3000 bytes where its header says 2999"),
                    e.getCause().getMessage());
            assertEquals(-1, d.log().lastIndex(), "nothing kept");
            IOException missing = assertThrows(IOException.class, () -> d.read(1, EntryData.header(b)));
            assertTrue(missing.getMessage().contains("no data of log entry 1"), missing.getMessage());
            d.write(1, EntryData.header(b), b).get();
        }
        try (EntryData d = EntryData.open(dir, 64 << 10)) { // from the file now, checked against the header
            ByteString b = d.log().read(1);
            assertEquals(b, d.read(1, EntryData.header(b)));
            IOException wrong = assertThrows(IOException.class, () -> d.read(1, EntryData.header(b.substring(2))));
            assertTrue(wrong.getMessage().contains("where its header says"), wrong.getMessage());
        }
    }

    private Path onlyFile() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> l = s.toList();
            assertEquals(1, l.size(), l.toString());
            return l.get(0);
        }
    }
}
