package io.pistore.integrity.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * CRC-64/NVME (poly 0xAD93D23594C93659 reflected, init and final xor all-ones), table driven. The
 * state is the inverted register; seed 0 gives the standard CRC.
 *
 * <p>Speed notes ({@code GuardBench} in the {@code benchmarks} module times them; figures in
 * integrity/README.md, variants that lost in docs/history.md):
 * a slicing step over 8 bytes is a chain of dependent table loads (every byte of the word depends on
 * the register), so one long run goes 16 bytes a step (the second word does not depend on the
 * register), and {@link #updateBlocks} runs two blocks in one loop, 8 bytes a step each, which keeps
 * to the first half of the tables. Words are read as little-endian longs through a byte-array view
 * {@link VarHandle} (a run on the heap) or a byte-buffer view one (a run in a direct or read-only
 * buffer, and {@link #updateBlocks} in any buffer: the array view is no faster there, docs/history.md).
 */
public final class Crc64Nvme extends GuardAlgorithm {
    public static final Crc64Nvme INSTANCE = new Crc64Nvme();
    /** The polynomial in reflected (LSB-first) form. */
    public static final long POLY_REFLECTED = Long.reverse(0xAD93D23594C93659L);
    private static final VarHandle LE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle LE_LONG_BUF =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** T[k * 256 + b]: register after byte b followed by k zero bytes, k = 0..15. */
    private static final long[] T = new long[16 * 256];

    static {
        for (int b = 0; b < 256; b++) {
            long c = b;
            for (int i = 0; i < 8; i++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ POLY_REFLECTED : c >>> 1;
            }
            T[b] = c;
        }
        for (int k = 1; k < 16; k++) {
            for (int b = 0; b < 256; b++) {
                long p = T[(k - 1) * 256 + b];
                T[k * 256 + b] = (p >>> 8) ^ T[(int) p & 0xFF];
            }
        }
    }

    private Crc64Nvme() {
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

    /** The register after the 8 bytes of the little-endian word {@code w}. */
    private static long step8(long crc, long w) {
        final long[] t = T;
        w ^= crc;
        return t[7 * 256 + ((int) w & 0xFF)] ^ t[6 * 256 + ((int) (w >>> 8) & 0xFF)]
                ^ t[5 * 256 + ((int) (w >>> 16) & 0xFF)] ^ t[4 * 256 + ((int) (w >>> 24) & 0xFF)]
                ^ t[3 * 256 + ((int) (w >>> 32) & 0xFF)] ^ t[2 * 256 + ((int) (w >>> 40) & 0xFF)]
                ^ t[256 + ((int) (w >>> 48) & 0xFF)] ^ t[(int) (w >>> 56)];
    }

    /** The register after the 16 bytes {@code w1 || w2} (little-endian words). */
    private static long step16(long crc, long w1, long w2) {
        final long[] t = T;
        w1 ^= crc;
        return t[15 * 256 + ((int) w1 & 0xFF)] ^ t[14 * 256 + ((int) (w1 >>> 8) & 0xFF)]
                ^ t[13 * 256 + ((int) (w1 >>> 16) & 0xFF)] ^ t[12 * 256 + ((int) (w1 >>> 24) & 0xFF)]
                ^ t[11 * 256 + ((int) (w1 >>> 32) & 0xFF)] ^ t[10 * 256 + ((int) (w1 >>> 40) & 0xFF)]
                ^ t[9 * 256 + ((int) (w1 >>> 48) & 0xFF)] ^ t[8 * 256 + (int) (w1 >>> 56)]
                ^ t[7 * 256 + ((int) w2 & 0xFF)] ^ t[6 * 256 + ((int) (w2 >>> 8) & 0xFF)]
                ^ t[5 * 256 + ((int) (w2 >>> 16) & 0xFF)] ^ t[4 * 256 + ((int) (w2 >>> 24) & 0xFF)]
                ^ t[3 * 256 + ((int) (w2 >>> 32) & 0xFF)] ^ t[2 * 256 + ((int) (w2 >>> 40) & 0xFF)]
                ^ t[256 + ((int) (w2 >>> 48) & 0xFF)] ^ t[(int) (w2 >>> 56)];
    }

    private static long word(byte[] b, int i) {
        return (long) LE_LONG.get(b, i);
    }

    private static long word(ByteBuffer b, int i) {
        return (long) LE_LONG_BUF.get(b, i);
    }

    private static long bytes(long crc, byte[] b, int i, int end) {
        for (; i < end; i++) {
            crc = T[((int) crc ^ b[i]) & 0xFF] ^ (crc >>> 8);
        }
        return crc;
    }

    private static long bytes(long crc, ByteBuffer b, int i, int end) {
        for (; i < end; i++) {
            crc = T[((int) crc ^ b.get(i)) & 0xFF] ^ (crc >>> 8);
        }
        return crc;
    }

    /** Words of 8, then the last bytes. */
    private static long run8(long crc, byte[] b, int i, int end) {
        for (; end - i >= 8; i += 8) {
            crc = step8(crc, word(b, i));
        }
        return bytes(crc, b, i, end);
    }

    private static long run8(long crc, ByteBuffer b, int i, int end) {
        for (; end - i >= 8; i += 8) {
            crc = step8(crc, word(b, i));
        }
        return bytes(crc, b, i, end);
    }

    @Override
    public long update(long state, byte[] b, int off, int len) {
        long crc = state;
        int i = off;
        int end = off + len;
        for (; end - i >= 16; i += 16) {
            crc = step16(crc, word(b, i), word(b, i + 8));
        }
        return run8(crc, b, i, end);
    }

    @Override
    protected long updateDirect(long state, ByteBuffer b, int off, int len) {
        long crc = state;
        int i = off;
        int end = off + len;
        for (; end - i >= 16; i += 16) {
            crc = step16(crc, word(b, i), word(b, i + 8));
        }
        return run8(crc, b, i, end);
    }

    @Override
    public void updateBlocks(ByteBuffer b, int off, int stride, int len, int count, long seed, long[] statesOut) {
        long s0 = start(seed);
        blocks(b, off, stride, len, count, s0, statesOut);
    }

    private static void blocks(ByteBuffer b, int p, int stride, int len, int count, long s0, long[] out) {
        int body = len & ~7;
        int k = 0;
        for (; count - k >= 2; k += 2, p += 2 * stride) {
            int p1 = p + stride;
            long c0 = s0;
            long c1 = s0;
            for (int i = 0; i < body; i += 8) {
                c0 = step8(c0, word(b, p + i));
                c1 = step8(c1, word(b, p1 + i));
            }
            out[k] = bytes(c0, b, p + body, p + len);
            out[k + 1] = bytes(c1, b, p1 + body, p1 + len);
        }
        if (k < count) {
            out[k] = run8(s0, b, p, p + len);
        }
    }
}
