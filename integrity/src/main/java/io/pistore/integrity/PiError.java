package io.pistore.integrity;

import java.util.Objects;

/**
 * One failed PI check: which field, in which block of the operation, and the two values.
 *
 * <p>{@code expected} is what the checker derived (the guard computed over the data, the context's
 * app tag under the mask, the block's reference tag); {@code actual} is what the stored PI holds
 * (for the app tag, under the mask). Both are shown at the field's width.
 */
public final class PiError {
    private final PiErrorKind kind;
    private final long blockIndex;
    private final long expected;
    private final long actual;

    public PiError(PiErrorKind kind, long blockIndex, long expected, long actual) {
        this.kind = Objects.requireNonNull(kind, "kind");
        this.blockIndex = blockIndex;
        this.expected = expected;
        this.actual = actual;
    }

    public PiErrorKind kind() {
        return kind;
    }

    /** Index of the failing block, counted from the first block of the operation. */
    public long blockIndex() {
        return blockIndex;
    }

    public long expected() {
        return expected;
    }

    public long actual() {
        return actual;
    }

    /** The same error with its block index moved by {@code blocks} (e.g. to turn it into an LBA). */
    public PiError offsetBy(long blocks) {
        return new PiError(kind, blockIndex + blocks, expected, actual);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) return true;
        if (!(o instanceof PiError)) return false;
        PiError e = (PiError) o;
        return kind == e.kind && blockIndex == e.blockIndex && expected == e.expected && actual == e.actual;
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, blockIndex, expected, actual);
    }

    /** {@code block=N error=guard expected=0x… actual=0x…}. */
    @Override
    public String toString() {
        return "block=" + blockIndex + " error=" + kind.shortName() + " expected=0x" + Long.toHexString(expected)
                + " actual=0x" + Long.toHexString(actual);
    }
}
