package io.pistore.engine.volume.file;

import io.pistore.integrity.UnwrittenBlock;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A file volume on real files with a journal so small that its halves swap every few requests and
 * checkpoints run on their own threads, under concurrent writers, readers and flushes: every read
 * sees the last completed write of each block (each writer owns its blocks) and valid PI, across
 * checkpoints that apply blocks and drop their journal entries meanwhile; after a reopen too. Once
 * in the temporary directory (on a disk file system: positional writes), once on tmpfs where there is
 * one (records and checkpoints go through shared mappings). On the disk, the readers of the records
 * (checkpoints, reads) go through read-only mappings of the segments the writer left. Most reads
 * are of 4 blocks, every tenth of 16 or more.
 */
class JournalConcurrencyTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);
    private static final int WRITERS = 3;
    private static final int PER_WRITER = 16;
    private static final int BLOCKS = WRITERS * PER_WRITER;

    @TempDir
    Path dir;

    @Test
    void readsSeeTheNewestBlocksWhileHalvesSwapAndCheckpointsRun() throws Exception {
        exercise(dir);
    }

    @Test
    void theSameThroughMappingsOnTmpfs() throws Exception {
        try (TmpfsDir d = TmpfsDir.create("pistore-journal-test")) {
            try (ChannelStorageFile probe = ChannelStorageFile.create(d.path.resolve("probe"))) {
                probe.truncate(4096);
                assertNotNull(probe.mapReadWrite(0, 4096), "tmpfs files map for writing");
            }
            Files.delete(d.path.resolve("probe"));
            exercise(d.path);
        }
    }

    private void exercise(Path dir) throws Exception {
        FileVolume v = FileVolume.create(ChannelStorageFile.create(dir.resolve("v.data")),
                ChannelStorageFile.create(dir.resolve("v.meta")), ChannelStorageFile.create(dir.resolve("v.journal")),
                "v", F, BLOCKS, 1 << 20, 48 * 1024, FileVolume.ON_A_THREAD);
        byte[][] model = new byte[BLOCKS][];
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS + 1);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int first = w * PER_WRITER;
                Random r = new Random(w);
                work.add(pool.submit(() -> {
                    for (int op = 0; op < 1500; op++) {
                        int n = 1 + r.nextInt(3);
                        int lba = first + r.nextInt(PER_WRITER - n + 1);
                        byte[][] b = blocks(r, lba, n);
                        v.write(lba, n, ScatterList.wrap(b[0]), ScatterList.wrap(b[1]), r.nextInt(50) == 0);
                        for (int i = 0; i < n; i++) {
                            model[lba + i] = Arrays.copyOfRange(b[0], i * 4096, (i + 1) * 4096);
                        }
                        if (r.nextInt(40) == 0) {
                            v.flush();
                        }
                        int at = first + r.nextInt(PER_WRITER);
                        byte[] d = new byte[4096];
                        byte[] m = new byte[8];
                        v.read(at, 1, ScatterList.wrap(d), ScatterList.wrap(m));
                        if (model[at] != null) {
                            assertArrayEquals(model[at], d, "block " + at + " after op " + op);
                        }
                    }
                    return null;
                }));
            }
            work.add(pool.submit(() -> {
                Random r = new Random(99);
                for (int op = 0; op < 3000; op++) {
                    // every tenth read is of 16 blocks or more: runs of records and home blocks mixed
                    int n = op % 10 == 0 ? 16 + r.nextInt(BLOCKS - 15) : 4;
                    int lba = r.nextInt(BLOCKS - n + 1);
                    byte[] d = new byte[n * 4096];
                    byte[] m = new byte[n * 8];
                    v.read(lba, n, ScatterList.wrap(d), ScatterList.wrap(m));
                    assertNull(piError(lba, d, m, n), "blocks from " + lba);
                }
                return null;
            }));
            for (Future<?> f : work) {
                f.get();
            }
            // on a disk, segments the writer left are read through read-only mappings; on tmpfs all
            // records go through read-write ones
            boolean inMemory = FileVolume.inMemory(dir);
            assertEquals(inMemory, v.journalSegmentsMappedForReads() == 0,
                    v.journalSegmentsMappedForReads() + " segments mapped for reads, in memory: " + inMemory);
            assertEquals(inMemory, v.dataSegmentsMappedForReads() > 0, "the data read out of mappings on tmpfs only");
        } finally {
            pool.shutdownNow();
            v.close();
        }
        FileVolume again = FileVolume.open(dir.resolve("v.data"), dir.resolve("v.meta"), dir.resolve("v.journal"), "v",
                F, BLOCKS, null, note -> { });
        try {
            byte[] d = new byte[4096];
            byte[] m = new byte[8];
            for (int b = 0; b < BLOCKS; b++) {
                again.read(b, 1, ScatterList.wrap(d), ScatterList.wrap(m));
                if (model[b] != null) {
                    assertArrayEquals(model[b], d, "block " + b + " after reopening");
                }
                assertEquals(null, piError(b, d, m, 1));
            }
        } finally {
            again.close();
        }
    }

    private static byte[][] blocks(Random r, int lba, int n) {
        byte[] d = new byte[n * 4096];
        byte[] m = new byte[n * 8];
        r.nextBytes(d);
        Pi.generate(PiContext.builder(F).initialRefTag(lba).build(), ScatterList.wrap(d), ScatterList.wrap(m), n);
        return new byte[][] {d, m};
    }

    /** The first PI error among {@code n} blocks from {@code lba}; unwritten blocks must hold zeros. */
    private static PiError piError(int lba, byte[] d, byte[] m, int n) {
        for (int i = 0; i < n; i++) {
            ScatterList bd = ScatterList.wrap(Arrays.copyOfRange(d, i * 4096, (i + 1) * 4096));
            ScatterList bm = ScatterList.wrap(Arrays.copyOfRange(m, i * 8, (i + 1) * 8));
            PiError e = UnwrittenBlock.isUnwritten(F, UnwrittenBlock.metadata(F), m, i * 8)
                    ? UnwrittenBlock.firstDataError(F, bd, bm, 1)
                    : Pi.verify(PiContext.builder(F).initialRefTag(lba + i).build(), bd, bm, 1);
            if (e != null) {
                return e;
            }
        }
        return null;
    }
}
