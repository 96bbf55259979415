package io.pistore.transport.rdma.verbs;

/** {@code struct ib_recv_wr}. Mutable and reusable; chains via {@link #next}. */
public final class RecvWr {
    public long wrId;
    public final Sge[] sgl;
    public int numSge;
    public RecvWr next;

    public RecvWr(int maxSge) {
        sgl = new Sge[maxSge];
        for (int i = 0; i < maxSge; i++) {
            sgl[i] = new Sge();
        }
    }

    public RecvWr() {
        this(1);
    }

    public RecvWr addSge(long addr, int length, int lkey) {
        sgl[numSge++].set(addr, length, lkey);
        return this;
    }
}
