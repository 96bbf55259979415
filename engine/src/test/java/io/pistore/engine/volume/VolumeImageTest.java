package io.pistore.engine.volume;

import io.pistore.engine.volume.file.VolumeFiles;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A file volume's image: its home files copied ({@code copyHomeFiles}) and brought back ({@code restore}). */
class VolumeImageTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final int BLOCKS = 8192; // 4 MiB of data: room for holes in the copy

    @TempDir
    Path dir;

    private static byte[][] contents(Volume v) throws IOException {
        byte[] d = new byte[BLOCKS * FORMAT.dataSize()];
        byte[] m = new byte[BLOCKS * FORMAT.metadataSize()];
        v.read(0, BLOCKS, ScatterList.wrap(d), ScatterList.wrap(m));
        return new byte[][] {d, m};
    }

    private static void write(Volume v, Random r, long lba, int blocks) throws IOException {
        byte[] d = new byte[blocks * FORMAT.dataSize()];
        byte[] m = new byte[blocks * FORMAT.metadataSize()];
        r.nextBytes(d);
        r.nextBytes(m);
        v.write(lba, blocks, ScatterList.wrap(d), ScatterList.wrap(m), false);
    }

    @Test
    void anImageTakenWithBlocksInTheJournalRestoresExactlyThoseBlocksIntoAnotherVolume() throws Exception {
        Random r = new Random(3);
        Path img = Files.createDirectories(dir.resolve("img"));
        byte[][] want;
        try (VolumeStore s = VolumeStore.open(dir.resolve("a"))) {
            Volume a = s.create("a", FORMAT, BLOCKS);
            write(a, r, 0, 16);
            write(a, r, BLOCKS - 4, 4); // blocks at both ends, the middle never written
            want = contents(a); // some of it only in the journal yet: the copy checkpoints first
            s.copyHomeFiles("a", img.resolve("data"), img.resolve("meta"));
            write(a, r, 0, 16); // a later write is not in the image
        }
        assertEquals((long) BLOCKS * FORMAT.dataSize(), Files.size(img.resolve("data")));
        assertEquals((long) BLOCKS * FORMAT.metadataSize(), Files.size(img.resolve("meta")));

        try (VolumeStore s = VolumeStore.open(dir.resolve("b"))) {
            Volume b = s.create("b", FORMAT, BLOCKS);
            write(b, r, 100, 8); // in b's journal: the restore replaces it too
            s.restore("b", img.resolve("data"), img.resolve("meta"));
            byte[][] got = contents(b); // the same Volume object serves the restored blocks
            assertArrayEquals(want[0], got[0], "data");
            assertArrayEquals(want[1], got[1], "metadata");
            write(b, r, 200, 2); // and takes writes afterwards
        }
        try (VolumeStore s = VolumeStore.open(dir.resolve("b"))) {
            byte[][] got = contents(s.get("b"));
            assertArrayEquals(java.util.Arrays.copyOfRange(want[0], 0, 200 * FORMAT.dataSize()),
                    java.util.Arrays.copyOfRange(got[0], 0, 200 * FORMAT.dataSize()), "the restore is durable");
            assertTrue(s.openProblems().isEmpty(), s.openProblems().toString());
        }
        try (var files = Files.list(dir.resolve("b"))) {
            assertFalse(files.anyMatch(p -> p.toString().endsWith(".restore")), "no copy left beside the home files");
        }
    }

    @Test
    void anImageOfTheWrongSizeIsRefusedAndTheVolumeIsUnchanged() throws Exception {
        Random r = new Random(4);
        Path img = Files.createDirectories(dir.resolve("img"));
        try (VolumeStore s = VolumeStore.open(dir.resolve("a"))) {
            Volume a = s.create("a", FORMAT, BLOCKS / 2);
            write(a, r, 0, 4);
            s.copyHomeFiles("a", img.resolve("data"), img.resolve("meta"));
        }
        try (VolumeStore s = VolumeStore.open(dir.resolve("b"))) {
            Volume b = s.create("b", FORMAT, BLOCKS);
            write(b, r, 0, 4);
            byte[][] before = contents(b);
            IOException e = assertThrows(IOException.class, () -> s.restore("b", img.resolve("data"), img.resolve("meta")));
            assertTrue(e.getMessage().contains("bytes, the volume " + (long) BLOCKS * FORMAT.dataSize()), e.getMessage());
            assertThrows(IOException.class, () -> s.restore("b", img.resolve("nothing"), img.resolve("meta")));
            assertArrayEquals(before[0], contents(b)[0]);
            assertThrows(IllegalArgumentException.class, () -> s.restore("c", img.resolve("data"), img.resolve("meta")));
        }
    }

    @Test
    void aSparseCopyKeepsItsHolesAndItsLength() throws Exception {
        Path from = dir.resolve("from");
        byte[] b = new byte[5 << 20];
        b[3 << 20] = 7; // one byte in the fourth MiB, zeros elsewhere, ending in a hole
        Files.write(from, b);
        Path to = dir.resolve("to");
        VolumeFiles.copySparse(from, to);
        assertArrayEquals(b, Files.readAllBytes(to));
    }

    @Test
    void aCopyOfRandomRunsAndZerosIsExact() throws Exception {
        java.util.Random r = new java.util.Random(5);
        for (int round = 0; round < 4; round++) {
            byte[] b = new byte[(3 << 20) + r.nextInt(1 << 20)]; // a last chunk shorter than the rest
            for (int runs = r.nextInt(4); runs >= 0; runs--) {
                int at = r.nextInt(b.length);
                int len = Math.min(b.length - at, 1 + r.nextInt(300_000));
                for (int i = at; i < at + len; i++) {
                    b[i] = (byte) (1 + r.nextInt(255));
                }
            }
            if (round % 2 == 0) {
                b[b.length - 1] = 9; // data up to the very end
            }
            Path from = dir.resolve("random" + round);
            Files.write(from, b);
            Path to = dir.resolve("random" + round + ".copy");
            VolumeFiles.copySparse(from, to);
            assertArrayEquals(b, Files.readAllBytes(to), "round " + round + ", " + b.length + " bytes");
        }
    }
}
