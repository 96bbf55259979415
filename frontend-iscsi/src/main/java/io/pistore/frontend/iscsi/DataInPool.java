package io.pistore.frontend.iscsi;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Direct buffers that READs are read into and sent from, and that WRITEs' data is read into from
 * the socket, shared by a server's sessions: the blocks go between the volume's file and the socket
 * without a zeroed heap array and without the copies through the JDK's temporary direct buffers. A
 * read's buffer is taken when the engine request starts and given back once its Data-In was written
 * (or the task was aborted); a write's when its command arrives, and given back once the task is
 * answered or aborted and, if it waited for Data-Out, dropped by the reader ({@link PendingWrites}). At most {@value #POOLED} of {@value #SIZE} bytes each are kept, and a
 * larger transfer gets none (it uses a heap array).
 */
final class DataInPool {
    /** The largest read, in bytes on the wire, that takes a pooled buffer. */
    static final int SIZE = 262_144;
    private static final int POOLED = 64;

    private final ConcurrentLinkedQueue<ByteBuffer> free = new ConcurrentLinkedQueue<>();
    private final AtomicInteger kept = new AtomicInteger();
    /** Buffers taken and not given back. */
    private final AtomicInteger lent = new AtomicInteger();

    /** A direct buffer whose position is 0 and limit {@code len} (at most {@link #SIZE}). */
    ByteBuffer take(int len) {
        ByteBuffer b = free.poll();
        if (b == null) {
            b = ByteBuffer.allocateDirect(SIZE);
        } else {
            kept.decrementAndGet();
        }
        lent.incrementAndGet();
        b.clear().limit(len);
        return b;
    }

    /** Gives back a buffer from {@link #take} that nothing uses any more; null is ignored. */
    void give(ByteBuffer b) {
        if (b != null) {
            lent.decrementAndGet();
        }
        if (b != null && kept.incrementAndGet() <= POOLED) {
            free.add(b);
        } else if (b != null) {
            kept.decrementAndGet();
        }
    }

    /**
     * A holder let go of a buffer no longer held (a task's buffer released once too often: it went
     * back to the pool before its last user was done). Counted as a second give, so {@link #lent}
     * goes below 0 and stays there.
     */
    void releasedUnheld() {
        lent.decrementAndGet();
    }

    /** Buffers taken and not given back yet (below 0 only if one was given back twice). */
    int lent() {
        return lent.get();
    }
}
