package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.Sge;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcStatus;
import java.util.function.LongConsumer;

/**
 * A soft queue pair's receive queue: a ring of copied receive WRs (so the caller may reuse its
 * WRs once posted), consumed oldest first by SENDs. Invariant: receives are consumed in the order
 * they were posted, each exactly once (by a SEND or a flush). Not thread-safe on its own: every
 * method is called with this object's monitor held, which also guards the QP state checks made
 * with it.
 */
final class SoftRecvQueue {
    private final long[] rqWrId;
    private final long[][] rqAddr;
    private final int[][] rqLen;
    private final int[][] rqKey;
    private final int[] rqNum;
    private int rqHead;
    private int rqCount;

    /** A ring of {@code depth} receives of up to {@code maxSge} SGEs each. */
    SoftRecvQueue(int depth, int maxSge) {
        rqWrId = new long[depth];
        rqAddr = new long[depth][maxSge];
        rqLen = new int[depth][maxSge];
        rqKey = new int[depth][maxSge];
        rqNum = new int[depth];
    }

    /** Copies {@code wr} (its SGE count already checked) to the tail of the ring. */
    void add(RecvWr wr) throws VerbsException {
        if (rqCount == rqWrId.length) {
            throw new VerbsException(VerbsException.ENOMEM, "receive queue full (" + rqWrId.length + ")");
        }
        int slot = (rqHead + rqCount) % rqWrId.length;
        rqWrId[slot] = wr.wrId;
        rqNum[slot] = wr.numSge;
        for (int i = 0; i < wr.numSge; i++) {
            Sge s = wr.sgl[i];
            rqAddr[slot][i] = s.addr;
            rqLen[slot][i] = s.length;
            rqKey[slot][i] = s.lkey;
        }
        rqCount++;
    }

    boolean isEmpty() {
        return rqCount == 0;
    }

    /** The work request id of the oldest receive; only when not {@link #isEmpty}. */
    long headWrId() {
        return rqWrId[rqHead];
    }

    /**
     * Consumes the oldest receive (not {@link #isEmpty}) and writes {@code len} bytes of {@code src}
     * from {@code at} into its SGEs through {@code pd}'s regions: SUCCESS, LOC_LEN_ERR when they hold
     * less, LOC_PROT_ERR for an SGE that is not writable memory of the domain.
     */
    WcStatus consume(SoftPd pd, byte[] src, int at, int len) {
        int slot = rqHead;
        long room = 0;
        for (int i = 0; i < rqNum[slot]; i++) {
            room += rqLen[slot][i];
        }
        rqHead = (rqHead + 1) % rqWrId.length;
        rqCount--;
        if (len > room) {
            return WcStatus.LOC_LEN_ERR;
        }
        int pos = 0;
        for (int i = 0; i < rqNum[slot] && pos < len; i++) {
            int part = Math.min(rqLen[slot][i], len - pos);
            SoftRegion r = pd.lookup(rqKey[slot][i]);
            if (r == null || (r.access & Access.LOCAL_WRITE) == 0 || !r.covers(rqAddr[slot][i], part)
                    || r.writeWire(rqAddr[slot][i] - r.base(), src, at + pos, part) != null) {
                return WcStatus.LOC_PROT_ERR;
            }
            pos += part;
        }
        return WcStatus.SUCCESS;
    }

    /** Consumes every receive, oldest first, handing each one's work request id to {@code flushed}. */
    void flush(LongConsumer flushed) {
        while (rqCount > 0) {
            flushed.accept(rqWrId[rqHead]);
            rqHead = (rqHead + 1) % rqWrId.length;
            rqCount--;
        }
    }
}
