package io.pistore.engine.volume.file;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * How a checkpoint on a disk writes a half ring home: while flushes come, forcing the home files
 * every {@link FileVolume#homeSyncEvery} bytes, so no single forcing carries the whole batch;
 * without flushes, once per batch; either way moving the journal's head only after the last
 * forcing.
 */
class HomeWritebackTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final int DS = F.dataSize();
    private static final int BLOCKS = 2000;
    private static final long SEGMENT = 16 << 10;

    @Test
    void withFlushesABatchGoesHomeInForcedPiecesAndTheHeadMovesAfterTheLast() throws IOException {
        long[] s = run(16);
        long bound = FileVolume.homeSyncEvery(SEGMENT);
        assertTrue(s[0] > 0 && s[0] <= bound, "at most " + bound + " bytes home between forcings, found " + s[0]);
        assertTrue(s[1] > 4 * s[2], s[1] + " forcings of the data file for " + s[2] + " batches: each batch in pieces");
    }

    @Test
    void withoutFlushesABatchIsForcedOnce() throws IOException {
        long[] s = run(0);
        assertTrue(s[0] > 20 * FileVolume.homeSyncEvery(SEGMENT), "a whole batch between forcings: " + s[0]);
        assertTrue(s[1] <= s[2], s[1] + " forcings of the data file for " + s[2] + " batches");
    }

    /**
     * Runs 3000 single-block writes on a fresh volume, a flush after every {@code flushEvery} of
     * them (none for 0), checks that the head never moved with home writes unforced and that every
     * block reads back after reopening, and returns: the most bytes written to the data file
     * between two of its forcings, its forcings, and the batches (moves of the head).
     */
    private static long[] run(int flushEvery) throws IOException {
        SimulatedDisk disk = new SimulatedDisk();
        FileVolume v = FileVolume.create(disk.open("data"), disk.open("meta"), disk.open("journal"), "v", F, BLOCKS,
                1 << 20, SEGMENT, Runnable::run);
        int firstOp = disk.opCount();
        Random r = new Random(3);
        byte[][] expected = new byte[BLOCKS][];
        // Single blocks at even LBAs: no two are neighbours, so each goes home in a write of its own.
        for (int i = 0; i < 3000; i++) {
            int lba = 2 * r.nextInt(BLOCKS / 2);
            byte[] d = new byte[DS];
            byte[] m = new byte[F.metadataSize()];
            r.nextBytes(d);
            Pi.generate(PiContext.builder(F).initialRefTag(lba).build(), ScatterList.wrap(d), ScatterList.wrap(m), 1);
            v.write(lba, 1, ScatterList.wrap(d), ScatterList.wrap(m), false);
            expected[lba] = d;
            if (flushEvery > 0 && i % flushEvery == flushEvery - 1) {
                v.flush();
            }
        }
        List<SimulatedDisk.Op> ops = new ArrayList<>(disk.ops().subList(firstOp, disk.opCount()));
        long unforced = 0;
        long most = 0;
        int dataSyncs = 0;
        int headMoves = 0;
        boolean dataForced = true;
        for (SimulatedDisk.Op op : ops) {
            if (op.file().equals("data")) {
                if (op.isSync()) {
                    dataSyncs++;
                    unforced = 0;
                    dataForced = true;
                } else {
                    unforced += op.bytes().length;
                    most = Math.max(most, unforced);
                    dataForced = false;
                }
            } else if (op.file().equals("journal") && !op.isSync() && op.pos() < Journal.RECORDS_START) {
                headMoves++;
                assertTrue(dataForced, "the journal's header changed with home writes not yet forced");
            }
        }
        assertTrue(headMoves > 1, "the volume wrote half rings home: " + headMoves);
        v.close();

        FileVolume reopened = FileVolume.open(disk.open("data"), disk.open("meta"), disk.open("journal"), "v", F,
                BLOCKS, 1 << 20, SEGMENT, Runnable::run, note -> { });
        for (int lba = 0; lba < BLOCKS; lba += 2) {
            if (expected[lba] != null) {
                byte[] d = new byte[DS];
                byte[] m = new byte[F.metadataSize()];
                reopened.read(lba, 1, ScatterList.wrap(d), ScatterList.wrap(m));
                assertArrayEquals(expected[lba], d, "block " + lba);
            }
        }
        assertEquals(0, reopened.journalFigures().replayedOnOpen());
        reopened.close();
        return new long[] {most, dataSyncs, headMoves};
    }
}
