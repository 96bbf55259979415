package io.pistore.integrity;

import io.pistore.integrity.internal.GuardAlgorithm;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * A guard computed over a stream of bytes fed in pieces of any size (a file read in chunks): the
 * value after all pieces equals {@link GuardType#compute} over their concatenation, with seed 0.
 * Made by {@link GuardType#newDigest()}. Not thread-safe.
 */
public final class GuardDigest {
    private final GuardType type;
    private final GuardAlgorithm algorithm;
    private long state;

    GuardDigest(GuardType type) {
        this.type = Objects.requireNonNull(type, "type");
        this.algorithm = type.algorithm();
        this.state = algorithm.start(0);
    }

    public GuardType type() {
        return type;
    }

    /** Adds the bytes {@code [position, limit)} of {@code buf}; the buffer is not moved. */
    public GuardDigest update(ByteBuffer buf) {
        ByteBuffer b = buf.order() == ByteOrder.BIG_ENDIAN ? buf : buf.duplicate().order(ByteOrder.BIG_ENDIAN);
        state = algorithm.update(state, b, b.position(), b.remaining());
        return this;
    }

    /** Adds {@code len} bytes of {@code b} at {@code off}. */
    public GuardDigest update(byte[] b, int off, int len) {
        Objects.checkFromIndexSize(off, len, b.length);
        state = algorithm.update(state, b, off, len);
        return this;
    }

    /** The guard of every byte added so far; more bytes may be added afterwards. */
    public long value() {
        return algorithm.finish(state);
    }
}
