package io.pistore.transport.rdma.verbs;

/**
 * {@code struct ib_mr_status} with its {@code ib_sig_err}: filled by {@link IntegrityMr#checkStatus}.
 * Mutable and reusable. {@link #sigErrOffset} is the byte offset of the failing block in the wire
 * stream (data plus 8-byte tuples when the wire carries PI), as mlx5 reports it.
 */
public final class MrStatus {
    /** {@code fail_status & IB_MR_CHECK_SIG_STATUS}. */
    public boolean failed;
    public SigErrorType errType;
    public long expected;
    public long actual;
    public long sigErrOffset;
    public int key;

    public MrStatus clear() {
        failed = false;
        errType = null;
        expected = 0;
        actual = 0;
        sigErrOffset = 0;
        key = 0;
        return this;
    }

    public MrStatus copyFrom(MrStatus o) {
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
        return failed ? "sig_err{" + errType + " expected=0x" + Long.toHexString(expected) + " actual=0x"
                + Long.toHexString(actual) + " offset=" + sigErrOffset + " key=0x" + Integer.toHexString(key) + "}"
                : "ok";
    }
}
