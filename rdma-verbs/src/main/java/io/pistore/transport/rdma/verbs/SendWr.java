package io.pistore.transport.rdma.verbs;

/**
 * A send-queue work request ({@code struct ib_send_wr} with the {@code ib_rdma_wr} and
 * {@code ib_reg_wr} parts inline). Mutable and reusable: the provider copies what it needs during
 * {@link QueuePair#postSend}, so the caller may change it as soon as the post returns. Chains are
 * built with {@link #next}, as in C.
 */
public final class SendWr {
    public long wrId;
    public WrOpcode opcode = WrOpcode.SEND;
    public boolean signaled;
    public boolean fence;
    public final Sge[] sgl;
    public int numSge;
    /** RDMA READ/WRITE: the remote address and key. */
    public long remoteAddr;
    public int rkey;
    /** SEND_WITH_INV and LOCAL_INV: the key to invalidate. */
    public int invalidateKey;
    /** REG_MR_INTEGRITY: the MR, the key to make valid and its access flags ({@code ib_reg_wr}). */
    public IntegrityMr mr;
    public int key;
    public int access;
    public SendWr next;

    public SendWr(int maxSge) {
        sgl = new Sge[maxSge];
        for (int i = 0; i < maxSge; i++) {
            sgl[i] = new Sge();
        }
    }

    public SendWr() {
        this(2);
    }

    /** Clears every field but the SGE array (whose entries are reused). */
    public SendWr reset() {
        wrId = 0;
        opcode = WrOpcode.SEND;
        signaled = false;
        fence = false;
        numSge = 0;
        remoteAddr = 0;
        rkey = 0;
        invalidateKey = 0;
        mr = null;
        key = 0;
        access = 0;
        next = null;
        return this;
    }

    /** Sets SGE {@code numSge} and counts it. */
    public SendWr addSge(long addr, int length, int lkey) {
        sgl[numSge++].set(addr, length, lkey);
        return this;
    }

    public long totalLength() {
        long n = 0;
        for (int i = 0; i < numSge; i++) {
            n += sgl[i].length;
        }
        return n;
    }

    @Override
    public String toString() {
        return opcode + "{wr_id=" + wrId + (signaled ? " signaled" : "") + " sge=" + numSge + "}";
    }
}
