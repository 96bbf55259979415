package io.pistore.engine.volume.file;

import io.pistore.integrity.ScatterList;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The pages of a data file in memory (tmpfs) that a read has found data in, for a format without
 * metadata, whose blocks have nothing that tells a hole: those pages are read out of the mapping,
 * every other one with {@code pread}, which returns a hole's zeros without allocating it (touching a
 * hole through a mapping allocates its page, and on a full tmpfs faults). A page is marked once a
 * positional read found a non-zero byte in it: a hole reads as zeros only, so such a page is
 * allocated, and nothing punches holes into a data file while it is open. A page of written zeros
 * stays unmarked and is read positionally, which is correct, only slower. Marks may be lost to a
 * race between two readers (the page is then read positionally once more); a page is never marked
 * that holds no data. One bit per 4 KiB page.
 */
final class DataPagesSeen {
    static final int PAGE = 4096;
    private static final VarHandle BITS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final byte[] ZERO_PAGE = new byte[PAGE];
    private final long[] bits;

    DataPagesSeen(long fileSize) {
        this.bits = new long[(int) ((fileSize / PAGE + 1 + 63) / 64)];
    }

    boolean seen(long page) {
        return ((long) BITS.getOpaque(bits, (int) (page >>> 6)) & 1L << page) != 0;
    }

    /**
     * Marks the pages of file bytes {@code [from, to)} in which {@code out} holds a non-zero byte;
     * {@code out} holds those bytes from offset {@code outOff}.
     */
    void markData(ScatterList out, long outOff, long from, long to) {
        for (long page = from / PAGE; page * PAGE < to; page++) {
            long a = Math.max(from, page * PAGE);
            long b = Math.min(to, (page + 1) * PAGE);
            if (!seen(page) && !out.contentEquals(outOff + a - from, ZERO_PAGE, 0, (int) (b - a))) {
                BITS.getAndBitwiseOr(bits, (int) (page >>> 6), 1L << page);
            }
        }
    }
}
