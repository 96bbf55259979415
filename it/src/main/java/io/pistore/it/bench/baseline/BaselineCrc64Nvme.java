package io.pistore.it.bench.baseline;

import io.pistore.integrity.internal.GuardAlgorithm;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * <b>Frozen copy of the starting kernel</b> (commit 6798303), kept only so that the JMH benchmarks can
 * measure the library's current kernel against it side by side in one run. Not used by the library.
 *
 * <p>CRC-64/NVME (poly 0xAD93D23594C93659 reflected, init and final xor all-ones), table driven,
 * slicing by 8. The state is the inverted register; seed 0 gives the standard CRC.
 */
public final class BaselineCrc64Nvme extends GuardAlgorithm {
    public static final BaselineCrc64Nvme INSTANCE = new BaselineCrc64Nvme();
    /** The polynomial in reflected (LSB-first) form. */
    public static final long POLY_REFLECTED = Long.reverse(0xAD93D23594C93659L);
    private static final VarHandle LE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** T[k * 256 + b]: register after byte b followed by k zero bytes, k = 0..7. */
    private static final long[] T = new long[8 * 256];

    static {
        for (int b = 0; b < 256; b++) {
            long c = b;
            for (int i = 0; i < 8; i++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ POLY_REFLECTED : c >>> 1;
            }
            T[b] = c;
        }
        for (int k = 1; k < 8; k++) {
            for (int b = 0; b < 256; b++) {
                long p = T[(k - 1) * 256 + b];
                T[k * 256 + b] = (p >>> 8) ^ T[(int) p & 0xFF];
            }
        }
    }

    BaselineCrc64Nvme() {
    }

    @Override
    public long start(long seed) {
        return ~seed;
    }

    @Override
    public long finish(long state) {
        return ~state;
    }

    @Override
    public String name() {
        return "crc64-nvme";
    }

    private static long slice8(long crc, long w) {
        final long[] t = T;
        w ^= crc;
        return t[7 * 256 + ((int) w & 0xFF)] ^ t[6 * 256 + ((int) (w >>> 8) & 0xFF)]
                ^ t[5 * 256 + ((int) (w >>> 16) & 0xFF)] ^ t[4 * 256 + ((int) (w >>> 24) & 0xFF)]
                ^ t[3 * 256 + ((int) (w >>> 32) & 0xFF)] ^ t[2 * 256 + ((int) (w >>> 40) & 0xFF)]
                ^ t[256 + ((int) (w >>> 48) & 0xFF)] ^ t[(int) (w >>> 56)];
    }

    @Override
    public long update(long state, byte[] b, int off, int len) {
        long crc = state;
        int i = off;
        int end = off + len;
        while (end - i >= 8) {
            crc = slice8(crc, (long) LE_LONG.get(b, i));
            i += 8;
        }
        while (i < end) {
            crc = T[((int) crc ^ b[i]) & 0xFF] ^ (crc >>> 8);
            i++;
        }
        return crc;
    }

    @Override
    protected long updateDirect(long state, ByteBuffer b, int off, int len) {
        long crc = state;
        int i = off;
        int end = off + len;
        while (end - i >= 8) {
            crc = slice8(crc, Long.reverseBytes(b.getLong(i)));
            i += 8;
        }
        while (i < end) {
            crc = T[((int) crc ^ b.get(i)) & 0xFF] ^ (crc >>> 8);
            i++;
        }
        return crc;
    }
}
