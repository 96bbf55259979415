package io.pistore.engine.stats;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class ThreadOwnedCountersTest {
    @Test
    void sumsWhatEveryThreadAddedAndKeepsItAfterTheThreadsEnd() throws Exception {
        ThreadOwnedCounters c = new ThreadOwnedCounters(3);
        Thread[] ts = new Thread[8];
        for (int t = 0; t < ts.length; t++) {
            ts[t] = new Thread(() -> {
                for (int i = 0; i < 100_000; i++) {
                    long[] mine = c.shard();
                    ThreadOwnedCounters.add(mine, 0, 1);
                    ThreadOwnedCounters.add(mine, 2, 3);
                }
            });
            ts[t].start();
        }
        ThreadOwnedCounters.add(c.shard(), 1, 5); // this thread, still alive when read
        for (Thread t : ts) {
            t.join();
        }
        long[] sums = new long[3];
        c.sum(0, sums);
        assertArrayEquals(new long[] {800_000, 5, 2_400_000}, sums);
        // folded into the retired row by that read; read again, nothing is lost or counted twice
        assertEquals(800_000, c.sum(0));
        assertEquals(2_400_000, c.sum(2));
        assertEquals(5, c.sum(1));
    }
}
