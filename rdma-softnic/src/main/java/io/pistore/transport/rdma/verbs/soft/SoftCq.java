package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;

/**
 * A completion queue: a fixed ring of preallocated entries (no allocation per completion). Polling a
 * send-queue entry retires the WQEs up to it, which is when their send-queue slots are free again
 * (as on real hardware, an unsignalled WQE holds its slot until a later signalled one completes).
 */
final class SoftCq implements CompletionQueue {
    private static final class Cqe {
        long wrId;
        WcStatus status;
        WcOpcode opcode;
        int byteLen;
        SoftQp qp;
        long seq;
        boolean send;
    }

    private final Cqe[] ring;
    private int head;
    private int count;
    private boolean wakeup;
    private boolean overrun;
    private volatile boolean closed;

    SoftCq(int entries) {
        ring = new Cqe[entries];
        for (int i = 0; i < entries; i++) {
            ring[i] = new Cqe();
        }
    }

    synchronized void push(SoftQp qp, long wrId, WcStatus status, WcOpcode opcode, int byteLen, boolean send,
                           long seq) {
        if (closed) {
            return;
        }
        if (count == ring.length) {
            overrun = true; // a real CQ raises IB_EVENT_CQ_ERR; the entry is lost
            notifyAll();
            return;
        }
        Cqe e = ring[(head + count) % ring.length];
        e.wrId = wrId;
        e.status = status;
        e.opcode = opcode;
        e.byteLen = byteLen;
        e.qp = qp;
        e.seq = seq;
        e.send = send;
        count++;
        if (count == 1) {
            notifyAll();
        }
    }

    @Override
    public int poll(WorkCompletion[] out) {
        int n = 0;
        SoftQp retireQp = null;
        long retireSeq = 0;
        synchronized (this) {
            if (overrun) {
                throw new IllegalStateException("completion queue overrun (" + ring.length + " entries)");
            }
            while (n < out.length && count > 0) {
                Cqe e = ring[head];
                WorkCompletion w = out[n++];
                w.wrId = e.wrId;
                w.status = e.status;
                w.opcode = e.opcode;
                w.byteLen = e.byteLen;
                w.qpNum = e.qp.qpNum();
                w.vendorErr = 0;
                if (e.send) {
                    if (retireQp != null && retireQp != e.qp) {
                        retireQp.retire(retireSeq);
                    }
                    retireQp = e.qp;
                    retireSeq = e.seq;
                }
                e.qp = null;
                head = (head + 1) % ring.length;
                count--;
            }
        }
        if (retireQp != null) {
            retireQp.retire(retireSeq);
        }
        return n;
    }

    @Override
    public synchronized boolean await(long timeoutNanos) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (count == 0 && !wakeup && !closed && !overrun) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000), 0);
        }
        wakeup = false;
        return count > 0;
    }

    @Override
    public synchronized void wakeup() {
        wakeup = true;
        notifyAll();
    }

    @Override
    public synchronized void close() {
        closed = true;
        notifyAll();
    }
}
