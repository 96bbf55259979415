package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.Sge;

/**
 * Copies between a queue pair's local SGEs and byte arrays, through the regions of its protection
 * domain, with a scratch buffer for the in-process fabric's transfers. Invariant: every SGE is
 * checked (its key names a region of the domain that covers it; a write needs LOCAL_WRITE) before
 * a byte moves through it, and a bad SGE ends the copy with a failure. Not thread-safe: the QP uses
 * it under its send-queue lock, and the packet path only through {@link #gather} and
 * {@link #scatter}, which touch no state of their own.
 */
final class SoftLocalCopy {
    private final SoftPd pd;
    private byte[] scratch = new byte[4096];

    SoftLocalCopy(SoftPd pd) {
        this.pd = pd;
    }

    /** The scratch buffer as last grown. */
    byte[] scratch() {
        return scratch;
    }

    /** Grows the scratch buffer to at least {@code len} bytes. */
    void ensureScratch(long len) {
        if (scratch.length < len) {
            scratch = new byte[(int) Math.max(len, Math.min(Integer.MAX_VALUE - 16, scratch.length * 2L))];
        }
    }

    /** Copies the WR's local SGEs into the scratch buffer; the length, or -1 for a bad SGE. */
    int gatherToScratch(SendWr wr) {
        long total = wr.totalLength();
        if (total > Integer.MAX_VALUE - 16) {
            return -1;
        }
        ensureScratch(total);
        return gather(wr, scratch, 0);
    }

    /** Copies the WR's local SGEs into {@code dst} from {@code at}; the length, or -1 for a bad SGE. */
    int gather(SendWr wr, byte[] dst, int at) {
        int pos = 0;
        for (int i = 0; i < wr.numSge; i++) {
            Sge s = wr.sgl[i];
            SoftRegion r = pd.lookup(s.lkey);
            if (r == null || !r.covers(s.addr, s.length) || r.readWire(s.addr - r.base(), dst, at + pos, s.length) != null) {
                return -1;
            }
            pos += s.length;
        }
        return pos;
    }

    /** Writes {@code src} into local SGEs (which must allow local write); false for a bad SGE. */
    boolean scatter(Sge[] sgl, int n, byte[] src, int at, int len) {
        int pos = 0;
        for (int i = 0; i < n && pos < len; i++) {
            Sge s = sgl[i];
            int part = Math.min(s.length, len - pos);
            SoftRegion r = pd.lookup(s.lkey);
            if (r == null || (r.access & Access.LOCAL_WRITE) == 0 || !r.covers(s.addr, part)
                    || r.writeWire(s.addr - r.base(), src, at + pos, part) != null) {
                return false;
            }
            pos += part;
        }
        return true;
    }
}
