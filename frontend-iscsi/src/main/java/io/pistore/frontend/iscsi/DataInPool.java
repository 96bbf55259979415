package io.pistore.frontend.iscsi;

import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Direct buffers that READs are read into and sent from, and that WRITEs' data is read into from
 * the socket, shared by a server's sessions: the blocks go between the volume's file and the socket
 * without a zeroed heap array and without the copies through the JDK's temporary direct buffers. A
 * read's buffer is taken when the engine request starts and given back once its Data-In was written
 * (or the task was aborted); a write's when its command arrives, and given back once the task is
 * answered or aborted and, if it waited for Data-Out, dropped by the reader ({@link PendingWrites}).
 * <p>
 * Four sizes: {@value #SIZE} bytes (at most 64 kept), then 1, 2 and 4 MiB of 512-byte blocks with
 * their tuples (at most 16, 8 and 4 kept): about 16 MiB of each, 65 MiB at most. A transfer takes a
 * buffer of the smallest size that holds it; the largest, {@value #LARGEST} bytes, holds the largest
 * transfer a LUN allows by default (4 MiB of blocks, the block limits page) with PI on the wire, so
 * only a server configured for larger transfers meets one that takes none (it uses heap arrays).
 */
final class DataInPool {
    /** The buffers of the smallest size, and the largest transfer that takes one. */
    static final int SIZE = 262_144;
    /** The largest transfer, in bytes on the wire, that takes a pooled buffer: 4 MiB of 512-byte blocks with their tuples. */
    static final int LARGEST = 4_259_840;

    /** The sizes, smallest first; each above the first is 2^k MiB of 512-byte blocks with 8-byte tuples. */
    private static final int[] SIZES = {SIZE, 1_064_960, 2_129_920, LARGEST};
    /** How many buffers of each size are kept: about 16 MiB of each. */
    private static final int[] MOST = {64, 16, 8, 4};

    /**
     * The buffers waiting, by size; last in, first out: the buffer given back last is the one most
     * likely still in the CPU's cache.
     */
    @SuppressWarnings("unchecked")
    private final ConcurrentLinkedDeque<ByteBuffer>[] free = new ConcurrentLinkedDeque[SIZES.length];
    /** How many wait, by size (a deque's own size is not constant-time). */
    private final AtomicInteger[] kept = new AtomicInteger[SIZES.length];
    /** Buffers taken and not given back. */
    private final AtomicInteger lent = new AtomicInteger();

    DataInPool() {
        for (int i = 0; i < SIZES.length; i++) {
            free[i] = new ConcurrentLinkedDeque<>();
            kept[i] = new AtomicInteger();
        }
    }

    private static int classIndex(int len) {
        for (int i = 0; i < SIZES.length; i++) {
            if (len <= SIZES[i]) {
                return i;
            }
        }
        throw new IllegalArgumentException("a pooled buffer holds at most " + LARGEST + " bytes, not " + len);
    }

    /** The capacity of the buffer a transfer of {@code len} bytes takes (at most {@link #LARGEST}). */
    static int capacityFor(int len) {
        return SIZES[classIndex(len)];
    }

    /** How many buffers of the size a transfer of {@code len} bytes takes are kept at most. */
    static int mostKept(int len) {
        return MOST[classIndex(len)];
    }

    /** A direct buffer whose position is 0 and limit {@code len} (at most {@link #LARGEST}). */
    ByteBuffer take(int len) {
        int c = classIndex(len);
        ByteBuffer b = free[c].pollFirst();
        if (b == null) {
            b = ByteBuffer.allocateDirect(SIZES[c]);
        } else {
            kept[c].decrementAndGet();
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
        int c = classIndex(b.capacity());
        if (kept[c].incrementAndGet() <= MOST[c]) {
            free[c].addFirst(b);
        } else {
            kept[c].decrementAndGet();
        }
    }

    /** Buffers of the size {@code len} takes that wait in the pool now (tests). */
    int kept(int len) {
        return kept[classIndex(len)].get();
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

    /**
     * Whether the data segment ({@code len} bytes) of SCSI Command {@code p} is the whole of a
     * WRITE(10/12/16) small enough for a pooled buffer: then the reader places it in one
     * ({@link PduChannel.Placement}) for {@link ScsiLun#start}, with no zeroed heap array and no copy.
     */
    static boolean placesWrite(Pdu p, int len) {
        return p.opcode() == Pdu.SCSI_COMMAND && (p.flags() & 0x20) != 0 && len == p.u32(20) && pooledWrite(p.bhs[32], len);
    }

    /** Whether a command of this operation code and expected length writes from a pooled buffer. */
    static boolean pooledWrite(byte opcode, long edtl) {
        int op = opcode & 0xff;
        return (op == 0x2A || op == 0xAA || op == 0x8A) && edtl <= LARGEST;
    }
}
