package io.pistore.transport.rdma.verbs;

/** {@code struct ib_sge}: a local address range and the lkey that covers it. Mutable, reusable. */
public final class Sge {
    public long addr;
    public int length;
    public int lkey;

    public Sge set(long addr, int length, int lkey) {
        this.addr = addr;
        this.length = length;
        this.lkey = lkey;
        return this;
    }

    @Override
    public String toString() {
        return "sge{0x" + Long.toHexString(addr) + "+" + length + " key=0x" + Integer.toHexString(lkey) + "}";
    }
}
