package io.pistore.integrity.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * CRC-16/T10-DIF (poly 0x8BB7, init 0, MSB first, no final xor), table driven, slicing by 16.
 * The state is the raw 16-bit register, so a seed is simply the initial register and chaining across
 * a split passes the previous value on.
 *
 * <p>Speed notes ({@code GuardBench} in the {@code benchmarks} module times them; figures in
 * integrity/README.md, variants that lost in docs/history.md): the 16 tables are one flat
 * {@code int[]} (a {@code char[]} of half the size loses except under the heaviest load). One run ({@link #update}) reads its bytes one by one, each load feeding a table index
 * directly. {@link #updateBlocks} runs four blocks in one loop, because one block's slicing step is a
 * chain of dependent table loads that leaves the CPU idle and four independent chains fill it; there
 * the loads would be the bottleneck, so it reads big-endian longs (a byte-buffer view
 * {@link VarHandle}, for heap, direct and read-only buffers alike, whatever their byte order; a
 * byte-array view for heap buffers is no faster, docs/history.md) and cuts them into bytes with shifts.
 */
public final class Crc16T10Dif extends GuardAlgorithm {
    public static final Crc16T10Dif INSTANCE = new Crc16T10Dif();
    static final int POLY = 0x8BB7;
    private static final VarHandle BE_LONG_BUF =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

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

    private Crc16T10Dif() {
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

    /** The register after the 16 bytes {@code w1 || w2} (big-endian words) from register {@code crc}. */
    private static int step(int crc, long w1, long w2) {
        final int[] t = T;
        w1 ^= (long) crc << 48;
        return t[15 * 256 + (int) (w1 >>> 56)] ^ t[14 * 256 + ((int) (w1 >>> 48) & 0xFF)]
                ^ t[13 * 256 + ((int) (w1 >>> 40) & 0xFF)] ^ t[12 * 256 + ((int) (w1 >>> 32) & 0xFF)]
                ^ t[11 * 256 + ((int) (w1 >>> 24) & 0xFF)] ^ t[10 * 256 + ((int) (w1 >>> 16) & 0xFF)]
                ^ t[9 * 256 + ((int) (w1 >>> 8) & 0xFF)] ^ t[8 * 256 + ((int) w1 & 0xFF)]
                ^ t[7 * 256 + (int) (w2 >>> 56)] ^ t[6 * 256 + ((int) (w2 >>> 48) & 0xFF)]
                ^ t[5 * 256 + ((int) (w2 >>> 40) & 0xFF)] ^ t[4 * 256 + ((int) (w2 >>> 32) & 0xFF)]
                ^ t[3 * 256 + ((int) (w2 >>> 24) & 0xFF)] ^ t[2 * 256 + ((int) (w2 >>> 16) & 0xFF)]
                ^ t[256 + ((int) (w2 >>> 8) & 0xFF)] ^ t[(int) w2 & 0xFF];
    }

    /**
     * The register after the 16 bytes at {@code i}, read one by one: a byte load feeds a table index
     * directly, where a word needs a shift and a mask per byte (the faster choice for one long run).
     */
    private static int step(int crc, byte[] b, int i) {
        final int[] t = T;
        return t[15 * 256 + ((b[i] ^ (crc >>> 8)) & 0xFF)] ^ t[14 * 256 + ((b[i + 1] ^ crc) & 0xFF)]
                ^ t[13 * 256 + (b[i + 2] & 0xFF)] ^ t[12 * 256 + (b[i + 3] & 0xFF)]
                ^ t[11 * 256 + (b[i + 4] & 0xFF)] ^ t[10 * 256 + (b[i + 5] & 0xFF)]
                ^ t[9 * 256 + (b[i + 6] & 0xFF)] ^ t[8 * 256 + (b[i + 7] & 0xFF)]
                ^ t[7 * 256 + (b[i + 8] & 0xFF)] ^ t[6 * 256 + (b[i + 9] & 0xFF)]
                ^ t[5 * 256 + (b[i + 10] & 0xFF)] ^ t[4 * 256 + (b[i + 11] & 0xFF)]
                ^ t[3 * 256 + (b[i + 12] & 0xFF)] ^ t[2 * 256 + (b[i + 13] & 0xFF)]
                ^ t[256 + (b[i + 14] & 0xFF)] ^ t[b[i + 15] & 0xFF];
    }

    private static int step(int crc, ByteBuffer b, int i) {
        final int[] t = T;
        return t[15 * 256 + ((b.get(i) ^ (crc >>> 8)) & 0xFF)] ^ t[14 * 256 + ((b.get(i + 1) ^ crc) & 0xFF)]
                ^ t[13 * 256 + (b.get(i + 2) & 0xFF)] ^ t[12 * 256 + (b.get(i + 3) & 0xFF)]
                ^ t[11 * 256 + (b.get(i + 4) & 0xFF)] ^ t[10 * 256 + (b.get(i + 5) & 0xFF)]
                ^ t[9 * 256 + (b.get(i + 6) & 0xFF)] ^ t[8 * 256 + (b.get(i + 7) & 0xFF)]
                ^ t[7 * 256 + (b.get(i + 8) & 0xFF)] ^ t[6 * 256 + (b.get(i + 9) & 0xFF)]
                ^ t[5 * 256 + (b.get(i + 10) & 0xFF)] ^ t[4 * 256 + (b.get(i + 11) & 0xFF)]
                ^ t[3 * 256 + (b.get(i + 12) & 0xFF)] ^ t[2 * 256 + (b.get(i + 13) & 0xFF)]
                ^ t[256 + (b.get(i + 14) & 0xFF)] ^ t[b.get(i + 15) & 0xFF];
    }

    private static int bytes(int crc, byte[] b, int i, int end) {
        for (; i < end; i++) {
            crc = ((crc << 8) ^ T[((crc >>> 8) ^ b[i]) & 0xFF]) & 0xFFFF;
        }
        return crc;
    }

    private static int bytes(int crc, ByteBuffer b, int i, int end) {
        for (; i < end; i++) {
            crc = ((crc << 8) ^ T[((crc >>> 8) ^ b.get(i)) & 0xFF]) & 0xFFFF;
        }
        return crc;
    }

    private static long word(ByteBuffer b, int i) {
        return (long) BE_LONG_BUF.get(b, i);
    }

    private static int run(int crc, byte[] b, int i, int len) {
        int end = i + len;
        for (; end - i >= 16; i += 16) {
            crc = step(crc, b, i);
        }
        return bytes(crc, b, i, end);
    }

    private static int run(int crc, ByteBuffer b, int i, int len) {
        int end = i + len;
        for (; end - i >= 16; i += 16) {
            crc = step(crc, b, i);
        }
        return bytes(crc, b, i, end);
    }

    @Override
    public long update(long state, byte[] b, int off, int len) {
        return run((int) state & 0xFFFF, b, off, len);
    }

    @Override
    protected long updateDirect(long state, ByteBuffer b, int off, int len) {
        return run((int) state & 0xFFFF, b, off, len);
    }

    @Override
    public void updateBlocks(ByteBuffer b, int off, int stride, int len, int count, long seed, long[] statesOut) {
        int s0 = (int) start(seed);
        blocks(b, off, stride, len, count, s0, statesOut);
    }

    private static void blocks(ByteBuffer b, int p, int stride, int len, int count, int s0, long[] out) {
        int body = len & ~15;
        int k = 0;
        for (; count - k >= 4; k += 4, p += 4 * stride) {
            int p1 = p + stride;
            int p2 = p1 + stride;
            int p3 = p2 + stride;
            int c0 = s0;
            int c1 = s0;
            int c2 = s0;
            int c3 = s0;
            for (int i = 0; i < body; i += 16) {
                c0 = step(c0, word(b, p + i), word(b, p + i + 8));
                c1 = step(c1, word(b, p1 + i), word(b, p1 + i + 8));
                c2 = step(c2, word(b, p2 + i), word(b, p2 + i + 8));
                c3 = step(c3, word(b, p3 + i), word(b, p3 + i + 8));
            }
            out[k] = bytes(c0, b, p + body, p + len);
            out[k + 1] = bytes(c1, b, p1 + body, p1 + len);
            out[k + 2] = bytes(c2, b, p2 + body, p2 + len);
            out[k + 3] = bytes(c3, b, p3 + body, p3 + len);
        }
        for (; k < count; k++, p += stride) {
            out[k] = run(s0, b, p, len);
        }
    }
}
