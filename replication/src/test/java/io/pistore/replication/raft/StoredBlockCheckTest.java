package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.UnwrittenBlock;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The leader read's quick check ({@link StoredBlockCheck#allPass}) must agree with the full list of
 * bad blocks it stands in front of: a read it passes is never healed, so a block it misses would be
 * returned bad without a repair.
 */
class StoredBlockCheckTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);

    @Test
    void allPassAgreesWithTheListOfBadBlocksForWrittenUnwrittenAndDamagedBlocks() {
        Random r = new Random(5);
        byte[] unwritten = UnwrittenBlock.metadata(FORMAT);
        int damagedRuns = 0;
        for (int round = 0; round < 500; round++) {
            int n = 1 + r.nextInt(8);
            long lba = r.nextInt(1 << 20);
            byte[] data = new byte[n * FORMAT.dataSize()];
            byte[] meta = new byte[n * FORMAT.metadataSize()];
            r.nextBytes(data);
            Pi.generate(PiContext.builder(FORMAT).checks(CheckFlags.ALL).initialRefTag(FORMAT.refTagOf(lba)).build(),
                    ScatterList.wrap(data), ScatterList.wrap(meta), n);
            for (int b = 0; b < n; b++) {
                if (r.nextInt(3) == 0) { // never written: zeros under the unwritten tuple
                    java.util.Arrays.fill(data, b * FORMAT.dataSize(), (b + 1) * FORMAT.dataSize(), (byte) 0);
                    System.arraycopy(unwritten, 0, meta, b * FORMAT.metadataSize(), unwritten.length);
                }
            }
            int damage = r.nextInt(4);
            if (damage > 0) {
                damagedRuns++;
                int b = r.nextInt(n);
                switch (damage) {
                    case 1: // a flipped data bit: a guard error, or data under the unwritten tuple
                        data[b * FORMAT.dataSize() + r.nextInt(FORMAT.dataSize())] ^= (byte) (1 << r.nextInt(8));
                        break;
                    case 2: // a flipped guard bit
                        meta[b * FORMAT.metadataSize() + r.nextInt(2)] ^= (byte) (1 << r.nextInt(8));
                        break;
                    default: // a flipped reference tag bit (Type 1 checks it), unless the block is unwritten
                        meta[b * FORMAT.metadataSize() + 4 + r.nextInt(4)] ^= (byte) (1 << r.nextInt(8));
                        break;
                }
            }
            ScatterList d = ScatterList.wrap(data);
            ScatterList m = ScatterList.wrap(meta);
            Map<Integer, PiError> bad = StoredBlockCheck.badStoredBlocks(FORMAT, lba, d, m, n);
            assertEquals(bad.isEmpty(), StoredBlockCheck.allPass(FORMAT, lba, d, m, n),
                    "round " + round + ": " + n + " blocks at lba " + lba + ", damage " + damage + ", bad " + bad);
            if (damage == 0) {
                assertTrue(bad.isEmpty(), "undamaged blocks pass, round " + round);
            }
        }
        assertTrue(damagedRuns > 100);
    }

    @Test
    void blocksWithoutPiAlwaysPass() {
        BlockFormat plain = BlockFormat.of(512, 0);
        byte[] data = new byte[1024];
        new Random(1).nextBytes(data);
        assertTrue(StoredBlockCheck.allPass(plain, 0, ScatterList.wrap(data), ScatterList.wrap(new byte[0]), 2));
    }

    @Test
    void dataUnderTheUnwrittenTupleFailsTheQuickCheck() {
        byte[] meta = UnwrittenBlock.metadata(FORMAT);
        byte[] data = new byte[FORMAT.dataSize()];
        assertTrue(StoredBlockCheck.allPass(FORMAT, 7, ScatterList.wrap(data), ScatterList.wrap(meta), 1));
        data[100] = 1;
        assertFalse(StoredBlockCheck.allPass(FORMAT, 7, ScatterList.wrap(data), ScatterList.wrap(meta), 1));
    }
}
