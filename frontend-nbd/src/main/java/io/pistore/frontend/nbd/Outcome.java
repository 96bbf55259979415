package io.pistore.frontend.nbd;

import io.pistore.spi.Completion;

/**
 * How an NBD request ended, in the protocol's words: success, or an error value with, when it is
 * known, the first failing byte offset (inside the request's range) and a one-line message.
 */
final class Outcome {
    static final Outcome OK = new Outcome(0, -1, null);

    final int error;
    final long offset;
    final String message;

    private Outcome(int error, long offset, String message) {
        this.error = error;
        this.offset = offset;
        this.message = message;
    }

    static Outcome error(int error, String message) {
        return new Outcome(error, -1, message);
    }

    static Outcome errorAt(int error, long offset, String message) {
        return new Outcome(error, offset, message);
    }

    boolean isOk() {
        return error == 0;
    }

    /**
     * The outcome of a backend completion for the NBD request {@code [reqOffset, reqOffset+reqLength)}.
     * A PI check failure becomes EIO at the first byte of the failing block, moved inside the request
     * when the block was only partly requested (read-modify-write of an edge block).
     */
    static Outcome of(Completion c, long reqOffset, long reqLength, int dataSize) {
        if (c.isSuccess()) {
            return OK;
        }
        switch (c.status()) {
            case GUARD_CHECK:
            case APP_TAG_CHECK:
            case REF_TAG_CHECK: {
                long at = c.errorLba() * (long) dataSize;
                long last = reqOffset + Math.max(reqLength, 1) - 1;
                at = Math.max(reqOffset, Math.min(at, last));
                return errorAt(NbdProtocol.EIO, at, "PI check failed: " + c.message());
            }
            case INVALID_FIELD:
            case LBA_OUT_OF_RANGE:
                return error(NbdProtocol.EINVAL, c.toString());
            case NO_SPACE: // a client may wait for room (qemu's werror=enospc pauses the guest)
                return error(NbdProtocol.ENOSPC, c.toString());
            default:
                return error(NbdProtocol.EIO, c.toString());
        }
    }

    @Override
    public String toString() {
        return error == 0 ? "ok" : "error " + error + (offset >= 0 ? " at " + offset : "") + ": " + message;
    }
}
