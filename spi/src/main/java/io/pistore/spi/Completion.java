package io.pistore.spi;

import io.pistore.integrity.PiError;
import java.util.Objects;

/**
 * The result of a request: a status, and for PI check errors the failing LBA with the expected and
 * actual values (never lost on the way to the caller), or a one-line message for other errors.
 */
public final class Completion {
    private static final Completion SUCCESS = new Completion(Status.SUCCESS, -1, null, null, false);

    private final Status status;
    private final long errorLba;
    private final PiError piError;
    private final String message;
    private final boolean caughtByHost;

    private Completion(Status status, long errorLba, PiError piError, String message, boolean caughtByHost) {
        this.status = Objects.requireNonNull(status, "status");
        this.errorLba = errorLba;
        this.piError = piError;
        this.message = message;
        this.caughtByHost = caughtByHost;
    }

    public static Completion success() {
        return SUCCESS;
    }

    /** A non-PI failure with a one-line reason. */
    public static Completion failure(Status status, String message) {
        if (status == Status.SUCCESS || status.isPiError()) {
            throw new IllegalArgumentException("use success() or piError() for " + status);
        }
        return new Completion(status, -1, null, message, false);
    }

    /**
     * A PI check failure of a request that starts at {@code requestLba}; the error's block index is
     * relative to the request, the completion reports the absolute LBA.
     */
    public static Completion piError(long requestLba, PiError e) {
        return piError(requestLba, e, false);
    }

    /**
     * A PI check failure the host side of a transport caught itself, checking a read's data as it
     * arrived (the target answered success): as {@link #piError}, with {@link #caughtByHost()} true,
     * so that the host's own figures can tell it from an error the target reported.
     */
    public static Completion piErrorCaughtByHost(long requestLba, PiError e) {
        return piError(requestLba, e, true);
    }

    private static Completion piError(long requestLba, PiError e, boolean caughtByHost) {
        Status s = Status.of(e.kind());
        long lba = requestLba + e.blockIndex();
        return new Completion(s, lba, e, "lba=" + lba + " error=" + e.kind().shortName() + " expected=0x"
                + Long.toHexString(e.expected()) + " actual=0x" + Long.toHexString(e.actual()), caughtByHost);
    }

    /** Whether this PI error was caught by the host side of the transport, not reported by the target. */
    public boolean caughtByHost() {
        return caughtByHost;
    }

    public Status status() {
        return status;
    }

    public boolean isSuccess() {
        return status == Status.SUCCESS;
    }

    /** The LBA of the failing block for PI errors, else -1. */
    public long errorLba() {
        return errorLba;
    }

    /** The PI detail for PI errors (block index relative to the request), else null. */
    public PiError piError() {
        return piError;
    }

    /** A one-line reason for failures, else null. */
    public String message() {
        return message;
    }

    @Override
    public String toString() {
        return message == null ? status.toString() : status + ": " + message;
    }
}
