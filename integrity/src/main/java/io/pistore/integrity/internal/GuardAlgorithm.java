package io.pistore.integrity.internal;

import java.nio.ByteBuffer;

/**
 * A guard function as a small state machine: {@code start(seed)}, any number of {@code update}s
 * over consecutive bytes (a block may be cut anywhere), then {@code finish} gives the stored value.
 * Stateless itself: the state is the {@code long} the caller carries, so one instance serves every
 * thread.
 *
 * <p>ByteBuffer arguments are read with absolute indexes, never moved, and must be in big-endian
 * order (the engine's {@code ScatterList} guarantees it).
 */
public abstract class GuardAlgorithm {

    /** The state before the first byte, for a guard seed as defined by the format. */
    public abstract long start(long seed);

    /** The state after {@code len} more bytes of {@code b} at {@code off}. */
    public abstract long update(long state, byte[] b, int off, int len);

    /** The state after {@code len} more bytes of {@code b} at absolute index {@code off}. */
    public long update(long state, ByteBuffer b, int off, int len) {
        if (b.hasArray()) {
            return update(state, b.array(), b.arrayOffset() + off, len);
        }
        return updateDirect(state, b, off, len);
    }

    /** {@link #update(long, ByteBuffer, int, int)} for buffers without an accessible array. */
    protected abstract long updateDirect(long state, ByteBuffer b, int off, int len);

    /** The guard value stored in the tuple for a final state. */
    public abstract long finish(long state);

    /**
     * States after {@code len} bytes of each of {@code count} blocks that start {@code stride} bytes
     * apart at {@code off}, each from {@code start(seed)}. One call per run of whole blocks lets an
     * implementation work on several blocks at once.
     */
    public void updateBlocks(ByteBuffer b, int off, int stride, int len, int count, long seed, long[] statesOut) {
        long s0 = start(seed);
        for (int i = 0; i < count; i++) {
            statesOut[i] = update(s0, b, off + i * stride, len);
        }
    }

    /** {@link #verifyRun} answer when this algorithm has no run-level path for the given buffers. */
    public static final int NOT_HANDLED = -1;
    /** {@link #verifyRun} check bits. */
    public static final int CHECK_GUARD = 1;
    public static final int CHECK_APP = 2;
    public static final int CHECK_REF = 4;
    /** {@link #verifyRun} error kinds in {@code result[0]}. */
    public static final int KIND_GUARD = 0;
    public static final int KIND_APP = 1;
    public static final int KIND_REF = 2;

    /**
     * Run-level generate hook: for {@code count} whole blocks (data of block k at
     * {@code dOff + k*dStride} in {@code d}, {@code dataLen} bytes; metadata at
     * {@code mOff + k*mStride} in {@code m}), computes each guard over the data and then the first
     * {@code prefix} metadata bytes, finished, and writes the complete tuple of this algorithm's
     * guard type at metadata offset {@code tupleOff}: guard, {@code app}, and reference tag
     * {@code ref0} (Type 3) or {@code (ref0 + k) & refMask} (Types 1 and 2). Returns false, having
     * done nothing, when not handled; the caller then does it itself. The default handles nothing.
     */
    public boolean generateRun(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count,
                               int dataLen, int prefix, int tupleOff, long seed, int app, long ref0, long refMask,
                               boolean type3) {
        return false;
    }

    /**
     * Run-level verify hook, same layout as {@link #generateRun}: per block, skips an escaped tuple
     * (app 0xFFFF; for Type 3 also the reference tag all-ones at its width), then checks, as
     * {@code checks} ({@link #CHECK_GUARD} | {@link #CHECK_APP} | {@link #CHECK_REF}) asks, the guard,
     * the app tag under {@code appMask}, and the reference tag (the caller leaves {@code CHECK_REF}
     * out for Type 3). Returns the index of the first bad block, with {@code result[0..2]} = kind
     * ({@link #KIND_GUARD}, ...), expected, actual (as {@code Pi}'s errors report them); or
     * {@code count} when every block passes; or {@link #NOT_HANDLED}. The default handles nothing.
     */
    public int verifyRun(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count,
                         int dataLen, int prefix, int tupleOff, long seed, int checks, int app, int appMask, long ref0,
                         long refMask, boolean type3, long[] result) {
        return NOT_HANDLED;
    }

    /** A short name for logs and benchmarks. */
    public abstract String name();
}
