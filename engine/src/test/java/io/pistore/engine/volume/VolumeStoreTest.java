package io.pistore.engine.volume;

import io.pistore.integrity.UnwrittenBlock;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.service.TargetService;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.PiDuty;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.testkit.Eventually;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VolumeStoreTest {
    @TempDir
    Path dir;

    private static final List<BlockFormat> FORMATS = List.of(
            BlockFormat.of(512, 0), BlockFormat.of(512, 8), BlockFormat.of(4096, 0), BlockFormat.of(4096, 8),
            BlockFormat.of(4096, 16), BlockFormat.of(4096, 64, GuardType.CRC64, PiType.TYPE_1, PiLocation.LAST),
            BlockFormat.of(4096, 8).withType(PiType.TYPE_3).withGuard(GuardType.IP_CHECKSUM),
            BlockFormat.of(4096, 16).withGuard(GuardType.CRC32C).withType(PiType.TYPE_2));

    private static String name(int i) {
        return "vol" + i;
    }

    @Test
    void fileVolumesSurviveARestartWithTheirFormatDataAndPi() throws Exception {
        Random r = new Random(1);
        byte[][] data = new byte[FORMATS.size()][];
        byte[][] meta = new byte[FORMATS.size()][];
        try (VolumeStore s = VolumeStore.open(dir)) {
            TargetService t = new TargetService(s);
            for (int i = 0; i < FORMATS.size(); i++) {
                BlockFormat f = FORMATS.get(i);
                s.create(name(i), f, 64);
                data[i] = new byte[4 * f.dataSize()];
                r.nextBytes(data[i]);
                meta[i] = new byte[4 * f.metadataSize()];
                r.nextBytes(meta[i]);
                Protection p = Protection.NONE;
                if (f.hasPi()) {
                    PiContext ctx = PiContext.builder(f).initialRefTag(10).appTag(0x77).build();
                    Pi.generate(ctx, ScatterList.wrap(data[i]), ScatterList.wrap(meta[i]), 4);
                    p = Protection.pass(CheckFlags.ALL, 10, 0x77, 0xFFFF);
                }
                Completion c = t.executeNow(BlockRequest.write(name(i), 10, 4, ScatterList.wrap(data[i]),
                        f.metadataSize() == 0 ? null : ScatterList.wrap(meta[i]), p, true));
                assertEquals(Status.SUCCESS, c.status(), c.toString());
            }
        }
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertTrue(s.openProblems().isEmpty(), s.openProblems().toString());
            assertEquals(FORMATS.size(), s.list().size());
            for (int i = 0; i < FORMATS.size(); i++) {
                Volume v = s.get(name(i));
                assertNotNull(v, name(i));
                BlockFormat f = FORMATS.get(i);
                assertEquals(f, v.format());
                assertEquals(64, v.blockCount());
                byte[] d = new byte[data[i].length];
                byte[] m = new byte[meta[i].length];
                v.read(10, 4, ScatterList.wrap(d), f.metadataSize() == 0 ? null : ScatterList.wrap(m));
                assertArrayEquals(data[i], d, name(i));
                if (f.metadataSize() > 0) {
                    assertArrayEquals(meta[i], m, name(i));
                }
                // Blocks never written read as zero with the unwritten metadata.
                byte[] d0 = new byte[f.dataSize()];
                byte[] m0 = new byte[f.metadataSize()];
                v.read(0, 1, ScatterList.wrap(d0), f.metadataSize() == 0 ? null : ScatterList.wrap(m0));
                assertArrayEquals(new byte[f.dataSize()], d0);
                assertArrayEquals(UnwrittenBlock.metadata(f), m0);
            }
        }
    }

    @Test
    void theStoreOwnsItsVolumesIdleTickAndStopsItAfterClosingThem() throws Exception {
        String ticker = "pistore-journal-idle " + dir.getFileName();
        VolumeStore s = VolumeStore.open(dir);
        try {
            Volume v = s.create("v", BlockFormat.of(4096, 8), 16);
            v.write(0, 1, ScatterList.wrap(new byte[4096]), ScatterList.wrap(new byte[8]), false);
            assertTrue(s.journalFigures("v").fillBytes() > 0, "the write is in the journal");
            Eventually.await("the store's idle tick drains the journal of a volume nobody writes",
                    () -> s.journalFigures("v").fillBytes() == 0);
            assertTrue(threadNamed(ticker) != null, "the store's own ticker runs the ticks");
        } finally {
            s.close();
        }
        Thread t = threadNamed(ticker);
        if (t != null) {
            t.join(Eventually.PATIENCE.toMillis());
            assertFalse(t.isAlive(), "the ticker stops when the store closes");
        }
    }

    private static Thread threadNamed(String name) {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().equals(name)).findFirst()
                .orElse(null);
    }

    @Test
    void aFailingWriteLeavesTheFilesUnchanged() throws Exception {
        BlockFormat f = BlockFormat.of(4096, 8);
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("v", f, 16);
            TargetService t = new TargetService(s);
            byte[] good = new byte[4096];
            Arrays.fill(good, (byte) 5);
            assertEquals(Status.SUCCESS, t.executeNow(BlockRequest.write("v", 3, 1, ScatterList.wrap(good), null,
                    Protection.insertStrip(3), true)).status());
            byte[] dataBefore = Files.readAllBytes(dir.resolve("v.data"));
            byte[] metaBefore = Files.readAllBytes(dir.resolve("v.meta"));
            byte[] bad = new byte[4096];
            byte[] badMeta = new byte[8];
            PiContext ctx = PiContext.builder(f).initialRefTag(3).build();
            Pi.generate(ctx, ScatterList.wrap(bad), ScatterList.wrap(badMeta), 1);
            badMeta[7] ^= 1; // ref tag
            Completion c = t.executeNow(BlockRequest.write("v", 3, 1, ScatterList.wrap(bad), ScatterList.wrap(badMeta),
                    Protection.pass(CheckFlags.ALL, 3, 0, 0), true));
            assertEquals(Status.REF_TAG_CHECK, c.status());
            assertEquals(3, c.errorLba());
            Completion range = t.executeNow(BlockRequest.write("v", 16, 1, ScatterList.wrap(bad), null,
                    Protection.insertStrip(16), true));
            assertEquals(Status.LBA_OUT_OF_RANGE, range.status());
            assertArrayEquals(dataBefore, Files.readAllBytes(dir.resolve("v.data")));
            assertArrayEquals(metaBefore, Files.readAllBytes(dir.resolve("v.meta")));
        }
    }

    @Test
    void aBrokenManifestIsReportedAndTheOtherVolumesOpen() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("good", BlockFormat.of(512, 8), 8);
            s.create("bad", BlockFormat.of(512, 8), 8);
        }
        Files.writeString(dir.resolve("bad.volume"), "version=1\nname=bad\nblocks=8\n");
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertNotNull(s.get("good"));
            assertNull(s.get("bad"));
            assertEquals(1, s.openProblems().size());
            assertTrue(s.openProblems().get(0).contains("data.size"), s.openProblems().get(0));
        }
        Files.delete(dir.resolve("good.data"));
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertNull(s.get("good"));
            assertTrue(s.openProblems().stream().anyMatch(p -> p.startsWith("volume good")), s.openProblems().toString());
        }
    }

    @Test
    void createAndDeleteRules() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("a", BlockFormat.of(512, 8), 8);
            IllegalArgumentException dup = assertThrows(IllegalArgumentException.class,
                    () -> s.create("a", BlockFormat.of(512, 8), 8));
            assertTrue(dup.getMessage().contains("already exists"));
            assertThrows(IllegalArgumentException.class, () -> s.create("../x", BlockFormat.of(512, 8), 8));
            assertThrows(IllegalArgumentException.class, () -> s.create("", BlockFormat.of(512, 8), 8));
            assertThrows(IllegalArgumentException.class, () -> s.create("z", BlockFormat.of(512, 8), 0));
            s.delete("a");
            assertFalse(Files.exists(dir.resolve("a.volume")));
            assertFalse(Files.exists(dir.resolve("a.data")));
            assertFalse(Files.exists(dir.resolve("a.meta")));
            assertThrows(IllegalArgumentException.class, () -> s.delete("a"));
        }
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertTrue(s.list().isEmpty());
        }
    }

    @Test
    void writeZeroesRestoresTheUnwrittenState() throws Exception {
        BlockFormat f = BlockFormat.of(4096, 16);
        for (VolumeStore s : new VolumeStore[] {VolumeStore.open(dir), VolumeStore.inMemory()}) {
            try (s) {
                Volume v = s.create("z", f, 300);
                byte[] d = new byte[3 * 4096];
                Arrays.fill(d, (byte) 9);
                byte[] m = new byte[3 * 16];
                Arrays.fill(m, (byte) 7);
                v.write(280, 3, ScatterList.wrap(d), ScatterList.wrap(m), false);
                v.writeZeroes(281, 1, true);
                byte[] d2 = new byte[3 * 4096];
                byte[] m2 = new byte[3 * 16];
                v.read(280, 3, ScatterList.wrap(d2), ScatterList.wrap(m2));
                assertEquals(9, d2[0]);
                assertEquals(0, d2[4096]);
                assertEquals(9, d2[2 * 4096]);
                assertArrayEquals(UnwrittenBlock.metadata(f), Arrays.copyOfRange(m2, 16, 32));
                assertEquals(7, m2[0]);
            }
        }
    }

    @Test
    void anAttachedVolumeIsServedClosedWithTheStoreAndDeletedWithoutTouchingTheDirectory() throws Exception {
        BlockFormat f = BlockFormat.of(512, 8);
        MemoryVolume elsewhere = new MemoryVolume("elsewhere", f, 16);
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("local", f, 16);
            s.attach(elsewhere);
            assertEquals(List.of("elsewhere", "local"), s.list().stream().map(Volume::name).toList());
            Completion c = new TargetService(s).executeNow(BlockRequest.write("elsewhere", 2, 1,
                    ScatterList.wrap(new byte[512]), null, Protection.insertStrip(f, 2), false));
            assertEquals(Status.SUCCESS, c.status(), c.toString());
            assertThrows(IllegalArgumentException.class, () -> s.attach(new MemoryVolume("local", f, 16)),
                    "a name the store already has");
            s.delete("elsewhere");
            assertNull(s.get("elsewhere"));
            assertTrue(Files.exists(dir.resolve("local.volume")), "the store's own volumes stay");
        }
        try (VolumeStore s = VolumeStore.open(dir)) {
            assertNull(s.get("elsewhere"), "an attached volume leaves nothing in the directory");
            assertNotNull(s.get("local"));
        }
    }
}
