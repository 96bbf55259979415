package io.pistore.frontend.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A connection's reply and payload buffers: direct and pooled up to 8 MiB of data, bounded in bytes kept. */
class ReplyPoolTest {
    @Test
    void everySizeUpTo8MiBIsDirectAndReused() {
        ReplyPool pool = new ReplyPool(new Object());
        for (int len : new int[] {1, 4096, 4097, 1 << 20, (1 << 20) + 1, 2 << 20, 4 << 20, (4 << 20) + 512, 8 << 20}) {
            ByteBuffer b = pool.take(28, len);
            assertTrue(b.isDirect(), len + " bytes");
            assertEquals(0, b.position());
            assertEquals(28 + len, b.limit());
            assertTrue(b.capacity() >= 28 + len && b.capacity() < 32 + 2L * Math.max(len, 4096), len + ": " + b.capacity());
            pool.recycle(b);
            assertSame(b, pool.take(0, len), "taken again after its recycle: " + len);
        }
        ByteBuffer beyond = pool.take(0, (8 << 20) + 1);
        assertFalse(beyond.isDirect(), "past 8 MiB a heap buffer");
        assertEquals((8 << 20) + 1, beyond.limit());
        pool.recycle(beyond);
        assertEquals(0, pool.pooledBytes(), "a heap buffer is not kept");
    }

    @Test
    void atMost16MiBWaitInThePool() {
        ReplyPool pool = new ReplyPool(new Object());
        List<ByteBuffer> taken = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            taken.add(pool.take(0, 4 << 20));
        }
        taken.forEach(pool::recycle);
        assertEquals(3L * (32 + (4 << 20)), pool.pooledBytes(), "three 4 MiB buffers fit under 16 MiB, not four");
        assertTrue(pool.pooledBytes() <= ReplyPool.POOLED_BYTES);
    }
}
