package io.pistore.transport.tcp.internal;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Heap buffers for the target's request data and metadata, reused by size class (powers of two
 * from 512 bytes to 1 MiB; larger buffers are not kept). Loop thread only. Sizes come from requests
 * whose lengths were checked against the negotiated maximum.
 */
final class BufferPool {
    private static final int MIN_SHIFT = 9;
    private static final int MAX_SHIFT = 20;
    private final ArrayDeque<ByteBuffer>[] free;
    private final int keep;

    @SuppressWarnings("unchecked")
    BufferPool(int keepPerClass) {
        free = new ArrayDeque[MAX_SHIFT - MIN_SHIFT + 1];
        for (int i = 0; i < free.length; i++) {
            free[i] = new ArrayDeque<>();
        }
        keep = keepPerClass;
    }

    private static int sizeClass(int size) {
        int shift = Math.max(MIN_SHIFT, 32 - Integer.numberOfLeadingZeros(Math.max(1, size) - 1));
        return shift - MIN_SHIFT;
    }

    /** A buffer with position 0 and limit {@code size}; contents are not cleared. */
    ByteBuffer acquire(int size) {
        int c = sizeClass(size);
        if (c >= free.length) {
            return ByteBuffer.allocate(size);
        }
        ByteBuffer b = free[c].poll();
        if (b == null) {
            b = ByteBuffer.allocate(1 << (c + MIN_SHIFT));
        }
        b.clear().limit(size);
        return b;
    }

    void release(ByteBuffer b) {
        if (b == null) {
            return;
        }
        int cap = b.capacity();
        if (Integer.bitCount(cap) != 1) {
            return;
        }
        int c = sizeClass(cap);
        if (c < free.length && free[c].size() < keep) {
            free[c].push(b);
        }
    }
}
