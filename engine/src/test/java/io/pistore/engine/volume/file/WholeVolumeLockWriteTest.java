package io.pistore.engine.volume.file;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * On a disk, a write large enough to hold every block lock (64 blocks or more) that finds the active
 * journal segment full moves the journal on and leaves the full segment to its checkpoint, as every
 * other write does: it does not write the journal home and wait for the home files to be forced.
 */
class WholeVolumeLockWriteTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final int BLOCKS = 256;
    private static final int RUN = 80; // 80 * 520 bytes: one record per 64 KiB segment
    private static final long SEGMENT = 1 << 16;

    @Test
    void aLargeWriteMeetingAFullSegmentLeavesItToItsCheckpoint() throws IOException {
        SimulatedDisk disk = new SimulatedDisk(false);
        ArrayDeque<Runnable> checkpoints = new ArrayDeque<>();
        FileVolume v = FileVolume.create(disk.open("data"), disk.open("meta"), disk.open("journal"), "v", F, BLOCKS,
                1 << 20, SEGMENT, checkpoints::add);
        Random r = new Random(3);
        List<byte[][]> written = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            written.add(write(v, i * RUN, r));
            assertEquals(i, checkpoints.size(), "write " + i + ": one checkpoint started per segment left behind");
            byte[] home = disk.contents().get("data");
            assertTrue(allZero(Arrays.copyOfRange(home, 0, RUN * F.dataSize())),
                    "write " + i + ": nothing went home yet (no checkpoint ran in the writer)");
            assertTrue(v.journalFigures().fillBytes() > 0, "the journal holds the records");
        }
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(written.get(i)[0], read(v, i * RUN), "write " + i + " reads back from the journal");
        }
        while (!checkpoints.isEmpty()) {
            checkpoints.poll().run();
        }
        v.close();
        FileVolume again = FileVolume.open(disk.open("data"), disk.open("meta"), disk.open("journal"), "v", F, BLOCKS,
                1 << 20, SEGMENT, Runnable::run, s -> { });
        for (int i = 0; i < 3; i++) {
            assertArrayEquals(written.get(i)[0], read(again, i * RUN), "write " + i + " after a reopen");
        }
        again.close();
    }

    /**
     * A zeroing of 64 blocks or more holds every lock too: it is indexed like a write (a sparse
     * image's holes must not each wait for the disk), unless it reaches the volume's threshold, when
     * a full checkpoint writes it home at once.
     */
    @Test
    void aLargeZeroingIsIndexedUnlessItReachesTheThreshold() throws IOException {
        SimulatedDisk disk = new SimulatedDisk(false);
        FileVolume v = FileVolume.create(disk.open("data"), disk.open("meta"), disk.open("journal"), "v", F, BLOCKS,
                1 << 20, SEGMENT, Runnable::run);
        byte[][] first = write(v, 0, new Random(5));
        v.checkpoint(); // the blocks are home now
        byte[] zeros = new byte[RUN * F.dataSize()];
        v.writeZeroes(0, RUN, false);
        assertArrayEquals(zeros, read(v, 0), "the zeroed blocks read as zeros");
        assertArrayEquals(first[0], Arrays.copyOfRange(disk.contents().get("data"), 0, RUN * F.dataSize()),
                "indexed: home is as before until a checkpoint");
        v.checkpointZeroingsFrom(64);
        v.writeZeroes(RUN, RUN, false);
        assertEquals(0, v.journalFigures().fillBytes(), "checkpointed whole: the journal is empty");
        assertTrue(allZero(Arrays.copyOfRange(disk.contents().get("data"), 0, RUN * F.dataSize())),
                "the full checkpoint wrote the first zeroing home too");
        v.close();
        FileVolume again = FileVolume.open(disk.open("data"), disk.open("meta"), disk.open("journal"), "v", F, BLOCKS,
                1 << 20, SEGMENT, Runnable::run, s -> { });
        assertArrayEquals(zeros, read(again, 0));
        again.close();
    }

    private static byte[][] write(FileVolume v, int lba, Random r) throws IOException {
        byte[] d = new byte[RUN * F.dataSize()];
        byte[] m = new byte[RUN * F.metadataSize()];
        r.nextBytes(d);
        Pi.generate(PiContext.builder(F).initialRefTag(lba).build(), ScatterList.wrap(d), ScatterList.wrap(m), RUN);
        v.write(lba, RUN, ScatterList.wrap(d), ScatterList.wrap(m), false);
        return new byte[][] {d, m};
    }

    private static byte[] read(FileVolume v, int lba) throws IOException {
        byte[] d = new byte[RUN * F.dataSize()];
        v.read(lba, RUN, ScatterList.wrap(d), ScatterList.wrap(new byte[RUN * F.metadataSize()]));
        return d;
    }

    private static boolean allZero(byte[] b) {
        for (byte x : b) {
            if (x != 0) {
                return false;
            }
        }
        return true;
    }
}
