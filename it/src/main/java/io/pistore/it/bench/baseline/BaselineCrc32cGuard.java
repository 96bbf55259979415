package io.pistore.it.bench.baseline;

import io.pistore.integrity.internal.GuardAlgorithm;
import io.pistore.integrity.internal.ReflectedGf2;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * <b>Frozen copy of the starting kernel</b> (commit 6798303), kept only so that the JMH benchmarks can
 * measure the library's current kernel against it side by side in one run. Not used by the library.
 *
 * <p>CRC-32C (Castagnoli; reflected, init and final xor all-ones). Long runs go through the JDK's
 * {@link CRC32C}, which the JIT turns into the CPU's crc32 instruction; the JDK always starts from
 * all-ones, so a different starting register (a guard seed, or the continuation of a split block)
 * is added afterwards by shifting the difference through the run length in GF(2). Short runs use a
 * table, which is cheaper than an intrinsic call plus a shift.
 *
 * <p>The state is the (non-inverted) register; seed 0 gives the standard CRC.
 */
public final class BaselineCrc32cGuard extends GuardAlgorithm {
    public static final BaselineCrc32cGuard INSTANCE = new BaselineCrc32cGuard();
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

    BaselineCrc32cGuard() {
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

    /** The register after the run, given the register the JDK produced from all-ones. */
    private static long rebase(long state, long jdkValue, int len) {
        long reg = ~jdkValue & MASK;
        long diff = state ^ MASK;
        return diff == 0 ? reg : reg ^ GF.shift(diff, len);
    }

    @Override
    public long update(long state, byte[] b, int off, int len) {
        if (len < SHORT_RUN) {
            int c = (int) state;
            for (int i = off, end = off + len; i < end; i++) {
                c = T[(c ^ b[i]) & 0xFF] ^ (c >>> 8);
            }
            return c & MASK;
        }
        CRC32C crc = new CRC32C();
        crc.update(b, off, len);
        return rebase(state, crc.getValue(), len);
    }

    @Override
    protected long updateDirect(long state, ByteBuffer b, int off, int len) {
        if (len < SHORT_RUN) {
            int c = (int) state;
            for (int i = off, end = off + len; i < end; i++) {
                c = T[(c ^ b.get(i)) & 0xFF] ^ (c >>> 8);
            }
            return c & MASK;
        }
        ByteBuffer d = b.duplicate();
        d.limit(off + len).position(off);
        CRC32C crc = new CRC32C();
        crc.update(d);
        return rebase(state, crc.getValue(), len);
    }
}
