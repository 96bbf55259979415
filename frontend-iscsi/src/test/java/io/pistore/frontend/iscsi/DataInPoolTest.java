package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pool's sizes: each transfer takes the smallest buffer that holds it, and each size keeps a bounded number. */
class DataInPoolTest {
    /** The sizes, smallest first: 256 KiB, then 1, 2 and 4 MiB of 512-byte blocks with 8-byte tuples. */
    private static final int[] SIZES = {262_144, 2048 * 520, 4096 * 520, 8192 * 520};

    @Test
    void aTransferTakesTheSmallestSizeThatHoldsIt() {
        int below = 0;
        for (int size : SIZES) {
            for (int len : new int[] {below + 1, (below + size) / 2, size}) {
                assertEquals(size, DataInPool.capacityFor(len), "a transfer of " + len + " bytes");
            }
            below = size;
        }
        assertEquals(DataInPool.LARGEST, SIZES[SIZES.length - 1]);
        assertEquals(DataInPool.SIZE, SIZES[0]);
        // 4 MiB of data with 4096+8 tuples, the largest transfer a 4096+8 LUN allows
        assertEquals(DataInPool.LARGEST, DataInPool.capacityFor(1024 * 4104));
        DataInPool pool = new DataInPool();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> pool.take(DataInPool.LARGEST + 1));
        assertEquals("a pooled buffer holds at most 4259840 bytes, not 4259841", e.getMessage());
        assertEquals(0, pool.lent());
    }

    @Test
    void buffersAreDirectSetToTheTransferAndReusedWithinTheirSize() {
        DataInPool pool = new DataInPool();
        for (int size : SIZES) {
            ByteBuffer a = pool.take(size - 7);
            assertTrue(a.isDirect());
            assertEquals(size, a.capacity());
            assertEquals(0, a.position());
            assertEquals(size - 7, a.limit());
            a.position(100);
            pool.give(a);
            ByteBuffer b = pool.take(size);
            assertSame(a, b, "the buffer given back is taken again");
            assertEquals(0, b.position());
            assertEquals(size, b.limit());
            ByteBuffer c = pool.take(size);
            assertNotSame(b, c, "a second one at once is new");
            pool.give(b);
            pool.give(c);
        }
        assertEquals(0, pool.lent());
    }

    /** Last in, first out: a queue that cycled through every kept buffer would read into memory long out of the cache. */
    @Test
    void theBufferGivenBackLastIsTakenFirst() {
        DataInPool pool = new DataInPool();
        List<ByteBuffer> taken = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            taken.add(pool.take(131_072));
        }
        taken.forEach(pool::give);
        for (int i = 7; i >= 0; i--) {
            assertSame(taken.get(i), pool.take(131_072), "taken in the reverse order of their giving back");
        }
    }

    @Test
    void eachSizeKeepsAtMostItsShare() {
        DataInPool pool = new DataInPool();
        for (int size : SIZES) {
            int most = DataInPool.mostKept(size);
            assertTrue((long) most * size <= 17L << 20 && (long) (most + 1) * size > 16L << 20,
                    "about 16 MiB of " + size + "-byte buffers: " + most);
            List<ByteBuffer> taken = new ArrayList<>();
            for (int i = 0; i < most + 3; i++) {
                taken.add(pool.take(size));
            }
            assertEquals(most + 3, pool.lent());
            taken.forEach(pool::give);
            assertEquals(0, pool.lent());
            assertEquals(most, pool.kept(size), "kept of " + size);
        }
        assertEquals(64, pool.kept(1));
        assertEquals(16, pool.kept(SIZES[1]));
    }
}
