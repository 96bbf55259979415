package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BufferPoolTest {
    @Test
    void aBufferComesBackWithItsRequestedLimitAndPositionZero() {
        BufferPool pool = new BufferPool(2);
        BufferPool.Buf b = pool.acquire(4104);
        assertEquals(0, b.buffer.position());
        assertEquals(4104, b.buffer.limit());
        assertEquals(8192, b.buffer.capacity(), "the power-of-two class above the size");
        assertEquals(4104, b.list().length());
        assertSame(b.list(), b.list(), "one list while the size stays");
        b.buffer.position(100);
        pool.release(b);
        BufferPool.Buf again = pool.acquire(5000);
        assertSame(b, again);
        assertEquals(0, again.buffer.position());
        assertEquals(5000, again.buffer.limit());
        assertEquals(5000, again.list().length(), "a new list for a new size");
        again.buffer.put(4999, (byte) 7);
        byte[] last = new byte[1];
        again.list().read(4999, last, 0, 1);
        assertEquals(7, last[0], "the list is a view of the buffer");
    }

    @Test
    void keepsOnlyAsManyPerClassAsItIsAskedTo() {
        BufferPool pool = new BufferPool(2);
        assertEquals(2, reused(pool, 32), "two kept, the others dropped");
        pool.keepAtLeast(32);
        reused(pool, 32); // fills the pool up to 32
        assertEquals(32, reused(pool, 32), "after keepAtLeast(32) a queue 32 deep reuses every buffer");
        pool.keepAtLeast(4);
        assertEquals(32, reused(pool, 32), "keepAtLeast never lowers the count");
    }

    @Test
    void buffersUpTo8MiBAreKeptWithin16MiBPerClass() {
        BufferPool pool = new BufferPool(4);
        pool.keepAtLeast(128);
        for (int size : new int[] {(1 << 20) + 1, 2 << 20, 4 << 20, 8 << 20}) {
            List<BufferPool.Buf> taken = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                taken.add(pool.acquire(size));
            }
            int cap = taken.get(0).buffer.capacity();
            assertEquals(Integer.highestOneBit(size - 1) << 1, cap, "the power-of-two class above " + size);
            taken.forEach(pool::release);
            int kept = Math.min(12, BufferPool.KEPT_BYTES / cap);
            assertEquals(kept, pool.kept(size), "a queue 128 deep keeps at most 16 MiB of " + cap + "-byte buffers");
            Map<BufferPool.Buf, Boolean> mine = new IdentityHashMap<>();
            taken.forEach(b -> mine.put(b, true));
            for (int i = 0; i < kept; i++) {
                assertTrue(mine.containsKey(pool.acquire(size)), "a kept " + cap + "-byte buffer is reused");
            }
            assertFalse(mine.containsKey(pool.acquire(size)), "past what was kept, a new one");
        }
        List<BufferPool.Buf> small = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            small.add(pool.acquire(1 << 20));
        }
        small.forEach(pool::release);
        assertEquals(40, pool.kept(1 << 20), "1 MiB buffers are kept as deep as the queue was, past 16 MiB");
    }

    @Test
    void buffersBeyondTheLargestClassAreNotKept() {
        BufferPool pool = new BufferPool(4);
        BufferPool.Buf big = pool.acquire((8 << 20) + 1);
        assertEquals((8 << 20) + 1, big.buffer.capacity());
        pool.release(big);
        assertNotSame(big, pool.acquire((8 << 20) + 1));
        pool.release(null); // a request without metadata releases null: nothing happens
        BufferPool.Buf odd = new BufferPool.Buf(ByteBuffer.allocate(3000));
        pool.release(odd); // not one of the pool's (not a power of two): dropped
        assertEquals(4096, pool.acquire(3000).buffer.capacity());
    }

    /** Acquires n buffers of one class at once, releases them, and counts how many of the next n were reused. */
    private static int reused(BufferPool pool, int n) {
        List<BufferPool.Buf> first = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            first.add(pool.acquire(4096));
        }
        first.forEach(pool::release);
        Map<BufferPool.Buf, Boolean> seen = new IdentityHashMap<>();
        first.forEach(b -> seen.put(b, true));
        List<BufferPool.Buf> second = new ArrayList<>();
        int hits = 0;
        for (int i = 0; i < n; i++) {
            BufferPool.Buf b = pool.acquire(4096);
            second.add(b);
            if (seen.containsKey(b)) {
                hits++;
            }
        }
        second.forEach(pool::release);
        return hits;
    }
}
