package io.pistore.frontend.iscsi;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Direct buffers that READs are read into and sent from, shared by a server's sessions: the blocks
 * go from the volume's file to the socket without a zeroed heap array and without the copies
 * through the JDK's temporary direct buffers. A buffer is taken when the engine request starts and
 * given back once its Data-In was written (or the task was aborted); at most {@value #POOLED} of
 * {@value #SIZE} bytes each are kept, and a larger read gets none (it uses a heap array).
 */
final class DataInPool {
    /** The largest read, in bytes on the wire, that takes a pooled buffer. */
    static final int SIZE = 262_144;
    private static final int POOLED = 64;

    private final ConcurrentLinkedQueue<ByteBuffer> free = new ConcurrentLinkedQueue<>();
    private final AtomicInteger kept = new AtomicInteger();

    /** A direct buffer whose position is 0 and limit {@code len} (at most {@link #SIZE}). */
    ByteBuffer take(int len) {
        ByteBuffer b = free.poll();
        if (b == null) {
            b = ByteBuffer.allocateDirect(SIZE);
        } else {
            kept.decrementAndGet();
        }
        b.clear().limit(len);
        return b;
    }

    /** Gives back a buffer from {@link #take} that nothing uses any more; null is ignored. */
    void give(ByteBuffer b) {
        if (b != null && kept.incrementAndGet() <= POOLED) {
            free.add(b);
        } else if (b != null) {
            kept.decrementAndGet();
        }
    }
}
