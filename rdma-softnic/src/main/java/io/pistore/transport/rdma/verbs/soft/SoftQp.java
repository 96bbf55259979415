package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.QpState;
import io.pistore.transport.rdma.verbs.QueuePair;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.Sge;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An RC queue pair of the soft NIC. Work requests issue in posting order on the posting thread
 * (the "NIC" is whoever posts), so RC ordering holds. Local work (REG_MR_INTEGRITY, LOCAL_INV)
 * executes inline by default; with {@link LocalWork#ASYNC} or {@link LocalWork#MANUAL} it executes
 * later, in posting order, on the soft NIC's own thread (or when a test runs it), as on a real NIC,
 * where a UMR or an invalidate completes after {@code ib_post_send} returned. What a real NIC does and
 * this one does too:
 * <ul>
 *   <li>a fenced WR ({@link SendWr#fence}, and the WR right after a REG_MR_INTEGRITY, which mlx5
 *       fences itself: {@code qp->next_fence = MLX5_FENCE_MODE_INITIATOR_SMALL}) starts only after
 *       the QP's earlier local work has executed; an unfenced WR may overtake it;
 *   <li>a SEND consumes the peer's oldest posted RECV; with none posted it waits (receiver not
 *       ready) and retries every {@link #RNR_DELAY_NANOS} up to the RNR retry count (7: forever),
 *       then fails with RNR_RETRY_EXC_ERR; later work waits behind it;
 *   <li>every remote access checks the key in the peer's PD table (unknown, stale or invalidated
 *       key, missing access right, out of bounds: REM_ACCESS_ERR); a bad local SGE is LOC_PROT_ERR;
 *       an error completes even unsignalled work and moves the QP to the error state, where all
 *       outstanding and later work completes with WR_FLUSH_ERR;
 *   <li>unsignalled work completes silently; a WQE holds its send-queue slot until a later
 *       signalled completion is polled; posting beyond {@code maxSendWr} or {@code maxRecvWr} fails
 *       with ENOMEM;
 *   <li>closing flushes posted receives and waiting sends, and moves the peer to the error state.
 * </ul>
 */
final class SoftQp implements QueuePair {
    static final long RNR_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    final SoftDevice device;
    final SoftPd pd;
    final SoftCq sendCq;
    final SoftCq recvCq;
    final QpConfig config;
    private final int qpNum;
    volatile QpState state = QpState.RTS;
    volatile SoftQp peer;
    volatile SoftConnection connection;
    /** The packet path when the peer QP is in another process (then {@link #peer} is null). */
    volatile SoftLink link;

    private final Object sqLock = new Object();
    /** The receive queue; its monitor guards it and the state checks made with it. */
    private final SoftRecvQueue rq;

    // send queue accounting and the work waiting behind a receiver-not-ready SEND
    private long postedSeq;
    private final AtomicLong retiredSeq = new AtomicLong();
    private final ArrayDeque<Stalled> stalled = new ArrayDeque<>();
    /** Local work issued and not yet executed (never used with {@link LocalWork#INLINE}). */
    private final ArrayDeque<Stalled> local = new ArrayDeque<>();
    /** The last WR posted was a REG_MR_INTEGRITY: the next one is fenced (mlx5's next_fence). */
    private boolean fenceNext;
    private int rnrAttempts;
    private boolean retryScheduled;
    /** Copies between the WRs' local SGEs and a scratch buffer (under the send-queue lock). */
    private final SoftLocalCopy copy;

    private static final class Stalled {
        final SendWr wr;
        final long seq;
        final boolean fenced;

        Stalled(SendWr wr, long seq, boolean fenced) {
            this.wr = wr;
            this.seq = seq;
            this.fenced = fenced;
        }
    }

    private static final int ISSUED = 0;
    private static final int WAIT_RNR = 1;
    private static final int WAIT_FENCE = 2;

    SoftQp(SoftDevice device, SoftPd pd, SoftCq sendCq, SoftCq recvCq, QpConfig config, int qpNum) {
        this.device = device;
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.config = config;
        this.qpNum = qpNum;
        this.rq = new SoftRecvQueue(config.maxRecvWr(), config.maxRecvSge());
        this.copy = new SoftLocalCopy(pd);
    }

    @Override
    public int qpNum() {
        return qpNum;
    }

    @Override
    public QpState state() {
        return state;
    }

    /** Send-queue slots in use (posted and not yet retired by a polled completion). */
    long sendQueueInUse() {
        synchronized (sqLock) {
            return postedSeq - retiredSeq.get();
        }
    }

    void retire(long seq) {
        retiredSeq.accumulateAndGet(seq, Math::max);
    }

    // ------------------------------------------------------------------ posting

    @Override
    public void postSend(SendWr chain) throws VerbsException {
        synchronized (sqLock) {
            for (SendWr wr = chain; wr != null; wr = wr.next) {
                if (state == QpState.CLOSED) {
                    throw new VerbsException(VerbsException.ENOTCONN, "queue pair " + qpNum + " is destroyed");
                }
                String bad = validate(wr);
                if (bad != null) {
                    throw new VerbsException(VerbsException.EINVAL, bad);
                }
                if (postedSeq - retiredSeq.get() >= config.maxSendWr()) {
                    throw new VerbsException(VerbsException.ENOMEM, "send queue full (" + config.maxSendWr()
                            + " work requests outstanding)");
                }
                long seq = ++postedSeq;
                boolean fenced = wr.fence || fenceNext;
                fenceNext = wr.opcode == WrOpcode.REG_MR_INTEGRITY;
                noteInvalidation(wr);
                if (state != QpState.RTS) {
                    sendCq.push(this, wr.wrId, WcStatus.WR_FLUSH_ERR, wcOpcode(wr.opcode), 0, true, seq);
                } else if (!stalled.isEmpty()) {
                    stalled.add(new Stalled(copy(wr), seq, fenced));
                } else {
                    int r = issue(wr, seq, fenced);
                    if (r != ISSUED) {
                        stalled.add(new Stalled(copy(wr), seq, fenced));
                        if (r == WAIT_RNR) {
                            scheduleRnrRetry();
                        }
                    }
                }
            }
        }
    }

    /**
     * {@code mr->need_inval} bookkeeping, at post time as rdma_rw does it: a registration makes the
     * MR's key need an invalidation, a LOCAL_INV of the MR satisfies it.
     */
    private void noteInvalidation(SendWr wr) {
        if (wr.opcode == WrOpcode.REG_MR_INTEGRITY) {
            ((SoftIntegrityMr) wr.mr).needInval = true;
        } else if (wr.opcode == WrOpcode.LOCAL_INV) {
            SoftRegion r = pd.byIndex(wr.invalidateKey);
            if (r instanceof SoftIntegrityMr) {
                ((SoftIntegrityMr) r).needInval = false;
            }
        }
    }

    private static boolean isLocal(WrOpcode op) {
        return op == WrOpcode.LOCAL_INV || op == WrOpcode.REG_MR_INTEGRITY;
    }

    /**
     * Issues one WR (called in posting order, with the send-queue lock held): local work goes to
     * the local queue unless it runs inline; a fenced WR waits for earlier local work; anything else
     * executes now. {@code owned}: {@code wr} is already a copy the QP may keep.
     */
    private int issue(SendWr wr, long seq, boolean fenced, boolean owned) {
        LocalWork mode = device.localWork();
        if (isLocal(wr.opcode) && mode != LocalWork.INLINE) {
            local.add(new Stalled(owned ? wr : copy(wr), seq, false));
            device.localWorkIssued(this);
            return ISSUED;
        }
        if (fenced && !local.isEmpty()) {
            return WAIT_FENCE;
        }
        return execute(wr, seq) ? ISSUED : WAIT_RNR;
    }

    private int issue(SendWr wr, long seq, boolean fenced) {
        return issue(wr, seq, fenced, false);
    }

    /**
     * Executes the local work at the head of this QP's local queue, in posting order, while its
     * opcode is {@code only} (null: any); then issues what waited behind it. Returns how many ran.
     */
    int runLocal(WrOpcode only) {
        synchronized (sqLock) {
            int n = 0;
            while (!local.isEmpty() && (only == null || local.peek().wr.opcode == only)) {
                Stalled s = local.poll();
                if (state != QpState.RTS) {
                    sendCq.push(this, s.wr.wrId, WcStatus.WR_FLUSH_ERR, wcOpcode(s.wr.opcode), 0, true, s.seq);
                } else {
                    execute(s.wr, s.seq);
                }
                n++;
            }
            if (local.isEmpty() && !stalled.isEmpty()) {
                if (state != QpState.RTS) {
                    flushStalled();
                } else {
                    drain();
                }
            }
            return n;
        }
    }

    /** Local work issued and not yet executed, of opcode {@code only} (null: any). */
    int localPending(WrOpcode only) {
        synchronized (sqLock) {
            if (only == null) {
                return local.size();
            }
            int n = 0;
            for (Stalled s : local) {
                if (s.wr.opcode == only) {
                    n++;
                }
            }
            return n;
        }
    }

    private String validate(SendWr wr) {
        if (wr.numSge > config.maxSendSge()) {
            return wr.numSge + " SGEs exceed the QP's max_send_sge " + config.maxSendSge();
        }
        if (wr.opcode == WrOpcode.REG_MR_INTEGRITY) {
            if (!config.integrity()) {
                return "REG_MR_INTEGRITY on a QP created without IB_QP_CREATE_INTEGRITY_EN";
            }
            if (wr.numSge != 0) {
                return "REG_MR_INTEGRITY takes no SGEs";
            }
            if (!(wr.mr instanceof SoftIntegrityMr) || ((SoftIntegrityMr) wr.mr).pd != pd) {
                return "REG_MR_INTEGRITY of an MR that is not an integrity MR of this QP's PD";
            }
            return ((SoftIntegrityMr) wr.mr).validateRegistration(wr.key);
        }
        return null;
    }

    @Override
    public void postRecv(RecvWr chain) throws VerbsException {
        synchronized (rq) {
            for (RecvWr wr = chain; wr != null; wr = wr.next) {
                if (state == QpState.CLOSED) {
                    throw new VerbsException(VerbsException.ENOTCONN, "queue pair " + qpNum + " is destroyed");
                }
                if (wr.numSge > config.maxRecvSge()) {
                    throw new VerbsException(VerbsException.EINVAL, wr.numSge + " SGEs exceed max_recv_sge "
                            + config.maxRecvSge());
                }
                if (state == QpState.ERROR) {
                    recvCq.push(this, wr.wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0);
                    continue;
                }
                rq.add(wr);
            }
        }
        SoftQp p = peer;
        if (p != null) {
            p.resume();
        }
    }

    // ------------------------------------------------------------------ execution

    /** Executes one WR; false when the peer had no receive posted (the WR must wait). */
    private boolean execute(SendWr wr, long seq) {
        SoftLink l = link;
        if (l != null && (wr.opcode == WrOpcode.SEND || wr.opcode == WrOpcode.SEND_WITH_INV
                || wr.opcode == WrOpcode.RDMA_WRITE || wr.opcode == WrOpcode.RDMA_READ)) {
            WcStatus now = l.post(wr, seq);
            if (now != null) {
                complete(wr, seq, now, 0);
            }
            return true;
        }
        SoftQp p = peer;
        switch (wr.opcode) {
            case SEND:
            case SEND_WITH_INV: {
                if (p == null || p.state != QpState.RTS) {
                    complete(wr, seq, WcStatus.RETRY_EXC_ERR, 0);
                    return true;
                }
                int len = copy.gatherToScratch(wr);
                if (len < 0) {
                    complete(wr, seq, WcStatus.LOC_PROT_ERR, 0);
                    return true;
                }
                int r = p.deliver(copy.scratch(), 0, len, wr.opcode == WrOpcode.SEND_WITH_INV ? wr.invalidateKey : 0);
                if (r == DELIVER_RNR) {
                    return false;
                }
                complete(wr, seq, r == DELIVER_OK ? WcStatus.SUCCESS
                        : r == DELIVER_LEN ? WcStatus.REM_INV_REQ_ERR : WcStatus.REM_OP_ERR, len);
                return true;
            }
            case RDMA_WRITE: {
                if (p == null || p.state != QpState.RTS) {
                    complete(wr, seq, WcStatus.RETRY_EXC_ERR, 0);
                    return true;
                }
                int len = copy.gatherToScratch(wr);
                if (len < 0) {
                    complete(wr, seq, WcStatus.LOC_PROT_ERR, 0);
                    return true;
                }
                SoftRegion r = p.pd.lookup(wr.rkey);
                if (r == null || (r.access & Access.REMOTE_WRITE) == 0 || !r.covers(wr.remoteAddr, len)) {
                    complete(wr, seq, WcStatus.REM_ACCESS_ERR, 0);
                    return true;
                }
                SoftFabric.tap(WrOpcode.RDMA_WRITE, copy.scratch(), len);
                String bad = r.writeWire(wr.remoteAddr - r.base(), copy.scratch(), 0, len);
                complete(wr, seq, bad == null ? WcStatus.SUCCESS : WcStatus.REM_OP_ERR, len);
                return true;
            }
            case RDMA_READ: {
                if (p == null || p.state != QpState.RTS) {
                    complete(wr, seq, WcStatus.RETRY_EXC_ERR, 0);
                    return true;
                }
                long total = wr.totalLength();
                if (total > Integer.MAX_VALUE - 16) {
                    complete(wr, seq, WcStatus.LOC_LEN_ERR, 0);
                    return true;
                }
                int len = (int) total;
                SoftRegion r = p.pd.lookup(wr.rkey);
                if (r == null || (r.access & Access.REMOTE_READ) == 0 || !r.covers(wr.remoteAddr, len)) {
                    complete(wr, seq, WcStatus.REM_ACCESS_ERR, 0);
                    return true;
                }
                copy.ensureScratch(len);
                String bad = r.readWire(wr.remoteAddr - r.base(), copy.scratch(), 0, len);
                if (bad != null) {
                    complete(wr, seq, WcStatus.REM_OP_ERR, 0);
                    return true;
                }
                SoftFabric.tap(WrOpcode.RDMA_READ, copy.scratch(), len);
                boolean ok = copy.scatter(wr.sgl, wr.numSge, copy.scratch(), 0, len);
                complete(wr, seq, ok ? WcStatus.SUCCESS : WcStatus.LOC_PROT_ERR, len);
                return true;
            }
            case LOCAL_INV: {
                SoftRegion r = pd.byIndex(wr.invalidateKey);
                if (r == null || r.key != wr.invalidateKey) {
                    complete(wr, seq, WcStatus.LOC_PROT_ERR, 0);
                    return true;
                }
                r.valid = false;
                complete(wr, seq, WcStatus.SUCCESS, 0);
                return true;
            }
            case REG_MR_INTEGRITY: {
                String bad = ((SoftIntegrityMr) wr.mr).register(wr.key, wr.access);
                complete(wr, seq, bad == null ? WcStatus.SUCCESS : WcStatus.LOC_QP_OP_ERR, 0);
                return true;
            }
            default:
                complete(wr, seq, WcStatus.LOC_QP_OP_ERR, 0);
                return true;
        }
    }

    /** A WR sent over the packet path ended (the link moves the QP to the error state itself). */
    void completeRemote(SendWr wr, long seq, WcStatus status, int len) {
        if (status != WcStatus.SUCCESS || wr.signaled) {
            sendCq.push(this, wr.wrId, status, wcOpcode(wr.opcode), len, true, seq);
        }
    }

    private void complete(SendWr wr, long seq, WcStatus status, int len) {
        boolean failed = status != WcStatus.SUCCESS;
        if (failed && state == QpState.RTS) {
            state = QpState.ERROR; // as on a NIC: in the error state before anyone sees the error completion
        }
        if (failed || wr.signaled) {
            sendCq.push(this, wr.wrId, status, wcOpcode(wr.opcode), len, true, seq);
        }
        if (failed) {
            toError(); // the flushed work completes after the error
        }
    }

    static WcOpcode wcOpcode(WrOpcode op) {
        switch (op) {
            case RDMA_WRITE: return WcOpcode.RDMA_WRITE;
            case RDMA_READ: return WcOpcode.RDMA_READ;
            case LOCAL_INV: return WcOpcode.LOCAL_INV;
            case REG_MR_INTEGRITY: return WcOpcode.REG_MR;
            default: return WcOpcode.SEND;
        }
    }

    /** Copies the WR's local SGEs into {@code dst} from {@code at}; the length, or -1 for a bad SGE. */
    int gather(SendWr wr, byte[] dst, int at) {
        return copy.gather(wr, dst, at);
    }

    /** Writes {@code src} into local SGEs (which must allow local write); false for a bad SGE. */
    boolean scatter(Sge[] sgl, int n, byte[] src, int at, int len) {
        return copy.scatter(sgl, n, src, at, len);
    }

    static final int DELIVER_OK = 0;
    static final int DELIVER_RNR = 1;
    static final int DELIVER_LEN = 2;
    static final int DELIVER_PROT = 3;

    /** The responder side of a SEND: consumes the oldest posted receive. */
    int deliver(byte[] src, int at, int len, int invalidateKey) {
        long wrId;
        WcStatus st;
        synchronized (rq) {
            if (state != QpState.RTS) {
                return DELIVER_PROT;
            }
            if (rq.isEmpty()) {
                return DELIVER_RNR;
            }
            wrId = rq.headWrId();
            st = rq.consume(pd, src, at, len);
        }
        if (st == WcStatus.SUCCESS && invalidateKey != 0) {
            SoftRegion r = pd.byIndex(invalidateKey);
            if (r != null && r.key == invalidateKey) {
                r.valid = false;
                if (r instanceof SoftIntegrityMr) {
                    ((SoftIntegrityMr) r).needInval = false; // invalidated by the peer
                }
            }
        }
        recvCq.push(this, wrId, st, WcOpcode.RECV, st == WcStatus.SUCCESS ? len : 0, false, 0);
        if (st != WcStatus.SUCCESS) {
            toErrorResponder();
            return st == WcStatus.LOC_LEN_ERR ? DELIVER_LEN : DELIVER_PROT;
        }
        return DELIVER_OK;
    }

    // ------------------------------------------------------------------ receiver not ready

    private void scheduleRnrRetry() {
        if (!retryScheduled) {
            retryScheduled = true;
            SoftFabric.schedule(this::rnrRetry, RNR_DELAY_NANOS);
        }
    }

    private void rnrRetry() {
        synchronized (sqLock) {
            retryScheduled = false;
            if (stalled.isEmpty()) {
                return;
            }
            if (state != QpState.RTS) {
                flushStalled();
                return;
            }
            if (stalled.peek().fenced && !local.isEmpty()) {
                return; // waiting for local work, not for the receiver: runLocal issues it
            }
            rnrAttempts++;
            if (config.rnrRetry() != 7 && rnrAttempts > config.rnrRetry()) {
                Stalled s = stalled.poll();
                rnrAttempts = 0;
                complete(s.wr, s.seq, WcStatus.RNR_RETRY_EXC_ERR, 0);
                return;
            }
            drain();
        }
    }

    /** Called when the peer posts receives: work waiting for them goes on. */
    void resume() {
        synchronized (sqLock) {
            if (stalled.isEmpty()) {
                return;
            }
            if (state != QpState.RTS) {
                flushStalled();
                return;
            }
            drain();
        }
    }

    private void drain() {
        while (!stalled.isEmpty() && state == QpState.RTS) {
            Stalled s = stalled.peek();
            int r = issue(s.wr, s.seq, s.fenced, true);
            if (r == WAIT_FENCE) {
                return;
            }
            if (r == WAIT_RNR) {
                scheduleRnrRetry();
                return;
            }
            stalled.poll();
            rnrAttempts = 0;
        }
        if (state != QpState.RTS) {
            flushStalled();
        }
    }

    private void flushStalled() {
        Stalled s;
        while ((s = local.poll()) != null) {
            sendCq.push(this, s.wr.wrId, WcStatus.WR_FLUSH_ERR, wcOpcode(s.wr.opcode), 0, true, s.seq);
        }
        while ((s = stalled.poll()) != null) {
            sendCq.push(this, s.wr.wrId, WcStatus.WR_FLUSH_ERR, wcOpcode(s.wr.opcode), 0, true, s.seq);
        }
    }

    private void flushRecvs() {
        synchronized (rq) {
            rq.flush(wrId -> recvCq.push(this, wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0));
        }
    }

    /** Requester-side error: called with the send-queue lock held. */
    private void toError() {
        if (state == QpState.RTS) {
            state = QpState.ERROR;
        }
        flushRecvs();
        flushStalled();
    }

    /** Responder-side error (another QP's thread): waiting sends are flushed when next touched. */
    private void toErrorResponder() {
        if (state == QpState.RTS) {
            state = QpState.ERROR;
        }
        flushRecvs();
        SoftFabric.schedule(this::resume, 0);
    }

    /** The peer went away: this QP goes to the error state. */
    void peerGone() {
        toErrorResponder();
    }

    /** Destroys the QP: flushes its work and tells the peer. */
    void close() {
        SoftQp p;
        device.forget(this);
        synchronized (sqLock) {
            if (state == QpState.CLOSED) {
                return;
            }
            state = QpState.CLOSED;
            flushStalled();
            p = peer;
        }
        synchronized (rq) {
            rq.flush(wrId -> recvCq.push(this, wrId, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0, false, 0));
        }
        SoftLink l = link;
        if (l != null) {
            l.close();
        }
        if (p != null) {
            p.peerGone();
            SoftConnection pc = p.connection;
            if (pc != null) {
                pc.peerDisconnected();
            }
        }
    }

    private static SendWr copy(SendWr w) {
        SendWr c = new SendWr(Math.max(1, w.numSge));
        c.wrId = w.wrId;
        c.opcode = w.opcode;
        c.signaled = w.signaled;
        c.fence = w.fence;
        for (int i = 0; i < w.numSge; i++) {
            c.addSge(w.sgl[i].addr, w.sgl[i].length, w.sgl[i].lkey);
        }
        c.remoteAddr = w.remoteAddr;
        c.rkey = w.rkey;
        c.invalidateKey = w.invalidateKey;
        c.mr = w.mr;
        c.key = w.key;
        c.access = w.access;
        return c;
    }

    @Override
    public String toString() {
        return "soft-qp" + qpNum + "(" + state + ")";
    }
}
