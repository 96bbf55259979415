package io.pistore.engine.volume.file;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The journal index against a plain map doing the same puts (of runs of blocks), removals up to a
 * sequence number and clears: LBAs that collide in one stripe (runs of neighbours that share it) and runs that wrap around
 * the end of a table, where removal by shifting back is easiest to get wrong.
 */
class JournalIndexTest {
    @Test
    void agreesWithAMapThroughPutsRemovalsAndClears() {
        Random r = new Random(7);
        for (int round = 0; round < 20; round++) {
            JournalIndex index = new JournalIndex();
            Map<Long, long[]> model = new HashMap<>();
            long seq = 0;
            int span = 1 + r.nextInt(4000);
            for (int op = 0; op < 20_000; op++) {
                int what = r.nextInt(100);
                if (what < 85) {
                    // Mostly LBAs of one stripe (64 neighbours every 4096), so one table fills, grows and wraps;
                    // runs of blocks up to 80 long, some across the end of a stripe's run of neighbours.
                    long lba = r.nextBoolean() ? 4096L * r.nextInt(span) + r.nextInt(64) : r.nextInt(64 * span);
                    int blocks = r.nextInt(4) == 0 ? 1 + r.nextInt(80) : 1;
                    seq++;
                    long d = r.nextBoolean() ? -1 : r.nextInt(1 << 20);
                    long m = d < 0 ? -1 : r.nextInt(1 << 20);
                    int ds = 512 << r.nextInt(4);
                    int ms = 8 << r.nextInt(2);
                    index.putRun(lba, blocks, seq, d, ds, m, ms);
                    for (int i = 0; i < blocks; i++) {
                        model.put(lba + i, d < 0 ? new long[] {seq, -1, -1} : new long[] {seq, d + (long) i * ds, m + (long) i * ms});
                    }
                } else if (what < 99) {
                    long upTo = seq - r.nextInt(200);
                    index.removeUpTo(upTo);
                    model.values().removeIf(e -> e[0] <= upTo);
                } else {
                    index.clear();
                    model.clear();
                }
                if (op % 500 == 0) {
                    check(index, model, span);
                }
            }
            check(index, model, span);
        }
    }

    private static void check(JournalIndex index, Map<Long, long[]> model, int span) {
        assertEquals(model.isEmpty(), index.isEmpty());
        for (Map.Entry<Long, long[]> e : model.entrySet()) {
            long[] out = new long[3];
            assertEquals(e.getValue()[0], index.lookUp(e.getKey(), out), "lba " + e.getKey());
            assertArrayEquals(e.getValue(), out, "lba " + e.getKey());
        }
        for (long i = 0; i < 64L * span; i += 61) {
            for (long lba : new long[] {i, 4096 * (i / 64) + i % 64}) { // anywhere, and in the crowded stripe
                if (!model.containsKey(lba)) {
                    assertEquals(JournalIndex.ABSENT, index.seqOf(lba), "lba " + lba + " was never put or was removed");
                }
            }
        }
        assertTrue(JournalIndex.ABSENT < 0);
    }
}
