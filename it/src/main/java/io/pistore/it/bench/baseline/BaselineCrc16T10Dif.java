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
 * <p>CRC-16/T10-DIF (poly 0x8BB7, init 0, MSB first, no final xor), table driven, slicing by 16.
 * The state is the raw 16-bit register, so a seed is simply the initial register and chaining across
 * a split passes the previous value on.
 */
public final class BaselineCrc16T10Dif extends GuardAlgorithm {
    public static final BaselineCrc16T10Dif INSTANCE = new BaselineCrc16T10Dif();
    static final int POLY = 0x8BB7;
    private static final VarHandle BE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    /** T[k * 256 + b]: CRC of byte b followed by k zero bytes, k = 0..15. */
    private static final int[] T = new int[16 * 256];

    static {
        for (int b = 0; b < 256; b++) {
            int c = b << 8;
            for (int i = 0; i < 8; i++) {
                c = (c & 0x8000) != 0 ? (c << 1) ^ POLY : c << 1;
            }
            T[b] = c & 0xFFFF;
        }
        for (int k = 1; k < 16; k++) {
            for (int b = 0; b < 256; b++) {
                int p = T[(k - 1) * 256 + b];
                T[k * 256 + b] = ((p << 8) ^ T[(p >>> 8) & 0xFF]) & 0xFFFF;
            }
        }
    }

    BaselineCrc16T10Dif() {
    }

    @Override
    public long start(long seed) {
        return seed & 0xFFFF;
    }

    @Override
    public long finish(long state) {
        return state & 0xFFFF;
    }

    @Override
    public String name() {
        return "crc16-t10dif";
    }

    @Override
    public long update(long state, byte[] b, int off, int len) {
        int crc = (int) state & 0xFFFF;
        int i = off;
        int end = off + len;
        final int[] t = T;
        while (end - i >= 16) {
            long w1 = (long) BE_LONG.get(b, i) ^ ((long) crc << 48);
            long w2 = (long) BE_LONG.get(b, i + 8);
            crc = t[15 * 256 + (int) (w1 >>> 56)] ^ t[14 * 256 + ((int) (w1 >>> 48) & 0xFF)]
                    ^ t[13 * 256 + ((int) (w1 >>> 40) & 0xFF)] ^ t[12 * 256 + ((int) (w1 >>> 32) & 0xFF)]
                    ^ t[11 * 256 + ((int) (w1 >>> 24) & 0xFF)] ^ t[10 * 256 + ((int) (w1 >>> 16) & 0xFF)]
                    ^ t[9 * 256 + ((int) (w1 >>> 8) & 0xFF)] ^ t[8 * 256 + ((int) w1 & 0xFF)]
                    ^ t[7 * 256 + (int) (w2 >>> 56)] ^ t[6 * 256 + ((int) (w2 >>> 48) & 0xFF)]
                    ^ t[5 * 256 + ((int) (w2 >>> 40) & 0xFF)] ^ t[4 * 256 + ((int) (w2 >>> 32) & 0xFF)]
                    ^ t[3 * 256 + ((int) (w2 >>> 24) & 0xFF)] ^ t[2 * 256 + ((int) (w2 >>> 16) & 0xFF)]
                    ^ t[256 + ((int) (w2 >>> 8) & 0xFF)] ^ t[(int) w2 & 0xFF];
            i += 16;
        }
        while (i < end) {
            crc = ((crc << 8) ^ t[((crc >>> 8) ^ b[i]) & 0xFF]) & 0xFFFF;
            i++;
        }
        return crc;
    }

    @Override
    protected long updateDirect(long state, ByteBuffer b, int off, int len) {
        int crc = (int) state & 0xFFFF;
        int i = off;
        int end = off + len;
        final int[] t = T;
        while (end - i >= 16) {
            long w1 = b.getLong(i) ^ ((long) crc << 48);
            long w2 = b.getLong(i + 8);
            crc = t[15 * 256 + (int) (w1 >>> 56)] ^ t[14 * 256 + ((int) (w1 >>> 48) & 0xFF)]
                    ^ t[13 * 256 + ((int) (w1 >>> 40) & 0xFF)] ^ t[12 * 256 + ((int) (w1 >>> 32) & 0xFF)]
                    ^ t[11 * 256 + ((int) (w1 >>> 24) & 0xFF)] ^ t[10 * 256 + ((int) (w1 >>> 16) & 0xFF)]
                    ^ t[9 * 256 + ((int) (w1 >>> 8) & 0xFF)] ^ t[8 * 256 + ((int) w1 & 0xFF)]
                    ^ t[7 * 256 + (int) (w2 >>> 56)] ^ t[6 * 256 + ((int) (w2 >>> 48) & 0xFF)]
                    ^ t[5 * 256 + ((int) (w2 >>> 40) & 0xFF)] ^ t[4 * 256 + ((int) (w2 >>> 32) & 0xFF)]
                    ^ t[3 * 256 + ((int) (w2 >>> 24) & 0xFF)] ^ t[2 * 256 + ((int) (w2 >>> 16) & 0xFF)]
                    ^ t[256 + ((int) (w2 >>> 8) & 0xFF)] ^ t[(int) w2 & 0xFF];
            i += 16;
        }
        while (i < end) {
            crc = ((crc << 8) ^ t[((crc >>> 8) ^ b.get(i)) & 0xFF]) & 0xFFFF;
            i++;
        }
        return crc;
    }
}
