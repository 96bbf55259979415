package io.pistore.engine.volume.file;

import io.pistore.integrity.UnwrittenBlock;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A file volume reads metadata from a mapping of its metadata file while writes go through the
 * channel: random writes, zeroings and reads, with the mapping cut into small pieces so reads cross
 * them, checked against a model in memory; then again after a reopen with other pieces. Reads of
 * several blocks cross journal records (read a run of blocks at a time) and blocks already home.
 * On tmpfs the data is read out of mappings of the data file too, in the same pieces; on a disk
 * with positional reads. A read after close fails, whatever it would have read from.
 */
class FileVolumeMetadataTest {
    @TempDir
    Path dir;

    @ParameterizedTest
    @CsvSource({"512,8,40", "512,8,8", "4096,16,100", "4096,24,50", "4096,8,1048576"})
    void readsSeeEveryWriteThroughTheMappingAcrossItsPieces(int ds, int ms, long segment) throws IOException {
        readsSeeEveryWrite(dir, ds, ms, segment);
    }

    /** The same where the files are in memory: the data, too, read out of mappings in pieces. */
    @ParameterizedTest
    @CsvSource({"512,8,40", "4096,16,100", "512,8,1048576"})
    void onTmpfsTheDataIsReadThroughMappingsAcrossTheirPiecesToo(int ds, int ms, long segment) throws IOException {
        try (TmpfsDir d = TmpfsDir.create("pistore-mapped-reads")) {
            readsSeeEveryWrite(d.path, ds, ms, segment);
        }
    }

    private static void readsSeeEveryWrite(Path dir, int ds, int ms, long segment) throws IOException {
        BlockFormat f = BlockFormat.of(ds, ms);
        int blocks = 48;
        Path d = dir.resolve("v.data");
        Path m = dir.resolve("v.meta");
        Path j = dir.resolve("v.journal");
        boolean inMemory = FileVolume.inMemory(dir);
        byte[] data = new byte[blocks * ds];
        byte[] meta = new byte[blocks * ms];
        byte[] unwritten = UnwrittenBlock.metadata(f);
        for (int b = 0; b < blocks; b++) {
            System.arraycopy(unwritten, 0, meta, b * ms, ms);
        }
        Random r = new Random(ds * 31L + ms * 7L + segment);
        FileVolume.create(d, m, j, "v", f, blocks, null).close();
        FileVolume v = FileVolume.open(d, m, j, "v", f, blocks, segment, note -> { });
        long dataSegment = Math.max(1, segment / ds) * ds;
        assertEquals(inMemory ? (blocks * ds + dataSegment - 1) / dataSegment : 0, v.dataSegmentsMappedForReads(),
                "every piece of the data file mapped on tmpfs, none on a disk");
        try {
            for (int op = 0; op < 400; op++) {
                int n = 1 + r.nextInt(8);
                int lba = r.nextInt(blocks - n + 1);
                switch (r.nextInt(4)) {
                    case 0, 1 -> {
                        byte[] wd = new byte[n * ds];
                        byte[] wm = new byte[n * ms];
                        r.nextBytes(wd);
                        r.nextBytes(wm);
                        v.write(lba, n, ScatterList.wrap(wd), ScatterList.wrap(wm), false);
                        System.arraycopy(wd, 0, data, lba * ds, wd.length);
                        System.arraycopy(wm, 0, meta, lba * ms, wm.length);
                    }
                    case 2 -> {
                        v.writeZeroes(lba, n, false);
                        java.util.Arrays.fill(data, lba * ds, (lba + n) * ds, (byte) 0);
                        for (int b = lba; b < lba + n; b++) {
                            System.arraycopy(unwritten, 0, meta, b * ms, ms);
                        }
                    }
                    // short reads, and reads to the end that cross several journal records and home blocks
                    default -> check(v, f, lba, r.nextBoolean() ? n : blocks - lba, data, meta, r.nextBoolean());
                }
            }
        } finally {
            v.close();
        }
        FileVolume again = FileVolume.open(d, m, j, "v", f, blocks, segment * 3 + 1, note -> { });
        try {
            check(again, f, 0, blocks, data, meta, true);
        } finally {
            again.close();
        }
        IOException closed = assertThrows(IOException.class, () -> again.read(0, 1, ScatterList.wrap(new byte[ds]),
                ScatterList.wrap(new byte[ms])), "a closed volume refuses reads");
        assertEquals("volume v is closed", closed.getMessage());
        assertThrows(IOException.class, () -> again.readMetadata(0, 1, ScatterList.wrap(new byte[ms])));
    }

    /** Reads {@code n} blocks into heap or direct buffers, the metadata list cut in two, and compares. */
    private static void check(FileVolume v, BlockFormat f, int lba, int n, byte[] data, byte[] meta, boolean direct)
            throws IOException {
        int ds = f.dataSize();
        int ms = f.metadataSize();
        ByteBuffer gd = direct ? ByteBuffer.allocateDirect(n * ds) : ByteBuffer.allocate(n * ds);
        int cut = (n * ms) / 3;
        ByteBuffer gm1 = direct ? ByteBuffer.allocateDirect(cut) : ByteBuffer.allocate(cut);
        ByteBuffer gm2 = direct ? ByteBuffer.allocateDirect(n * ms - cut) : ByteBuffer.allocate(n * ms - cut);
        v.read(lba, n, ScatterList.of(gd), ScatterList.of(gm1, gm2));
        byte[] gotData = new byte[n * ds];
        gd.get(0, gotData);
        byte[] gotMeta = new byte[n * ms];
        gm1.get(0, gotMeta, 0, cut);
        gm2.get(0, gotMeta, cut, n * ms - cut);
        assertArrayEquals(java.util.Arrays.copyOfRange(data, lba * ds, (lba + n) * ds), gotData, "data at " + lba);
        assertArrayEquals(java.util.Arrays.copyOfRange(meta, lba * ms, (lba + n) * ms), gotMeta,
                "metadata at " + lba + " +" + n);
    }
}
