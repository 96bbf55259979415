package io.pistore.transport.tcp.internal;

import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Heap buffers for the target's request data and metadata, reused by size class (powers of two
 * from 512 bytes to 8 MiB, the transport's largest transfer). Loop thread only. Sizes come from
 * requests whose lengths were checked against the negotiated maximum. A class keeps as many buffers
 * as the queue had in use at once ({@link #keepAtLeast}); a class above 1 MiB never more than
 * {@value #KEPT_BYTES} bytes of them: a deep queue of 8 MiB requests keeps two, not a gigabyte. Freshly allocated (and
 * zeroed), a buffer of more than 1 MiB had cost 2 MiB writes a third of their rate.
 */
final class BufferPool {
    private static final int MIN_SHIFT = 9;
    private static final int MAX_SHIFT = 23;
    /** The most bytes of buffers one class of more than 1 MiB keeps. */
    static final int KEPT_BYTES = 16 << 20;
    private final ArrayDeque<Buf>[] free;
    private int keep;

    /**
     * A pooled buffer and the scatter list over its {@code [0, limit)}, kept while requests of one
     * size follow each other (the common case: a workload of one block size), so a request makes no
     * list of its own.
     */
    static final class Buf {
        final ByteBuffer buffer;
        private ScatterList list;

        Buf(ByteBuffer buffer) {
            this.buffer = buffer;
        }

        /** A list over {@code [0, limit)} of the buffer (the one made last time when the limit is the same). */
        ScatterList list() {
            ScatterList l = list;
            if (l == null || l.length() != buffer.limit()) {
                l = list = ScatterList.of(buffer.duplicate().position(0));
            }
            return l;
        }
    }

    @SuppressWarnings("unchecked")
    BufferPool(int keepPerClass) {
        free = new ArrayDeque[MAX_SHIFT - MIN_SHIFT + 1];
        for (int i = 0; i < free.length; i++) {
            free[i] = new ArrayDeque<>();
        }
        keep = keepPerClass;
    }

    /**
     * Keeps at least {@code n} buffers per class: a queue whose depth exceeds what the pool keeps
     * would allocate (and zero) a fresh buffer for most requests once all its slots are busy. What is
     * kept never exceeds what was in use at once.
     */
    void keepAtLeast(int n) {
        keep = Math.max(keep, n);
    }

    private static int sizeClass(int size) {
        int shift = Math.max(MIN_SHIFT, 32 - Integer.numberOfLeadingZeros(Math.max(1, size) - 1));
        return shift - MIN_SHIFT;
    }

    /** A buffer with position 0 and limit {@code size}; contents are not cleared. */
    Buf acquire(int size) {
        int c = sizeClass(size);
        if (c >= free.length) {
            return new Buf(ByteBuffer.allocate(size));
        }
        Buf b = free[c].poll();
        if (b == null) {
            b = new Buf(ByteBuffer.allocate(1 << (c + MIN_SHIFT)));
        }
        b.buffer.clear().limit(size);
        return b;
    }

    /** Buffers of the class {@code size} falls in that wait in the pool (tests). */
    int kept(int size) {
        int c = sizeClass(size);
        return c < free.length ? free[c].size() : 0;
    }

    void release(Buf b) {
        if (b == null) {
            return;
        }
        int cap = b.buffer.capacity();
        if (Integer.bitCount(cap) != 1) {
            return;
        }
        int c = sizeClass(cap);
        int most = cap > 1 << 20 ? Math.min(keep, KEPT_BYTES / cap) : keep;
        if (c < free.length && free[c].size() < most) {
            free[c].push(b);
        }
    }
}
