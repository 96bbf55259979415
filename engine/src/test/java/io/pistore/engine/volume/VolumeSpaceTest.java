package io.pistore.engine.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.engine.volume.file.FileVolume;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.testkit.SmallTmpfs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume is created only where its journal and metadata fit (a journal that ran its file system
 * full keeps the volume from opening until room is made), counting what the other volumes' journals
 * are still to take; a create that fails leaves no file behind. Small file systems are tmpfs mounts
 * the test makes (root only; skipped elsewhere).
 */
class VolumeSpaceTest {
    private static final BlockFormat FORMAT = BlockFormat.of(4096, 8);

    @TempDir
    Path dir;

    /** The volume files in {@code d} (not the lock). */
    private static List<String> volumeFiles(Path d) throws IOException {
        try (Stream<Path> s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith(".")).sorted().toList();
        }
    }

    @Test
    void onADiskAVolumeWhoseMetadataAloneIsLargerThanTheFreeRoomIsMadeThin() throws Exception {
        assumeTrue(!FileVolume.inMemory(dir), "the temporary directory is on a disk file system");
        BlockFormat small = BlockFormat.of(512, 8);
        try (VolumeStore s = VolumeStore.open(dir)) {
            long free = Files.getFileStore(dir).getUsableSpace();
            long blocks = free / 8 + (1 << 20); // its metadata alone is larger than the free room
            Volume v = s.create("v", small, blocks); // its metadata file is a hole, as its data file
            assertEquals(blocks * 8, Files.size(dir.resolve("v.meta")));
            v.write(blocks - 1, 1, ScatterList.wrap(new byte[512]), ScatterList.wrap(new byte[8]), false);
            s.delete("v");
            assertEquals(List.of(), volumeFiles(dir));
        }
    }

    @Test
    void aJournalOnADiskIsStillToGrowByItsRingLessWhatItHolds() throws Exception {
        assumeTrue(!FileVolume.inMemory(dir), "the temporary directory is on a disk file system");
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.create("v", FORMAT, 1024);
            long ring = FileVolume.journalBytes(FORMAT, 1024, false);
            assertEquals(ring - Files.size(dir.resolve("v.journal")), VolumeSpace.journalsToGrow(dir, s.fileVolumes(), false));
            v.write(0, 1, ScatterList.wrap(new byte[4096]), ScatterList.wrap(new byte[8]), false);
            v.flush();
            assertEquals(ring - Files.size(dir.resolve("v.journal")), VolumeSpace.journalsToGrow(dir, s.fileVolumes(), false));
            assertTrue(ring - Files.size(dir.resolve("v.journal")) > 0, "a ring of 256 MiB at least is not full yet");
        }
    }

    @Test
    void onASmallTmpfsTheJournalsRoomDecidesAndTheOthersJournalsCount() throws Exception {
        Path m = dir.resolve("small");
        assumeTrue(SmallTmpfs.mount(m, "size=100M"), "mounting a tmpfs (root only)");
        try (VolumeStore s = VolumeStore.open(m)) {
            // 16 MiB of data fits in 100 MiB, and its journal's two segments (64 MiB) beside it
            Volume a = s.create("a", FORMAT, 4096);
            a.write(0, 1, ScatterList.wrap(new byte[4096]), ScatterList.wrap(new byte[8]), false);
            // a second one's journal does not: refused with the figures, no file made
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> s.create("b", FORMAT, 256));
            assertTrue(e.getMessage().startsWith("volume b does not fit in " + m + ": its journal (64.0 MiB) and "
                    + "metadata (2.0 KiB) need 64.0 MiB before any data, and the file system has "), e.getMessage());
            assertEquals(List.of("a.data", "a.journal", "a.meta", "a.volume"), volumeFiles(m));
        } finally {
            SmallTmpfs.unmount(m);
        }
    }

    /** The completion a transport's request gets from the target service. */
    private static io.pistore.spi.Completion served(io.pistore.engine.service.TargetService t, io.pistore.spi.BlockRequest r)
            throws Exception {
        java.util.concurrent.CompletableFuture<io.pistore.spi.Completion> c = new java.util.concurrent.CompletableFuture<>();
        t.execute(r, io.pistore.spi.PiDuty.of(r.protection()), c::complete);
        return c.get(30, TimeUnit.SECONDS);
    }

    /**
     * A write that finds its file system full is answered NO_SPACE (not a media error); what was
     * acknowledged reads back; once room is made the volume takes writes again without a reopen, and
     * every acknowledged block reads back after one.
     */
    @Test
    void aWriteThatFindsNoRoomIsAnsweredNoSpace() throws Exception {
        Path m = dir.resolve("filling");
        assumeTrue(SmallTmpfs.mount(m, "size=70M"), "mounting a tmpfs (root only)");
        try {
            byte[] block = new byte[4096];
            java.util.Arrays.fill(block, (byte) 7);
            long lba = 0;
            VolumeStore s = VolumeStore.open(m);
            try {
                s.create("v", FORMAT, 8192); // 32 MiB of data, sparse; its journal takes 64 MiB now
                io.pistore.engine.service.TargetService t = new io.pistore.engine.service.TargetService(s);
                io.pistore.spi.Completion c = null;
                for (; lba < 8192; lba++) {
                    c = served(t, io.pistore.spi.BlockRequest.write("v", lba, 1, ScatterList.wrap(block), null,
                            io.pistore.spi.Protection.insertStrip(lba), false));
                    if (!c.isSuccess()) {
                        break;
                    }
                }
                assertTrue(lba > 0 && lba < 8192, "the file system filled after " + lba + " blocks");
                assertEquals(io.pistore.spi.Status.NO_SPACE, c.status(), c.toString());
                assertTrue(c.message().startsWith("WRITE lba=" + lba + ": ") && c.message().endsWith("No space left on device"),
                        c.message());
                byte[] back = new byte[4096];
                io.pistore.spi.Completion r = served(t, io.pistore.spi.BlockRequest.read("v", 0, 1, ScatterList.wrap(back),
                        null, io.pistore.spi.Protection.insertStrip(0)));
                assertTrue(r.isSuccess() && java.util.Arrays.equals(block, back), "an acknowledged write reads back: " + r);
                assertTrue(SmallTmpfs.remount(m, "size=200M"), "room made");
                // The volume heals at its next write a pause after the failure: no reopen.
                long at = lba;
                c = io.pistore.testkit.Eventually.until("writes to resume once there is room",
                        () -> served(t, io.pistore.spi.BlockRequest.write("v", at, 1, ScatterList.wrap(block), null,
                                io.pistore.spi.Protection.insertStrip(at), false)),
                        io.pistore.spi.Completion::isSuccess);
                lba++;
            } finally {
                s.close();
            }
            try (VolumeStore again = VolumeStore.open(m)) {
                Volume v = again.get("v");
                for (long b = 0; b < lba; b++) {
                    byte[] back = new byte[4096];
                    v.read(b, 1, ScatterList.wrap(back), ScatterList.wrap(new byte[8]));
                    assertTrue(java.util.Arrays.equals(block, back), "acknowledged block " + b + " after the reopen");
                }
            }
        } finally {
            SmallTmpfs.unmount(m);
        }
    }

    @Test
    void aCreateThatFailsHalfwayLeavesNoFileBehind() throws Exception {
        Path m = dir.resolve("inodes");
        // room enough, but inodes for the root, the lock, the data and metadata files only: the journal fails
        assumeTrue(SmallTmpfs.mount(m, "size=200M,nr_inodes=4"), "mounting a tmpfs (root only)");
        try (VolumeStore s = VolumeStore.open(m)) {
            assertThrows(IOException.class, () -> s.create("v", FORMAT, 256));
            assertEquals(List.of(), volumeFiles(m), "the files a failed create made are removed");
            assertEquals(List.of(), s.list());
        } finally {
            SmallTmpfs.unmount(m);
        }
    }
}
