package io.pistore.engine.volume.file;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A file volume on storage whose syncs cost nothing (tmpfs) writes through: each write reaches the
 * home files before it completes, the journal cycles through two segments, and a home write that
 * fails leaves the volume readable, refusing writes (for a pause, then until a heal succeeds:
 * {@link VolumeHealTest}), with the journal to replay.
 */
class WriteThroughTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final int BLOCKS = 64;
    private static final long SEGMENT = 1 << 13;

    @Test
    void writesReachTheHomeFilesAtOnceAndTheJournalUsesTwoSegments() throws IOException {
        SimulatedDisk disk = new SimulatedDisk(true);
        FileVolume v = FileVolume.create(disk.open("data"), disk.open("meta"), disk.open("journal"), "v", F, BLOCKS,
                1 << 20, SEGMENT, Runnable::run);
        Random r = new Random(5);
        for (int i = 0; i < 200; i++) { // about 200 * 560 bytes: several laps of two 8 KiB segments
            int lba = r.nextInt(BLOCKS);
            byte[][] b = block(lba, r);
            v.write(lba, 1, ScatterList.wrap(b[0]), ScatterList.wrap(b[1]), false);
            byte[] home = disk.contents().get("data");
            assertArrayEquals(b[0], Arrays.copyOfRange(home, lba * F.dataSize(), (lba + 1) * F.dataSize()),
                    "write " + i + " is home when it completes");
            byte[] homeMeta = Arrays.copyOfRange(disk.contents().get("meta"), lba * F.metadataSize(),
                    (lba + 1) * F.metadataSize());
            MetadataCoding.of(F, true).apply(java.nio.ByteBuffer.wrap(homeMeta), 0, homeMeta.length,
                    (long) lba * F.metadataSize()); // the file holds it XOR an unwritten block's
            assertArrayEquals(b[1], homeMeta);
        }
        assertTrue(disk.contents().get("journal").length <= Journal.RECORDS_START + 2 * SEGMENT,
                "journal of " + disk.contents().get("journal").length + " bytes");
        assertEquals(2 * SEGMENT, v.journalFigures().capacityBytes());
        v.close();
    }

    @Test
    void aFailedHomeWriteKeepsTheBlockReadableAndRefusesLaterWrites() throws IOException {
        SimulatedDisk disk = new SimulatedDisk(true);
        RefusingStorageFile data = new RefusingStorageFile(disk.open("data"));
        FileVolume v = FileVolume.create(data, disk.open("meta"), disk.open("journal"), "v", F, BLOCKS, 1 << 20,
                SEGMENT, Runnable::run);
        Random r = new Random(9);
        byte[][] a = block(1, r);
        byte[][] b = block(2, r);
        v.write(1, 1, ScatterList.wrap(a[0]), ScatterList.wrap(a[1]), false);
        data.refusingWrites = true;
        IOException e = assertThrows(IOException.class,
                () -> v.write(2, 1, ScatterList.wrap(b[0]), ScatterList.wrap(b[1]), false));
        assertTrue(e.getMessage().startsWith("volume v: writing home failed: No space"), e.getMessage());
        assertArrayEquals(b[0], read(v, 2)[0], "the block comes from the journal");
        assertArrayEquals(b[1], read(v, 2)[1]);
        data.refusingWrites = false;
        IOException later = assertThrows(IOException.class,
                () -> v.write(3, 1, ScatterList.wrap(a[0]), ScatterList.wrap(a[1]), false));
        assertTrue(later.getMessage().contains("writing home failed"), later.getMessage());
        assertThrows(IOException.class, v::close, "not closed cleanly: the journal stays to replay");

        List<String> notes = new ArrayList<>();
        SimulatedDisk again = disk.like(disk.contents());
        FileVolume reopened = FileVolume.open(again.open("data"), again.open("meta"), again.open("journal"), "v", F,
                BLOCKS, 1 << 20, SEGMENT, Runnable::run, notes::add);
        assertTrue(notes.get(0).startsWith("v: recovered 2 journal records"), notes.toString());
        assertArrayEquals(a[0], read(reopened, 1)[0]);
        assertArrayEquals(b[0], read(reopened, 2)[0]);
        assertArrayEquals(b[1], read(reopened, 2)[1]);
        reopened.close();
    }

    /**
     * In memory a write's record carries no payload CRC (type 3) and its header is written after its
     * payload, with a version-2 journal header; on a disk it stays a checksummed write (type 1).
     */
    @Test
    void inMemoryAWritesHeaderFollowsItsPayload() throws IOException {
        for (boolean inMemory : new boolean[] {true, false}) {
            SimulatedDisk disk = new SimulatedDisk(inMemory);
            FileVolume v = FileVolume.create(disk.open("data"), disk.open("meta"), disk.open("journal"), "v", F,
                    BLOCKS, 1 << 20, SEGMENT, Runnable::run);
            int before = disk.opCount();
            byte[][] b = block(7, new Random(7));
            v.write(7, 1, ScatterList.wrap(b[0]), ScatterList.wrap(b[1]), false);
            ByteBuffer j = ByteBuffer.wrap(disk.contents().get("journal"));
            assertEquals(inMemory ? Journal.WRITE_IN_MEMORY : Journal.WRITE, j.get(Journal.RECORDS_START + 4));
            if (inMemory) {
                List<SimulatedDisk.Op> ops = disk.ops().subList(before, disk.opCount());
                assertEquals(Journal.RECORDS_START + Journal.RECORD_HEADER, ops.get(0).pos(), "the payload first");
                assertEquals(Journal.RECORDS_START, ops.get(1).pos(), "then the header");
                assertEquals("journal", ops.get(1).file());
            }
            v.close();
        }
    }

    private static byte[][] block(int lba, Random r) {
        byte[] d = new byte[F.dataSize()];
        byte[] m = new byte[F.metadataSize()];
        r.nextBytes(d);
        Pi.generate(PiContext.builder(F).initialRefTag(lba).build(), ScatterList.wrap(d), ScatterList.wrap(m), 1);
        return new byte[][] {d, m};
    }

    private static byte[][] read(FileVolume v, int lba) throws IOException {
        byte[] d = new byte[F.dataSize()];
        byte[] m = new byte[F.metadataSize()];
        v.read(lba, 1, ScatterList.wrap(d), ScatterList.wrap(m));
        return new byte[][] {d, m};
    }
}
