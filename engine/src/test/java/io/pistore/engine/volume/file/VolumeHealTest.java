package io.pistore.engine.volume.file;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A volume whose home writes the file system refused (no space left) heals in place once they are
 * taken again: the next write after the pause writes the whole journal home and goes on, every
 * acknowledged block reads back before, during and after, and the volume closes cleanly. A failed
 * forcing is not healed: the volume keeps refusing writes until a reopen replays the journal.
 * On a disk (records wait for checkpoints, which fail) and in memory (writers write home).
 */
class VolumeHealTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final int BLOCKS = 256;
    private static final long SEGMENT = 1 << 13; // about 14 one-block records: checkpoints come often

    @ParameterizedTest(name = "in memory: {0}")
    @ValueSource(booleans = {false, true})
    void aVolumeThatRanOutOfRoomTakesWritesAgainOnceThereIsRoom(boolean inMemory) throws IOException {
        String name = "filling-" + inMemory; // tests run side by side: the log lines are told apart by it
        SimulatedDisk disk = new SimulatedDisk(inMemory);
        FileVolume.create(disk.open("data"), disk.open("meta"), disk.open("journal"), name, F, BLOCKS, 1 << 20,
                SEGMENT, Runnable::run).close();
        RefusingStorageFile data = new RefusingStorageFile(disk.open("data"));
        FileVolume v = FileVolume.open(data, disk.open("meta"), disk.open("journal"), name, F, BLOCKS, 1 << 20, SEGMENT,
                Runnable::run, s -> { });
        v.healPause(0);
        List<String> log = new ArrayList<>();
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getMessage().startsWith(name + ": ")) {
                    synchronized (log) {
                        log.add(r.getLevel() + " " + r.getMessage().substring(name.length() + 2));
                    }
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger.getLogger("io.pistore.engine.volume").addHandler(h);
        try {
            failAndHeal(name, v, data, new Random(inMemory ? 11 : 12), disk);
        } finally {
            Logger.getLogger("io.pistore.engine.volume").removeHandler(h);
        }
        synchronized (log) {
            assertTrue(log.size() == 2 && log.get(0).startsWith("WARNING writes fail until its journal can go home: ")
                    && log.get(0).endsWith("No space left on device")
                    && log.get(1).startsWith("INFO writes resume: "), log.toString());
        }
    }

    private static void failAndHeal(String name, FileVolume v, RefusingStorageFile data, Random r, SimulatedDisk disk)
            throws IOException {
        Map<Integer, byte[][]> acked = new HashMap<>();
        for (int i = 0; i < 40; i++) {
            writeAcked(v, r, acked);
        }
        data.refusingWrites = true;
        IOException refused = null;
        for (int i = 0; i < 400 && refused == null; i++) { // on a disk the failure shows once the ring is full
            try {
                writeAcked(v, r, acked);
            } catch (IOException e) {
                refused = e;
            }
        }
        assertTrue(refused != null && refused.getMessage().contains("No space left on device"), String.valueOf(refused));
        assertTrue(v.journalFigures().failed(), "the figures say the volume failed");
        checkAll(v, acked, "while failed");
        FileVolume failed = v;
        IOException still = assertThrows(IOException.class, () -> writeAcked(failed, r, acked),
                "no room yet: the heal fails and so does the write");
        assertTrue(still.getMessage().startsWith("volume " + name + ": ") && still.getMessage().contains("No space left on device"),
                still.getMessage());
        checkAll(v, acked, "after a heal that failed");

        data.refusingWrites = false;
        for (int i = 0; i < 60; i++) {
            writeAcked(v, r, acked);
        }
        checkAll(v, acked, "after the heal");
        assertFalse(v.journalFigures().failed());
        assertEquals(1, v.journalFigures().heals());
        v.close();
        List<String> reopenNotes = new ArrayList<>();
        FileVolume again = FileVolume.open(disk.open("data"), disk.open("meta"), disk.open("journal"), name, F, BLOCKS,
                1 << 20, SEGMENT, Runnable::run, reopenNotes::add);
        assertEquals(List.of(), reopenNotes, "closed cleanly: nothing to replay");
        checkAll(again, acked, "reopened");
        again.close();
    }

    @ParameterizedTest(name = "in memory: {0}")
    @ValueSource(booleans = {false, true})
    void aFailedForcingIsNotHealedButReplayedAtTheNextOpen(boolean inMemory) throws IOException {
        SimulatedDisk disk = new SimulatedDisk(inMemory);
        RefusingStorageFile data = new RefusingStorageFile(disk.open("data"));
        FileVolume v = FileVolume.create(data, disk.open("meta"), disk.open("journal"), "v", F, BLOCKS, 1 << 20,
                SEGMENT, Runnable::run);
        v.healPause(0);
        Random r = new Random(13);
        Map<Integer, byte[][]> acked = new HashMap<>();
        data.failingSyncs = true;
        IOException failed = null;
        for (int i = 0; i < 400 && failed == null; i++) {
            try {
                writeAcked(v, r, acked);
            } catch (IOException e) {
                failed = e;
            }
        }
        assertTrue(failed != null, "a forcing of the home files failed");
        data.failingSyncs = false;
        FileVolume stuck = v;
        for (int i = 0; i < 3; i++) {
            assertThrows(IOException.class, () -> writeAcked(stuck, r, acked), "no heal after a failed forcing");
        }
        checkAll(v, acked, "while failed");
        assertThrows(IOException.class, v::close, "not closed cleanly: the journal stays to replay");
        List<String> notes = new ArrayList<>();
        SimulatedDisk after = disk.like(disk.contents());
        FileVolume reopened = FileVolume.open(after.open("data"), after.open("meta"), after.open("journal"), "v", F,
                BLOCKS, 1 << 20, SEGMENT, Runnable::run, notes::add);
        assertTrue(notes.size() == 1 && notes.get(0).startsWith("v: recovered "), notes.toString());
        checkAll(reopened, acked, "reopened");
        reopened.close();
    }

    /** Writes one random block (one to four blocks long) and records it once acknowledged. */
    private static void writeAcked(FileVolume v, Random r, Map<Integer, byte[][]> acked) throws IOException {
        int blocks = 1 + r.nextInt(4);
        int lba = r.nextInt(BLOCKS - blocks);
        byte[] d = new byte[blocks * F.dataSize()];
        byte[] m = new byte[blocks * F.metadataSize()];
        r.nextBytes(d);
        Pi.generate(PiContext.builder(F).initialRefTag(lba).build(), ScatterList.wrap(d), ScatterList.wrap(m), blocks);
        v.write(lba, blocks, ScatterList.wrap(d), ScatterList.wrap(m), r.nextInt(8) == 0);
        for (int b = 0; b < blocks; b++) {
            acked.put(lba + b, new byte[][] {
                Arrays.copyOfRange(d, b * F.dataSize(), (b + 1) * F.dataSize()),
                Arrays.copyOfRange(m, b * F.metadataSize(), (b + 1) * F.metadataSize())});
        }
    }

    private static void checkAll(FileVolume v, Map<Integer, byte[][]> acked, String when) throws IOException {
        for (Map.Entry<Integer, byte[][]> e : acked.entrySet()) {
            byte[] d = new byte[F.dataSize()];
            byte[] m = new byte[F.metadataSize()];
            v.read(e.getKey(), 1, ScatterList.wrap(d), ScatterList.wrap(m));
            assertArrayEquals(e.getValue()[0], d, "block " + e.getKey() + " " + when);
            assertArrayEquals(e.getValue()[1], m, "metadata of block " + e.getKey() + " " + when);
        }
    }
}
