package io.pistore.integrity.internal;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A guard algorithm whose long runs go through {@code libpistore-native}: {@link #updateBlocks} in
 * one native call per run of blocks, and {@code update}s of at least {@code minLen} bytes in one
 * call each. Shorter updates (a split block's pieces, a metadata prefix) stay on the Java kernel,
 * which also provides {@link #start}, {@link #finish} and the state format, so the two paths can be
 * mixed freely within one guard.
 */
final class NativeGuardAlgorithm extends GuardAlgorithm {
    /** Below this many bytes a JNI call costs more than the Java table kernel. */
    static final int NATIVE_MIN_LEN = 128;

    private final GuardAlgorithm javaKernel;
    private final int alg;
    private final int minLen;

    NativeGuardAlgorithm(GuardAlgorithm java, int alg, int minLen) {
        this.javaKernel = java;
        this.alg = alg;
        this.minLen = minLen;
    }

    /** The pure-Java kernel this one falls back to. */
    GuardAlgorithm javaKernel() {
        return javaKernel;
    }

    @Override
    public long start(long seed) {
        return javaKernel.start(seed);
    }

    @Override
    public long finish(long state) {
        return javaKernel.finish(state);
    }

    @Override
    public long update(long state, byte[] b, int off, int len) {
        if (len < minLen) {
            return javaKernel.update(state, b, off, len);
        }
        return NativeGuards.update(alg, state, b, off, len);
    }

    @Override
    public long update(long state, ByteBuffer b, int off, int len) {
        if (len < minLen) {
            return javaKernel.update(state, b, off, len);
        }
        if (b.isDirect()) {
            return NativeGuards.updateDirect(alg, state, b, off, len);
        }
        if (b.hasArray()) {
            // absolute indexes are bounded by the limit, as the ByteBuffer's own get(int) would be
            Objects.checkFromIndexSize(off, len, b.limit());
            return NativeGuards.update(alg, state, b.array(), b.arrayOffset() + off, len);
        }
        return javaKernel.update(state, b, off, len);
    }

    @Override
    protected long updateDirect(long state, ByteBuffer b, int off, int len) {
        return update(state, b, off, len);
    }

    @Override
    public void updateBlocks(ByteBuffer b, int off, int stride, int len, int count, long seed, long[] statesOut) {
        if (len < minLen || count <= 0) {
            javaKernel.updateBlocks(b, off, stride, len, count, seed, statesOut);
            return;
        }
        long s0 = javaKernel.start(seed);
        if (b.isDirect()) {
            NativeGuards.blocksDirect(alg, s0, b, off, stride, len, count, statesOut);
        } else if (b.hasArray()) {
            checkBlocksWithin(b.limit(), off, stride, len, count);
            NativeGuards.blocks(alg, s0, b.array(), b.arrayOffset() + off, stride, len, count, statesOut);
        } else {
            javaKernel.updateBlocks(b, off, stride, len, count, seed, statesOut);
        }
    }

    private static void checkBlocksWithin(int limit, int off, int stride, int len, int count) {
        if (off < 0 || stride < 0 || len < 0 || off + (long) (count - 1) * stride + len > limit) {
            throw new IndexOutOfBoundsException("blocks off=" + off + " stride=" + stride + " len=" + len
                    + " count=" + count + " outside limit " + limit);
        }
    }

    @Override
    public boolean generateRun(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count,
                               int dataLen, int prefix, int tupleOff, long seed, int app, long ref0, long refMask,
                               boolean type3) {
        return NativeGuards.run(NativeGuards.OP_GENERATE, alg, javaKernel.start(seed), d, dOff, dStride, m, mOff,
                mStride, count, dataLen, prefix, tupleOff, type3 ? NativeGuards.F_TYPE3 : 0, app, 0, ref0, refMask,
                null) >= 0;
    }

    @Override
    public int verifyRun(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count,
                         int dataLen, int prefix, int tupleOff, long seed, int checks, int app, int appMask, long ref0,
                         long refMask, boolean type3, long[] result) {
        // CHECK_* bits are the library's F_GUARD / F_APP / F_REF
        int flags = (checks & (CHECK_GUARD | CHECK_APP | CHECK_REF)) | (type3 ? NativeGuards.F_TYPE3 : 0);
        int r = NativeGuards.run(NativeGuards.OP_VERIFY, alg, javaKernel.start(seed), d, dOff, dStride, m, mOff,
                mStride, count, dataLen, prefix, tupleOff, flags, app, appMask, ref0, refMask, result);
        return r < 0 ? NOT_HANDLED : r;
    }

    @Override
    public String name() {
        return javaKernel.name() + "-native";
    }
}
