package io.pistore.frontend.nbd;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * Direct buffers for one connection's read replies and write payloads, by data size class
 * (4 KiB << class), returned once written (a reply) or stored (a payload). The volume's bytes are
 * copied once into memory the socket sends from, where a heap buffer costs a zeroing and one more
 * copy into the JDK's temporary direct buffer.
 *
 * <p>The pool shares the lock of the {@link ReplyWriter} that returns written replies to it, so a
 * reply is recycled inside the writer's critical section without a second lock.
 */
final class ReplyPool {
    /**
     * Replies and payloads up to 4 KiB << (CLASSES - 1) = 8 MiB of data, the largest an export takes,
     * use pooled direct buffers (a heap buffer beyond 1 MiB cost 2 MiB requests a third of their rate).
     */
    static final int CLASSES = 12;
    /** Room for the largest read reply header (structured: 20 + 8 bytes). */
    private static final int HEADER_ROOM = 32;
    private static final int POOLED_PER_CLASS = 64;
    /** At most this many bytes of buffers wait in one connection's pool, whatever their sizes. */
    static final long POOLED_BYTES = 16L << 20;

    private final Object lock;
    /** Guarded by {@link #lock}. */
    @SuppressWarnings("unchecked")
    private final ArrayDeque<ByteBuffer>[] classes = new ArrayDeque[CLASSES];
    /** Guarded by {@link #lock}. */
    private long pooledBytes;

    ReplyPool(Object lock) {
        this.lock = lock;
    }

    /**
     * A buffer of {@code header + len} bytes between position 0 and the limit ({@code header} at most
     * 32): pooled and direct for 1 byte to 8 MiB of data, a heap buffer otherwise.
     */
    ByteBuffer take(int header, int len) {
        int cls = 32 - Integer.numberOfLeadingZeros((len - 1) >>> 12);
        if (cls >= CLASSES) {
            return ByteBuffer.allocate(header + len);
        }
        ByteBuffer b;
        synchronized (lock) {
            ArrayDeque<ByteBuffer> q = classes[cls];
            b = q == null ? null : q.poll();
            if (b != null) {
                pooledBytes -= b.capacity();
            }
        }
        if (b == null) {
            b = ByteBuffer.allocateDirect(HEADER_ROOM + (4096 << cls));
        }
        b.clear().limit(header + len);
        return b;
    }

    /** Bytes of buffers waiting in the pool (tests). */
    long pooledBytes() {
        synchronized (lock) {
            return pooledBytes;
        }
    }

    /** Returns a buffer that is no longer used (any buffer: those not from the pool are dropped); any thread. */
    void recycle(ByteBuffer b) {
        synchronized (lock) {
            recycleLocked(b);
        }
    }

    /** The same, for a caller that holds the lock already. */
    void recycleLocked(ByteBuffer b) {
        if (!b.isDirect()) {
            return;
        }
        int cls = Integer.numberOfTrailingZeros((b.capacity() - HEADER_ROOM) >>> 12);
        ArrayDeque<ByteBuffer> q = classes[cls];
        if (q == null) {
            q = classes[cls] = new ArrayDeque<>();
        }
        if (q.size() < POOLED_PER_CLASS && pooledBytes + b.capacity() <= POOLED_BYTES) {
            q.push(b);
            pooledBytes += b.capacity();
        }
    }
}
