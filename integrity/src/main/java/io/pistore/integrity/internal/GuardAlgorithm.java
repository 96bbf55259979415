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

    /** A short name for logs and benchmarks. */
    public abstract String name();
}
