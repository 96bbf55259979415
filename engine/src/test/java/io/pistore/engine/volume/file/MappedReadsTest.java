package io.pistore.engine.volume.file;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where a volume's files are in memory (tmpfs), its data is read out of read-only mappings of the
 * data file, in pieces: reads that cross from one piece to the next, into lists cut anywhere, give
 * what was written (a model of every block), see each write once it completed, and read the same
 * after a reopen; a read after close fails instead of reading the mappings. On a disk the data is
 * read with positional reads.
 */
class MappedReadsTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final int BLOCKS = 200;
    /** Seven blocks' data per mapping: most multi-block reads cross from one to the next. */
    private static final long SEGMENT = 7L * 512;

    @TempDir
    Path disk;

    private static Path tmpfs() throws IOException {
        Path shm = Path.of("/dev/shm");
        Assumptions.assumeTrue(Files.isDirectory(shm) && "tmpfs".equals(Files.getFileStore(shm).type()),
                "no tmpfs at /dev/shm");
        return Files.createTempDirectory(shm, "pistore-mapped-reads");
    }

    private static FileVolume create(Path dir) throws IOException {
        return FileVolume.create(ChannelStorageFile.create(dir.resolve("v.data")),
                ChannelStorageFile.create(dir.resolve("v.meta")), ChannelStorageFile.create(dir.resolve("v.journal")),
                "v", F, BLOCKS, SEGMENT, 1 << 16, FileVolume.ON_A_THREAD);
    }

    /** A list over {@code a} cut into pieces of 1 to 700 bytes. */
    private static ScatterList cut(byte[] a, Random r) {
        java.util.List<java.nio.ByteBuffer> parts = new java.util.ArrayList<>();
        int at = 0;
        while (at < a.length) {
            int n = Math.min(a.length - at, 1 + r.nextInt(700));
            parts.add(java.nio.ByteBuffer.wrap(a, at, n).slice());
            at += n;
        }
        return ScatterList.of(parts.toArray(new java.nio.ByteBuffer[0]));
    }

    /** Zeros over every block, then random writes and reads against a model of every block; returns the model's data. */
    private static byte[] exercise(FileVolume v, Random r) throws IOException {
        byte[] data = new byte[BLOCKS * 512];
        byte[] meta = new byte[BLOCKS * 8];
        for (int lba = 0; lba < BLOCKS; lba += 20) {
            int n = Math.min(20, BLOCKS - lba);
            v.write(lba, n, ScatterList.wrap(new byte[n * 512]), ScatterList.wrap(new byte[n * 8]), false);
        }
        for (int op = 0; op < 600; op++) {
            int n = 1 + r.nextInt(20);
            int lba = r.nextInt(BLOCKS - n + 1);
            if (r.nextInt(3) == 0) {
                byte[] d = new byte[n * 512];
                byte[] m = new byte[n * 8];
                r.nextBytes(d);
                r.nextBytes(m);
                v.write(lba, n, ScatterList.wrap(d), ScatterList.wrap(m), false);
                System.arraycopy(d, 0, data, lba * 512, d.length);
                System.arraycopy(m, 0, meta, lba * 8, m.length);
            } else {
                byte[] d = new byte[n * 512];
                byte[] m = new byte[n * 8];
                v.read(lba, n, cut(d, r), cut(m, r));
                assertArrayEquals(Arrays.copyOfRange(data, lba * 512, (lba + n) * 512), d, "data at " + lba + " + " + n);
                assertArrayEquals(Arrays.copyOfRange(meta, lba * 8, (lba + n) * 8), m, "metadata at " + lba + " + " + n);
            }
        }
        return data;
    }

    @Test
    void onTmpfsTheDataIsReadOutOfMappingsAndMatchesEveryWrite() throws Exception {
        Path dir = tmpfs();
        try {
            FileVolume v = create(dir);
            byte[] model;
            try {
                assertEquals((BLOCKS + 6) / 7, v.dataSegmentsMappedForReads(), "every piece of the data file mapped");
                Random r = new Random(12);
                // blocks never written read as the volume was created: zeros
                byte[] fresh = new byte[BLOCKS * 512];
                v.read(0, BLOCKS, cut(fresh, r), ScatterList.wrap(new byte[BLOCKS * 8]));
                assertArrayEquals(new byte[BLOCKS * 512], fresh);
                model = exercise(v, r);
            } finally {
                v.close();
            }
            IOException closed = assertThrows(IOException.class,
                    () -> v.read(3, 2, ScatterList.wrap(new byte[1024]), ScatterList.wrap(new byte[16])));
            assertEquals("volume v is closed", closed.getMessage());
            assertThrows(IOException.class, () -> v.readMetadata(3, 2, ScatterList.wrap(new byte[16])));
            FileVolume again = FileVolume.open(dir.resolve("v.data"), dir.resolve("v.meta"), dir.resolve("v.journal"),
                    "v", F, BLOCKS, SEGMENT, note -> { });
            try {
                byte[] back = new byte[BLOCKS * 512];
                again.read(0, BLOCKS, ScatterList.wrap(back), ScatterList.wrap(new byte[BLOCKS * 8]));
                assertArrayEquals(model, back, "read back after a reopen");
                assertEquals((BLOCKS + 6) / 7, again.dataSegmentsMappedForReads());
            } finally {
                again.close();
            }
        } finally {
            try (var files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }

    @Test
    void onADiskTheDataIsReadWithPositionalReads() throws Exception {
        Assumptions.assumeFalse(FileVolume.inMemory(disk), "the temporary directory is in memory");
        FileVolume v = create(disk);
        try {
            assertEquals(0, v.dataSegmentsMappedForReads());
            exercise(v, new Random(13));
        } finally {
            v.close();
        }
        IOException closed = assertThrows(IOException.class,
                () -> v.read(0, 1, ScatterList.wrap(new byte[512]), ScatterList.wrap(new byte[8])));
        assertEquals("volume v is closed", closed.getMessage());
    }
}
