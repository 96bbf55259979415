package io.pistore.transport.rdma.verbs;

/**
 * {@code struct ib_mr_status} with its {@code ib_sig_err}: filled by {@link IntegrityMr#checkStatus}.
 * Mutable and reusable. {@link #sigErrOffset} is the byte offset of the failing block in the
 * interleaved stream of data and 8-byte tuples (block × (interval + 8)), whichever domain carries
 * the PI, as mlx5 reports it and iSER divides it. {@link #errno} is not 0 when
 * {@code ib_check_mr_status} itself failed (its negative return), which the caller maps to an
 * invalid-PI status.
 */
public final class MrStatus {
    /** 0, or why {@code ib_check_mr_status} failed ({@link VerbsException} errno); then nothing else is set. */
    public int errno;
    /** {@code fail_status & IB_MR_CHECK_SIG_STATUS}. */
    public boolean failed;
    public SigErrorType errType;
    public long expected;
    public long actual;
    public long sigErrOffset;
    public int key;

    public MrStatus clear() {
        errno = 0;
        failed = false;
        errType = null;
        expected = 0;
        actual = 0;
        sigErrOffset = 0;
        key = 0;
        return this;
    }

    public MrStatus copyFrom(MrStatus o) {
        errno = o.errno;
        failed = o.failed;
        errType = o.errType;
        expected = o.expected;
        actual = o.actual;
        sigErrOffset = o.sigErrOffset;
        key = o.key;
        return this;
    }

    @Override
    public String toString() {
        if (errno != 0) {
            return "check failed (errno " + errno + ")";
        }
        return failed ? "sig_err{" + errType + " expected=0x" + Long.toHexString(expected) + " actual=0x"
                + Long.toHexString(actual) + " offset=" + sigErrOffset + " key=0x" + Integer.toHexString(key) + "}"
                : "ok";
    }
}
