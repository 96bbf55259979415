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
 * answered or aborted and, if it waited for Data-Out, dropped by the reader ({@link PendingWrites}).
 * Two sizes: a transfer of up to {@value #SIZE} bytes takes a buffer of that size (at most 64 kept),
 * one of up to {@value #LARGEST} a buffer of that size (at most 16 kept); a larger transfer gets
 * none (it uses heap arrays).
 */
final class DataInPool {
    /** The buffers of the smaller class, and the largest transfer that takes one. */
    static final int SIZE = 262_144;
    /** The largest transfer, in bytes on the wire, that takes a pooled buffer: 1 MiB of 512-byte blocks with their tuples. */
    static final int LARGEST = 1_064_960;

    /** Buffers of one size: at most {@code most} kept. */
    private static final class SizeClass {
        final int size;
        final int most;
        final ConcurrentLinkedQueue<ByteBuffer> free = new ConcurrentLinkedQueue<>();
        final AtomicInteger kept = new AtomicInteger();

        SizeClass(int size, int most) {
            this.size = size;
            this.most = most;
        }
    }

    private final SizeClass small = new SizeClass(SIZE, 64);
    private final SizeClass large = new SizeClass(LARGEST, 16);
    /** Buffers taken and not given back. */
    private final AtomicInteger lent = new AtomicInteger();

    /** A direct buffer whose position is 0 and limit {@code len} (at most {@link #LARGEST}). */
    ByteBuffer take(int len) {
        if (len > LARGEST) {
            throw new IllegalArgumentException("a pooled buffer holds at most " + LARGEST + " bytes, not " + len);
        }
        SizeClass c = len <= SIZE ? small : large;
        ByteBuffer b = c.free.poll();
        if (b == null) {
            b = ByteBuffer.allocateDirect(c.size);
        } else {
            c.kept.decrementAndGet();
        }
        lent.incrementAndGet();
        b.clear().limit(len);
        return b;
    }

    /** Gives back a buffer from {@link #take} that nothing uses any more; null is ignored. */
    void give(ByteBuffer b) {
        if (b == null) {
            return;
        }
        lent.decrementAndGet();
        SizeClass c = b.capacity() == SIZE ? small : large;
        if (c.kept.incrementAndGet() <= c.most) {
            c.free.add(b);
        } else {
            c.kept.decrementAndGet();
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
