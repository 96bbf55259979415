package io.pistore.engine.volume.file;

import io.pistore.engine.volume.CacheFigures;
import io.pistore.engine.volume.JournalFigures;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The journal and cache figures a store gives per volume (for the metrics). */
class StoreFiguresTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);
    private static final long RECORD = Journal.recordSize(Journal.WRITE, 1, 4096, 8);

    @TempDir
    Path dir;

    private static void write(Volume v, long lba) throws IOException {
        v.write(lba, 1, ScatterList.wrap(new byte[4096]), ScatterList.wrap(new byte[8]), false);
    }

    private static void read(Volume v, long lba) throws IOException {
        v.read(lba, 1, ScatterList.wrap(new byte[4096]), ScatterList.wrap(new byte[8]));
    }

    @Test
    void theJournalCountsRecordsBytesAndCheckpointsAndItsFill() throws IOException {
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.create("v", F, 64);
            for (int i = 0; i < 10; i++) {
                write(v, i);
            }
            JournalFigures j = s.journalFigures("v");
            assertEquals(10, j.recordsAppended());
            assertEquals(10 * RECORD, j.bytesAppended());
            assertEquals(FileVolume.JOURNAL_SEGMENTS * FileVolume.JOURNAL_SEGMENT, j.capacityBytes());
            assertEquals(0, j.replayedOnOpen());
            // the idle tick may have checkpointed the segment already; if not, all ten records are in it
            assertTrue(j.checkpoints() >= 1 || j.fillBytes() == 10 * RECORD, j.toString());

            s.checkpoint("v");
            j = s.journalFigures("v");
            assertTrue(j.checkpoints() >= 1, j.toString());
            assertTrue(j.checkpointNanos() > 0, j.toString());
            assertEquals(0, j.fillBytes(), "a checkpoint empties the journal");
            assertEquals(10, j.recordsAppended(), "appends are counted since open, not since the checkpoint");
        }
    }

    @Test
    void recordsReplayedAtOpenAreCounted() throws IOException {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("v", F, 16);
        }
        // written without the store and never closed: as a process killed after the flush
        FileVolume v = FileVolume.open(ChannelStorageFile.open(dir.resolve("v.data")),
                ChannelStorageFile.open(dir.resolve("v.meta")), ChannelStorageFile.open(dir.resolve("v.journal")), "v", F,
                16, 1 << 20, FileVolume.JOURNAL_SEGMENT, Runnable::run, note -> { });
        write(v, 1);
        write(v, 2);
        write(v, 3);
        v.flush();
        try (VolumeStore s = VolumeStore.open(dir)) {
            JournalFigures j = s.journalFigures("v");
            assertEquals(3, j.replayedOnOpen());
            assertEquals(0, j.recordsAppended());
        }
    }

    @Test
    void theCacheCountsHitsMissesAndEvictionsByBlock() throws IOException {
        long capacity = 8 * (4096 + 8 + 64); // eight blocks with the cache's overhead
        try (VolumeStore s = VolumeStore.open(dir, capacity)) {
            Volume v = s.create("v", F, 64);
            write(v, 0); // a write puts the block in the cache
            read(v, 0);
            read(v, 5);
            read(v, 5);
            CacheFigures c = s.cacheFigures("v");
            assertEquals(2, c.hits(), c.toString());
            assertEquals(1, c.misses(), c.toString());
            assertEquals(capacity, c.capacityBytes());
            assertEquals(2, c.blocks(), "blocks 0 and 5: " + c);
            assertEquals(2 * (4096 + 8 + 64), c.bytes(), c.toString());
            for (int lba = 10; lba < 40; lba++) {
                read(v, lba);
            }
            c = s.cacheFigures("v"); // settles the cache's pending evictions first
            // 32 blocks went in (0, 5 and 10 to 39); what is not held was evicted
            assertEquals(32, c.evictions() + c.blocks(), c.toString());
            assertTrue(c.blocks() <= 8 && c.bytes() <= capacity, c.toString());
            assertEquals(31, c.misses(), c.toString());
            assertNull(s.journalFigures("nosuch"));
        }
    }

    @Test
    void aCheckpointReachesTheFileVolumeBehindACache() throws IOException {
        try (VolumeStore s = VolumeStore.open(dir, 1 << 20)) {
            Volume v = s.create("v", F, 64);
            for (int i = 0; i < 10; i++) {
                write(v, i);
            }
            s.checkpoint("v");
            JournalFigures j = s.journalFigures("v");
            assertEquals(0, j.fillBytes(), "a checkpoint empties the journal under the cache too: " + j);
            assertTrue(j.checkpoints() >= 1, j.toString());
        }
    }

    @Test
    void aMemoryVolumeHasNeitherJournalNorCache() throws IOException {
        try (VolumeStore s = VolumeStore.inMemory()) {
            s.create("m", F, 16);
            assertNull(s.journalFigures("m"));
            assertNull(s.cacheFigures("m"));
        }
    }
}
