package io.pistore.transport.rdma.verbs.soft;

/**
 * An entry of a PD's key table: a plain MR or an integrity MR. Keys are {@code index << 8 | variant};
 * an access names the exact key, so a key of an older registration (another variant) is refused.
 */
abstract class SoftRegion {
    final SoftPd pd;
    final int index;
    volatile int key;
    volatile boolean valid;
    volatile int access;

    SoftRegion(SoftPd pd, int index) {
        this.pd = pd;
        this.index = index;
        this.key = index << 8;
    }

    /** Start of the address space the key covers. */
    abstract long base();

    /** Bytes the key covers, as seen from the wire. */
    abstract long wireLength();

    /**
     * Reads {@code len} bytes of the wire view at {@code offset} into {@code dst}.
     *
     * @return null, or a reason the range cannot be moved (the access fails)
     */
    abstract String readWire(long offset, byte[] dst, int pos, int len);

    /** Writes {@code len} bytes of the wire view at {@code offset}; null, or a reason it failed. */
    abstract String writeWire(long offset, byte[] src, int pos, int len);

    /** Whether {@code [addr, addr+len)} lies inside the key's range. */
    boolean covers(long addr, long len) {
        long off = addr - base();
        return off >= 0 && len >= 0 && off <= wireLength() - len; // not off + len: it overflows for a huge offset
    }
}
