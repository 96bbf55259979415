package io.pistore.engine.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.engine.volume.file.VolumeFiles;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.integrity.UnwrittenBlock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How the metadata file holds metadata: a new volume (manifest version 3) holds it XOR an unwritten
 * block's, so its metadata file starts as a hole on a disk, whatever its size, and every block reads
 * back unwritten; a written block is stored coded and read back as written; a volume of version 2
 * (metadata as it is) still opens, reads, writes and grows as version 2; and images of the home
 * files carry metadata as it is, so one restores into a volume of either version.
 */
class MetadataFileCodingTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    @TempDir
    Path dir;

    /** Bytes the file system allocated to {@code file} ({@code stat}'s 512-byte blocks). */
    private static long allocated(Path file) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("stat", "-c", "%b", file.toString()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        assertEquals(0, p.waitFor(), out);
        return Long.parseLong(out) * 512;
    }

    private static boolean onTmpfs(Path dir) throws IOException {
        return Files.getFileStore(dir).type().equals("tmpfs");
    }

    private static byte[][] read(Volume v, long lba, int blocks) throws IOException {
        byte[] d = new byte[blocks * v.format().dataSize()];
        byte[] m = new byte[blocks * v.format().metadataSize()];
        v.read(lba, blocks, ScatterList.wrap(d), ScatterList.wrap(m));
        return new byte[][] {d, m};
    }

    private static byte[][] write(Volume v, Random r, long lba, int blocks) throws IOException {
        byte[] d = new byte[blocks * v.format().dataSize()];
        byte[] m = new byte[blocks * v.format().metadataSize()];
        r.nextBytes(d);
        r.nextBytes(m);
        v.write(lba, blocks, ScatterList.wrap(d), ScatterList.wrap(m), false);
        return new byte[][] {d, m};
    }

    private static void assertUnwritten(Volume v, long lba, int blocks) throws IOException {
        byte[][] got = read(v, lba, blocks);
        byte[] u = UnwrittenBlock.metadata(v.format());
        assertArrayEquals(new byte[got[0].length], got[0], "zero data at " + lba);
        for (int i = 0; i < blocks; i++) {
            int ms = v.format().metadataSize();
            assertArrayEquals(u, Arrays.copyOfRange(got[1], i * ms, (i + 1) * ms), "unwritten metadata at " + (lba + i));
        }
    }

    @Test
    void aLargeNewVolumesMetadataFileIsAHoleOnADiskAndEveryBlockReadsUnwritten() throws Exception {
        assumeTrue(!onTmpfs(dir), "the test directory is on tmpfs, where the file is filled");
        long blocks = 64L << 21; // 64 GiB of 512-byte blocks: 1 GiB of metadata
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.create("big", F, blocks);
            assertEquals(blocks * 8, Files.size(dir.resolve("big.meta")));
            assertTrue(allocated(dir.resolve("big.meta")) < (1 << 20), "allocated " + allocated(dir.resolve("big.meta")));
            assertUnwritten(v, 0, 64);
            assertUnwritten(v, blocks / 2 - 3, 7);
            assertUnwritten(v, blocks - 64, 64);
            byte[][] w = write(v, new Random(1), blocks - 9, 4);
            v.flush();
            assertArrayEquals(w[1], read(v, blocks - 9, 4)[1]);
        }
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.resize("big", 2 * blocks);
            Volume v = s.get("big");
            assertUnwritten(v, 2 * blocks - 8, 8);
            assertTrue(allocated(dir.resolve("big.meta")) < (1 << 20), "a grown file is a hole too");
        }
        assertTrue(Files.readString(dir.resolve("big.volume")).contains("version=3"));
    }

    @Test
    void inMemoryTheMetadataFileIsFilledWhenMadeAndWhenRestored() throws Exception {
        Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && onTmpfs(shm), "no tmpfs at /dev/shm");
        Path d = Files.createTempDirectory(shm, "pistore-coding-");
        try (VolumeStore s = VolumeStore.open(d)) {
            Volume v = s.create("m", F, 4096);
            assertTrue(allocated(d.resolve("m.meta")) >= 4096 * 8, "mapped reads never meet a hole of a tmpfs file");
            assertUnwritten(v, 0, 4096);
            s.copyHomeFiles("m", d.resolve("img.data"), d.resolve("img.meta"));
            s.create("n", F, 4096);
            s.restore("n", d.resolve("img.data"), d.resolve("img.meta"));
            assertTrue(allocated(d.resolve("n.meta")) >= 4096 * 8, "nor those of a restored one");
            assertUnwritten(s.get("n"), 0, 4096);
        } finally {
            try (var files = Files.list(d)) {
                for (Path p : files.toList()) {
                    Files.delete(p);
                }
            }
            Files.delete(d);
        }
    }

    /** Formats whose unwritten metadata is not zeros (PI first and last, 16-byte tuples), and one without PI. */
    @ParameterizedTest
    @ValueSource(strings = {"512+8", "4096+16", "4096+16 last", "4096+8 none"})
    void writtenZeroedAndUnwrittenBlocksReadBackAcrossReopens(String spec) throws IOException {
        String[] s = spec.split(" ");
        String[] sizes = s[0].split("\\+");
        int ds = Integer.parseInt(sizes[0]);
        int ms = Integer.parseInt(sizes[1]);
        BlockFormat f = s.length > 1 && s[1].equals("none") ? BlockFormat.of(ds, ms, GuardType.CRC16, PiType.TYPE_0,
                PiLocation.FIRST) : ms == 16 ? BlockFormat.of(ds, ms, GuardType.CRC64, PiType.TYPE_1,
                s.length > 1 ? PiLocation.LAST : PiLocation.FIRST) : BlockFormat.of(ds, ms);
        int blocks = 256;
        byte[][] model = new byte[blocks][];
        byte[][] metaModel = new byte[blocks][];
        Random r = new Random(spec.hashCode());
        for (int round = 0; round < 3; round++) {
            try (VolumeStore st = VolumeStore.open(dir)) {
                Volume v = round == 0 ? st.create("v", f, blocks) : st.get("v");
                for (int i = 0; i < 60; i++) {
                    int lba = r.nextInt(blocks - 8);
                    int n = 1 + r.nextInt(8);
                    if (r.nextInt(5) == 0) {
                        v.writeZeroes(lba, n, false);
                        for (int k = 0; k < n; k++) {
                            model[lba + k] = null;
                        }
                    } else {
                        byte[][] w = write(v, r, lba, n);
                        for (int k = 0; k < n; k++) {
                            model[lba + k] = Arrays.copyOfRange(w[0], k * ds, (k + 1) * ds);
                            metaModel[lba + k] = Arrays.copyOfRange(w[1], k * ms, (k + 1) * ms);
                        }
                    }
                }
                v.flush();
                for (int lba = 0; lba < blocks; lba++) {
                    if (model[lba] == null) {
                        assertUnwritten(v, lba, 1);
                    } else {
                        byte[][] got = read(v, lba, 1);
                        assertArrayEquals(model[lba], got[0], "data of " + lba + " in round " + round);
                        assertArrayEquals(metaModel[lba], got[1], "metadata of " + lba + " in round " + round);
                    }
                }
            }
        }
    }

    /** Turns a version-3 volume into the version-2 volume an older pistore would have left. */
    private void makeVersionTwo(String name) throws IOException {
        Path meta = dir.resolve(name + ".meta");
        VolumeFiles.copyRecoded(meta, dir.resolve(name + ".plain"), F);
        Files.move(dir.resolve(name + ".plain"), meta, StandardCopyOption.REPLACE_EXISTING);
        Path manifest = dir.resolve(name + ".volume");
        Files.writeString(manifest, Files.readString(manifest).replace("version=3", "version=2"));
    }

    @Test
    void aVersionTwoVolumeStaysVersionTwoThroughWritesAndAGrow() throws IOException {
        Random r = new Random(2);
        byte[][] first;
        try (VolumeStore s = VolumeStore.open(dir)) {
            first = write(s.create("old", F, 64), r, 10, 4);
        }
        makeVersionTwo("old");
        byte[] raw = Files.readAllBytes(dir.resolve("old.meta"));
        assertArrayEquals(UnwrittenBlock.metadata(F), Arrays.copyOfRange(raw, 0, 8), "version 2: the pattern itself");
        byte[][] second;
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.get("old");
            assertArrayEquals(first[1], read(v, 10, 4)[1]);
            assertUnwritten(v, 0, 10);
            second = write(v, r, 40, 3);
            s.resize("old", 128);
            assertUnwritten(s.get("old"), 64, 64);
        }
        assertTrue(Files.readString(dir.resolve("old.volume")).contains("version=2"), "a grow keeps the version");
        raw = Files.readAllBytes(dir.resolve("old.meta"));
        assertArrayEquals(UnwrittenBlock.metadata(F), Arrays.copyOfRange(raw, 100 * 8, 101 * 8),
                "grown blocks of version 2 hold the pattern");
        assertArrayEquals(second[1], Arrays.copyOfRange(raw, 40 * 8, 43 * 8), "written metadata as it is");
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertArrayEquals(second[1], read(s.get("old"), 40, 3)[1]);
            assertArrayEquals(first[0], read(s.get("old"), 10, 4)[0]);
        }
    }

    @Test
    void imagesCarryMetadataAsItIsBetweenVolumesOfEitherVersion() throws IOException {
        Random r = new Random(4);
        Path img = Files.createDirectories(dir.resolve("img"));
        byte[][] want;
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume a = s.create("a", F, 4096);
            write(a, r, 0, 8);
            write(a, r, 4000, 16);
            want = read(a, 0, 4096);
            s.create("b", F, 4096);
            s.copyHomeFiles("a", img.resolve("a.data"), img.resolve("a.meta"));
        }
        byte[] image = Files.readAllBytes(img.resolve("a.meta"));
        assertArrayEquals(UnwrittenBlock.metadata(F), Arrays.copyOfRange(image, 100 * 8, 101 * 8),
                "an image holds metadata as it is");
        makeVersionTwo("b");
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.restore("b", img.resolve("a.data"), img.resolve("a.meta"));
            byte[][] got = read(s.get("b"), 0, 4096);
            assertArrayEquals(want[1], got[1], "into version 2");
            assertArrayEquals(want[0], got[0]);
            // and back: version 2's image into a version-3 volume
            s.copyHomeFiles("b", img.resolve("b.data"), img.resolve("b.meta"));
            assertArrayEquals(image, Files.readAllBytes(img.resolve("b.meta")), "the same image from either version");
            s.create("c", F, 4096);
            s.restore("c", img.resolve("b.data"), img.resolve("b.meta"));
            assertArrayEquals(want[1], read(s.get("c"), 0, 4096)[1], "into version 3");
        }
    }
}
