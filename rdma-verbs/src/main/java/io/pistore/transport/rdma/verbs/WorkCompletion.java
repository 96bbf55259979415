package io.pistore.transport.rdma.verbs;

/**
 * {@code struct ib_wc}: filled in by {@link CompletionQueue#poll}. Mutable and reusable, so polling
 * allocates nothing.
 */
public final class WorkCompletion {
    public long wrId;
    public WcStatus status = WcStatus.SUCCESS;
    public WcOpcode opcode = WcOpcode.SEND;
    public int byteLen;
    public int qpNum;
    public int vendorErr;

    public boolean ok() {
        return status == WcStatus.SUCCESS;
    }

    @Override
    public String toString() {
        return opcode + "{wr_id=" + wrId + " " + status + " len=" + byteLen + " qp=" + qpNum + "}";
    }
}
