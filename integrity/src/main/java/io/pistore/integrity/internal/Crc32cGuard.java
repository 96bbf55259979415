package io.pistore.integrity.internal;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * CRC-32C (Castagnoli; reflected, init and final xor all-ones). Long runs go through the JDK's
 * {@link CRC32C}, which the JIT turns into the CPU's crc32 instruction; the JDK always starts from
 * all-ones, so a different starting register (a guard seed, or the continuation of a split block)
 * is added afterwards by shifting the difference through the run length in GF(2). Short runs use a
 * table, which is cheaper than an intrinsic call plus a shift.
 *
 * <p>{@link #updateBlocks} keeps one {@link CRC32C} (and, for a direct buffer, one view of it) for the
 * whole run and shifts a seed's difference once for all blocks (every block has the same length), so
 * a block costs the intrinsic and nothing else.
 *
 * <p>The state is the (non-inverted) register; seed 0 gives the standard CRC.
 */
public final class Crc32cGuard extends GuardAlgorithm {
    public static final Crc32cGuard INSTANCE = new Crc32cGuard();
    public static final long POLY_REFLECTED = 0x82F63B78L;
    private static final long MASK = 0xFFFFFFFFL;
    private static final int SHORT_RUN = 64;
    private static final ReflectedGf2 GF = new ReflectedGf2(POLY_REFLECTED, 32);
    private static final int[] T = new int[256];

    static {
        for (int b = 0; b < 256; b++) {
            int c = b;
            for (int i = 0; i < 8; i++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ (int) POLY_REFLECTED : c >>> 1;
            }
            T[b] = c;
        }
    }

    private Crc32cGuard() {
    }

    @Override
    public long start(long seed) {
        return ~seed & MASK;
    }

    @Override
    public long finish(long state) {
        return ~state & MASK;
    }

    @Override
    public String name() {
        return "crc32c";
    }

    /** What a run adds to the register the JDK produced from all-ones when it starts from {@code state}. */
    private static long rebaseTerm(long state, int len) {
        long diff = state ^ MASK;
        return diff == 0 ? 0 : GF.shift(diff, len);
    }

    private static int tableRun(int c, byte[] b, int off, int len) {
        for (int i = off, end = off + len; i < end; i++) {
            c = T[(c ^ b[i]) & 0xFF] ^ (c >>> 8);
        }
        return c;
    }

    private static int tableRun(int c, ByteBuffer b, int off, int len) {
        for (int i = off, end = off + len; i < end; i++) {
            c = T[(c ^ b.get(i)) & 0xFF] ^ (c >>> 8);
        }
        return c;
    }

    @Override
    public long update(long state, byte[] b, int off, int len) {
        if (len < SHORT_RUN) {
            return tableRun((int) state, b, off, len) & MASK;
        }
        CRC32C crc = new CRC32C();
        crc.update(b, off, len);
        return (~crc.getValue() & MASK) ^ rebaseTerm(state, len);
    }

    @Override
    protected long updateDirect(long state, ByteBuffer b, int off, int len) {
        if (len < SHORT_RUN) {
            return tableRun((int) state, b, off, len) & MASK;
        }
        ByteBuffer d = b.duplicate();
        d.limit(off + len).position(off);
        CRC32C crc = new CRC32C();
        crc.update(d);
        return (~crc.getValue() & MASK) ^ rebaseTerm(state, len);
    }

    @Override
    public void updateBlocks(ByteBuffer b, int off, int stride, int len, int count, long seed, long[] statesOut) {
        long s0 = start(seed);
        if (len < SHORT_RUN || count <= 0) {
            super.updateBlocks(b, off, stride, len, count, seed, statesOut);
            return;
        }
        long term = rebaseTerm(s0, len);
        CRC32C crc = new CRC32C();
        if (b.hasArray()) {
            byte[] a = b.array();
            int p = b.arrayOffset() + off;
            for (int k = 0; k < count; k++, p += stride) {
                crc.reset();
                crc.update(a, p, len);
                statesOut[k] = (~crc.getValue() & MASK) ^ term;
            }
        } else {
            // One view for the run; CRC32C reads [position, limit) (a direct buffer through its
            // address, a read-only heap buffer through a copy) and moves the position to the limit.
            ByteBuffer d = b.duplicate();
            int p = off;
            for (int k = 0; k < count; k++, p += stride) {
                d.limit(p + len).position(p);
                crc.reset();
                crc.update(d);
                statesOut[k] = (~crc.getValue() & MASK) ^ term;
            }
        }
    }
}
