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
 * <p>The 16-bit ones' complement IP checksum over big-endian 16-bit words (an odd last byte is the high
 * byte of a zero-padded word). A guard seed is added into the sum before the first byte.
 *
 * <p>The state packs the running sum (kept below 2^33 by folding) and, in bit 0, whether an odd
 * number of bytes has been seen, so that a block cut in the middle of a word continues correctly.
 */
public final class BaselineIpChecksum extends GuardAlgorithm {
    public static final BaselineIpChecksum INSTANCE = new BaselineIpChecksum();
    private static final VarHandle BE_LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    BaselineIpChecksum() {
    }

    @Override
    public long start(long seed) {
        return (seed & 0xFFFF) << 1;
    }

    @Override
    public long finish(long state) {
        long sum = fold16(state >>> 1);
        return ~sum & 0xFFFF;
    }

    @Override
    public String name() {
        return "ip-checksum";
    }

    private static long fold32(long sum) {
        while ((sum >>> 32) != 0) {
            sum = (sum & 0xFFFFFFFFL) + (sum >>> 32);
        }
        return sum;
    }

    private static long fold16(long sum) {
        sum = fold32(sum);
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xFFFF) + (sum >>> 16);
        }
        return sum;
    }

    @Override
    public long update(long state, byte[] b, int off, int len) {
        long sum = state >>> 1;
        boolean odd = (state & 1) != 0;
        int i = off;
        int end = off + len;
        if (odd && i < end) {
            sum += b[i++] & 0xFF;
            odd = false;
        }
        // Summing 32-bit halves and folding later gives the same 16-bit ones' complement sum,
        // because word alignment is kept (the end-around carry is associative).
        long acc = 0;
        while (end - i >= 8) {
            long w = (long) BE_LONG.get(b, i);
            acc += (w >>> 32) + (w & 0xFFFFFFFFL);
            i += 8;
        }
        sum += fold32(acc);
        while (end - i >= 2) {
            sum += ((b[i] & 0xFF) << 8) | (b[i + 1] & 0xFF);
            i += 2;
        }
        if (i < end) {
            sum += (b[i] & 0xFF) << 8;
            odd = true;
        }
        return (fold32(sum) << 1) | (odd ? 1 : 0);
    }

    @Override
    protected long updateDirect(long state, ByteBuffer b, int off, int len) {
        long sum = state >>> 1;
        boolean odd = (state & 1) != 0;
        int i = off;
        int end = off + len;
        if (odd && i < end) {
            sum += b.get(i++) & 0xFF;
            odd = false;
        }
        long acc = 0;
        while (end - i >= 8) {
            long w = b.getLong(i);
            acc += (w >>> 32) + (w & 0xFFFFFFFFL);
            i += 8;
        }
        sum += fold32(acc);
        while (end - i >= 2) {
            sum += ((b.get(i) & 0xFF) << 8) | (b.get(i + 1) & 0xFF);
            i += 2;
        }
        if (i < end) {
            sum += (b.get(i) & 0xFF) << 8;
            odd = true;
        }
        return (fold32(sum) << 1) | (odd ? 1 : 0);
    }
}
