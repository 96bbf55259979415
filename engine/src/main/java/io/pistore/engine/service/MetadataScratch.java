package io.pistore.engine.service;

import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;

/**
 * The metadata buffer a request needs only while the target executes it: the PI generated for an
 * insert (PRACT write without metadata), stored by the volume and then dropped, and the stored PI of
 * a strip read (PRACT read without metadata), checked and then dropped. One direct buffer per
 * thread, reused, so the steady state allocates nothing for it.
 *
 * <p><b>Concurrency contract.</b> A buffer belongs to the thread that took it, from {@link #take}
 * until {@link #release}, both on that thread, inside one synchronous {@code executeNow}; it never
 * leaves that call (volumes copy in {@code write} and out in {@code read} before they return, as the
 * {@code Volume} contract says, and the completion never refers to it). A second {@code take} on
 * the same thread before the release (a re-entrant execute) gets a fresh heap buffer instead, so
 * two requests never share one. Requests larger than {@link #KEEP_BYTES} of metadata get a fresh
 * buffer too, so a thread keeps at most that much.
 */
final class MetadataScratch {
    /** Largest metadata kept per thread: 4 MiB of 512+8 blocks, 32 MiB of 4096+8. */
    static final int KEEP_BYTES = 64 << 10;

    private static final ThreadLocal<MetadataScratch> MINE = ThreadLocal.withInitial(MetadataScratch::new);

    private ByteBuffer buffer;
    /** The list handed out last, and its length: most requests of a workload have one size. */
    private ScatterList last;
    private int lastLength = -1;
    private boolean inUse;

    private MetadataScratch() {
    }

    /** This thread's scratch. */
    static MetadataScratch mine() {
        return MINE.get();
    }

    /**
     * A list of exactly {@code length} bytes whose content is undefined (the caller overwrites it
     * all, or zeroes it first); null-free. Pair with {@link #release} in a finally block.
     */
    ScatterList take(int length) {
        if (inUse || length > KEEP_BYTES) {
            return ScatterList.of(ByteBuffer.allocate(length));
        }
        inUse = true;
        if (length != lastLength) {
            if (buffer == null || buffer.capacity() < length) {
                buffer = ByteBuffer.allocateDirect(Math.max(length, 512));
            }
            last = ScatterList.of(buffer.duplicate().clear().limit(length));
            lastLength = length;
        }
        return last;
    }

    /** Gives back what {@link #take} handed out (a fresh buffer is simply dropped). */
    void release(ScatterList list) {
        if (list == last) {
            inUse = false;
        }
    }
}
