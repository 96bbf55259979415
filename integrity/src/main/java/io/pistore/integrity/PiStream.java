package io.pistore.integrity;

import io.pistore.integrity.internal.GuardAlgorithm;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Streaming generate or verify over interleaved blocks that arrive in chunks of any size: each
 * chunk is looked at once, in order, and can be released as soon as {@link #update} returns. The
 * partial guard of a block cut between chunks is carried in this object (SPDK keeps it in
 * {@code ctx->last_guard}); so are the tuple bytes seen so far.
 *
 * <p>A <b>generator</b> overwrites the tuple bytes of each block in the chunk as they go by (the
 * guard covers only bytes before the tuple, so it is known by then). A <b>verifier</b> checks each
 * block as soon as its tuple is complete. Not thread-safe: one stream belongs to one transfer at a
 * time ({@link #restart} begins the next).
 */
public final class PiStream {
    private PiContext ctx;
    private BlockFormat f;
    private GuardType g;
    private GuardAlgorithm alg;
    private final boolean generator;
    private long nblocks;
    private int blockSize;
    private int tupleStart;
    private int tupleEnd;
    /** The tuple seen so far; sized for the largest tuple, so a restart never reallocates it. */
    private final byte[] tuple = new byte[16];
    private final ByteBuffer tupleBuf = ByteBuffer.wrap(tuple).order(ByteOrder.BIG_ENDIAN);
    /** A verifier without the guard check skips the CRC work. */
    private boolean needGuard;

    private long block;
    private int pos;
    private long state;
    private final int keep;
    private final java.util.List<PiError> errors = new java.util.ArrayList<>(1);
    private long errorCount;

    private PiStream(PiContext ctx, long nblocks, boolean generator, int keep) {
        if (keep < 1) {
            throw new IllegalArgumentException("must keep at least one error, not " + keep);
        }
        this.keep = keep;
        this.generator = generator;
        restart(ctx, nblocks);
    }

    /**
     * Starts this stream over for another transfer of {@code nblocks} blocks under {@code ctx} (any
     * format): afterwards it is what {@link #generator} or {@link #verifier} would have made, with
     * the same kind and number of errors kept, but without allocating (a transport keeps one stream
     * per connection and direction, and restarts it per request). Returns this stream.
     */
    public PiStream restart(PiContext ctx, long nblocks) {
        if (nblocks < 0) {
            throw new IllegalArgumentException("block count must not be negative: " + nblocks);
        }
        this.ctx = ctx;
        this.f = ctx.format();
        this.g = f.guard();
        this.alg = g.algorithm();
        this.nblocks = nblocks;
        this.blockSize = f.blockSize();
        this.tupleStart = f.dataSize() + f.tupleOffsetInMetadata();
        this.tupleEnd = tupleStart + f.tupleSize();
        this.needGuard = generator || ctx.checks().guard();
        this.state = alg.start(ctx.guardSeed());
        this.block = 0;
        this.pos = 0;
        if (errorCount != 0) { // errors are kept only when counted: a clean transfer has nothing to clear
            this.errors.clear();
            this.errorCount = 0;
        }
        return this;
    }

    /** A stream that writes the PI of {@code nblocks} interleaved blocks into the chunks it is given. */
    public static PiStream generator(PiContext ctx, long nblocks) {
        return new PiStream(ctx, nblocks, true, 1);
    }

    /** A stream that checks the PI of {@code nblocks} interleaved blocks as their chunks arrive. */
    public static PiStream verifier(PiContext ctx, long nblocks) {
        return new PiStream(ctx, nblocks, false, 1);
    }

    /** A verifier that keeps up to {@code keep} errors (in block order) for {@link #errors()}. */
    public static PiStream verifier(PiContext ctx, long nblocks, int keep) {
        return new PiStream(ctx, nblocks, false, keep);
    }

    /** Total bytes the stream expects: {@code nblocks * (DATA + META)}. */
    public long expectedBytes() {
        return nblocks * blockSize;
    }

    /** Bytes consumed so far. */
    public long bytesSeen() {
        return block * blockSize + pos;
    }

    /** Whole blocks finished so far. */
    public long blocksDone() {
        return block;
    }

    public boolean isComplete() {
        return block == nblocks;
    }

    /** The first failed check seen by a verifier, or null. */
    public PiError firstError() {
        return errors.isEmpty() ? null : errors.get(0);
    }

    /** The errors kept so far, in block order (at most the number the verifier was made to keep). */
    public java.util.List<PiError> errors() {
        return java.util.Collections.unmodifiableList(errors);
    }

    /** How many blocks failed a check so far. */
    public long errorCount() {
        return errorCount;
    }

    /**
     * Consumes the chunk's bytes from position to limit (the position ends at the limit). A generator
     * writes tuple bytes into the chunk. Returns the first error found in this chunk, or null.
     *
     * @throws IllegalStateException if the chunk runs past the end of the last block (nothing of it
     *     is consumed then)
     */
    public PiError update(ByteBuffer chunk) {
        int from = chunk.position();
        int end = chunk.limit();
        PiError e = update(chunk, from, end - from);
        chunk.position(end);
        return e;
    }

    /**
     * Consumes {@code length} bytes of {@code buf} at absolute index {@code offset}, leaving the
     * buffer's position and limit alone (a transport then copies the same bytes on, without a
     * duplicate view per chunk). Otherwise as {@link #update(ByteBuffer)}.
     *
     * @throws IndexOutOfBoundsException if the range is outside {@code [0, buf.limit())}
     * @throws IllegalStateException if the range runs past the end of the last block
     */
    public PiError update(ByteBuffer buf, int offset, int length) {
        java.util.Objects.checkFromIndexSize(offset, length, buf.limit());
        int len = length;
        if (len > expectedBytes() - bytesSeen()) {
            throw new IllegalStateException("chunk of " + len + " bytes runs past the end of the stream: "
                    + (expectedBytes() - bytesSeen()) + " bytes remain of " + nblocks + " blocks");
        }
        // Guard kernels read big-endian (IpChecksum's direct path follows the buffer's order): a view
        // only for a buffer of the other order, which a transport's socket buffers never are.
        ByteBuffer c = buf.order() == ByteOrder.BIG_ENDIAN ? buf : buf.duplicate().order(ByteOrder.BIG_ENDIAN);
        int i = offset;
        int end = offset + length;
        PiError found = null;
        if (!f.hasPi()) {
            advancePlain(len);
            return null;
        }
        while (i < end) {
            int n;
            if (pos < tupleStart) {
                n = Math.min(end - i, tupleStart - pos);
                if (needGuard) {
                    state = alg.update(state, c, i, n);
                }
            } else if (pos == tupleStart && end - i >= tupleEnd - tupleStart) {
                // The whole tuple is in this chunk (the usual case): written or checked in place,
                // without the detour through the tuple array that a tuple cut between chunks needs.
                n = tupleEnd - tupleStart;
                if (generator) {
                    Tuples.put(g, c, i, alg.finish(state), ctx.appTag(), ctx.refTag(block));
                } else {
                    PiError e = Pi.check(ctx, c, i, block, alg.finish(state));
                    if (e != null) {
                        found = recordError(e, found);
                    }
                }
            } else if (pos < tupleEnd) {
                if (pos == tupleStart && generator) {
                    Tuples.put(g, tupleBuf, 0, alg.finish(state), ctx.appTag(), ctx.refTag(block));
                }
                n = Math.min(end - i, tupleEnd - pos);
                if (generator) {
                    c.put(i, tuple, pos - tupleStart, n);
                } else {
                    c.get(i, tuple, pos - tupleStart, n);
                    if (pos + n == tupleEnd) {
                        PiError e = Pi.check(ctx, tupleBuf, 0, block, alg.finish(state));
                        if (e != null) {
                            found = recordError(e, found);
                        }
                    }
                }
            } else {
                n = Math.min(end - i, blockSize - pos);
            }
            i += n;
            pos += n;
            if (pos == blockSize) {
                block++;
                pos = 0;
                state = alg.start(ctx.guardSeed());
            }
        }
        return found;
    }

    /** Counts and keeps a failed check; returns the first error of the current chunk. */
    private PiError recordError(PiError e, PiError foundInChunk) {
        errorCount++;
        if (errors.size() < keep) {
            errors.add(e);
        }
        return foundInChunk == null ? e : foundInChunk;
    }

    private void advancePlain(long len) {
        long total = bytesSeen() + len;
        block = total / blockSize;
        pos = (int) (total % blockSize);
    }
}
