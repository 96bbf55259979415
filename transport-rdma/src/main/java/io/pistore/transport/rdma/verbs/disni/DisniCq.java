package io.pistore.transport.rdma.verbs.disni;

import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;

/**
 * A DiSNI CQ with its completion channel. Polling runs one cached {@link SVCPollCq} over a fixed
 * array of {@link IbvWC} and maps each entry into a small ring of our {@link WorkCompletion}s, so a
 * caller may poll with any array size without losing entries and without garbage. {@link #await}
 * arms the CQ ({@code ibv_req_notify_cq}), polls once more (a completion that arrived before the
 * arm raises no event), then waits on the channel in slices of {@link #WAIT_SLICE_MS} so that
 * {@link #wakeup} is seen.
 */
final class DisniCq implements CompletionQueue {
    static final int BATCH = 32;
    static final int WAIT_SLICE_MS = 50;

    private final DisniOps ops;
    final DisniOps.Cq cq;
    private final IbvWC[] wcs = new IbvWC[BATCH];
    private final WorkCompletion[] ring = new WorkCompletion[BATCH];
    private int head;
    private int count;
    private SVCPollCq call;
    private volatile boolean woken;
    private volatile boolean closed;

    DisniCq(DisniOps ops, DisniOps.Cq cq) {
        this.ops = ops;
        this.cq = cq;
        for (int i = 0; i < BATCH; i++) {
            wcs[i] = new IbvWC();
            ring[i] = new WorkCompletion();
        }
    }

    @Override
    public synchronized int poll(WorkCompletion[] out) {
        int n = 0;
        while (n < out.length) {
            if (count == 0 && fill() == 0) {
                break;
            }
            WorkCompletion src = ring[head];
            WorkCompletion dst = out[n++];
            dst.wrId = src.wrId;
            dst.status = src.status;
            dst.opcode = src.opcode;
            dst.byteLen = src.byteLen;
            dst.qpNum = src.qpNum;
            dst.vendorErr = src.vendorErr;
            head = (head + 1) % BATCH;
            count--;
        }
        return n;
    }

    /** Polls the native CQ into the (empty) ring; returns how many came. */
    private int fill() {
        if (closed) {
            return 0;
        }
        try {
            if (call == null) {
                call = ops.poll(cq, wcs, BATCH);
            }
            call.execute();
            int got = call.getPolls();
            for (int i = 0; i < got; i++) {
                DisniWorkRequests.fromWc(wcs[i], ring[i]);
            }
            head = 0;
            count = got;
            return got;
        } catch (IOException e) {
            throw new UncheckedIOException("disni: ibv_poll_cq failed: " + DisniProbe.firstLine(String.valueOf(
                    e.getMessage())), e);
        }
    }

    private synchronized boolean ready() {
        return count > 0 || fill() > 0;
    }

    @Override
    public boolean await(long timeoutNanos) throws InterruptedException {
        if (ready()) {
            return true;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        try {
            ops.requestNotify(cq);
            if (ready()) {
                return true;
            }
            while (!woken && !closed) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return false;
                }
                if (ops.awaitCqEvent(cq, (int) Math.min(left, WAIT_SLICE_MS))) {
                    return true;
                }
            }
            return false;
        } catch (IOException e) {
            throw new UncheckedIOException("disni: waiting for a completion failed: "
                    + DisniProbe.firstLine(String.valueOf(e.getMessage())), e);
        } finally {
            woken = false;
        }
    }

    @Override
    public void wakeup() {
        woken = true;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (call != null) {
            call.free();
            call = null;
        }
        ops.destroyCq(cq);
    }
}
