package io.pistore.transport.rdma.internal;

import io.pistore.spi.AnswerScreen;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.PeerConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.IntegrityMrPool;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.QueuePair;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One host queue: one RC QP to the target (NVMe-oF's one QP per queue), a command slot per unit of
 * depth, and a per-queue pool of integrity MRs. Per READ/WRITE the host takes an MR, maps the
 * request's data and metadata lists, sets the signature attributes, and posts REG_MR_INTEGRITY
 * chained before the command SEND, which carries (address 0, wire length, key). On the response it
 * checks the MR status and posts a signalled LOCAL_INV of the key; the request completes, and the MR
 * goes back to the pool, only when that LOCAL_INV has completed (nvme-rdma's order: on a real NIC the
 * invalidate executes after the post returns, and until then the target could still reach the
 * request's memory). Formats the NIC cannot carry go through a registered staging buffer per slot,
 * with PI done in software.
 *
 * <p>One poller thread per queue reaps completions and completes the futures. Submission is safe
 * from any thread.
 */
final class RdmaHostQueue implements PeerConnection {
    static final int PAGE_SIZE = 4096;
    static final long T_SEND = 1L << 32;
    static final long T_REG = 2L << 32;
    static final long T_INV = 3L << 32;
    static final long T_RECV = 4L << 32;
    private static final int DISCOVERY_BYTES = 64 * 1024;
    /** How often the poller looks for requests past the request timeout. */
    private static final long TIMEOUT_CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final RdmaHostConnection owner;
    private final int index;
    private final int depth;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final RcConnection cm;
    private final QueuePair qp;
    private final MemoryRegion cmdMr;
    private final MemoryRegion rspMr;
    private final ByteBuffer cmd;
    private final ByteBuffer rsp;
    private final IntegrityMrPool pool;
    private final HostSlot[] slots;
    private final int[] free;
    private int freeTop;
    private final RecvWr[] recvs;
    /** Builds and posts each request's work requests (integrity MR or staging path). */
    private final HostCommandPoster poster;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final Thread poller;
    private final String address;
    private volatile boolean closed;
    private volatile String closeReason = "connection closed";
    /** Set by {@link #close}: the owner ended the queue, so its end is no loss to report. */
    private volatile boolean closing;
    private final java.util.concurrent.atomic.AtomicBoolean released = new java.util.concurrent.atomic.AtomicBoolean();
    /** Told once, on the poller thread, when the connection ended by itself (guarded by {@link #lostLock}). */
    private java.util.function.Consumer<String> lostListener;
    private boolean pollerEnded;
    private final Object lostLock = new Object();
    /** Sees each answer before its request completes (a host given a list of peers), or null. */
    private volatile AnswerScreen screen;
    /** The volumes the target listed when this queue connected (set by the owner). */
    volatile java.util.List<VolumeInfo> listed = java.util.List.of();

    RdmaHostQueue(RdmaHostConnection owner, VerbsDevice dev, ProtectionDomain pd, String address, int index,
                  int depth, boolean integrity) throws VerbsException {
        this.owner = owner;
        this.address = address;
        this.index = index;
        this.depth = depth;
        this.pd = pd;
        int sq = 3 * depth + 4; // REG + SEND + LOCAL_INV per request, as nvme-rdma's send_wr_factor
        int rq = depth + 1;
        this.cq = dev.createCq(2 * (sq + rq));
        this.cmdMr = pd.register(ByteBuffer.allocateDirect((depth + 1) * Capsule.SIZE), Access.LOCAL_WRITE);
        this.rspMr = pd.register(ByteBuffer.allocateDirect((depth + 1) * Capsule.SIZE), Access.LOCAL_WRITE);
        this.cmd = cmdMr.buffer();
        this.rsp = rspMr.buffer();
        this.pool = integrity ? new IntegrityMrPool(pd, depth, maxSg(dev), maxSg(dev)) : null;
        this.slots = new HostSlot[depth + 1];
        this.free = new int[depth];
        for (int i = 0; i <= depth; i++) {
            slots[i] = new HostSlot(i);
        }
        for (int i = depth - 1; i >= 0; i--) {
            free[freeTop++] = i;
        }
        this.recvs = new RecvWr[rq];
        for (int i = 0; i < rq; i++) {
            recvs[i] = new RecvWr(1);
            recvs[i].wrId = T_RECV | i;
            recvs[i].addSge(rspMr.addr(i * Capsule.SIZE), Capsule.SIZE, rspMr.lkey());
        }
        ByteBuffer pdata = ByteBuffer.allocate(12);
        pdata.putInt(Capsule.MAGIC).putInt(index).putInt(depth).flip();
        QpConfig cfg = new QpConfig(sq, rq, 1, 1, 7, integrity);
        RcConnection connected = null;
        try {
            connected = dev.connect(address, pd, cq, cq, cfg, pdata, 10_000);
            for (RecvWr r : recvs) {
                connected.qp().postRecv(r);
            }
        } catch (VerbsException | RuntimeException e) {
            // a failed connect (target down, refused) must not leave this queue's registrations
            // behind: a host reconnecting for a long time makes many such attempts
            if (connected != null) {
                connected.close();
            }
            if (pool != null) {
                pool.close();
            }
            cmdMr.close();
            rspMr.close();
            cq.close();
            throw e;
        }
        this.cm = connected;
        this.qp = cm.qp();
        this.poster = new HostCommandPoster(owner, pd, pool, cmdMr, qp);
        this.poller = new Thread(this::pollLoop, "pistore-rdma-host-" + address + "/q" + index);
        this.poller.setDaemon(true);
        this.poller.start();
    }

    /**
     * Tells {@code listener} (once, on the poller thread, after the requests in flight have failed)
     * when the connection ends other than by {@link #close}; at once if it already has.
     */
    @Override
    public void onLost(java.util.function.Consumer<String> listener) {
        boolean ended;
        synchronized (lostLock) {
            lostListener = listener;
            ended = pollerEnded;
        }
        if (ended && !closing) {
            listener.accept(closeReason);
        }
    }

    @Override
    public java.util.List<VolumeInfo> listed() {
        return listed;
    }

    /**
     * DISCOVER again on the admin slot, on a thread of its own (it waits for the answer, at most 10 s);
     * callers while one runs share it.
     */
    @Override
    public synchronized CompletableFuture<java.util.List<VolumeInfo>> relist() {
        if (relisting != null && !relisting.isDone()) {
            return relisting;
        }
        CompletableFuture<java.util.List<VolumeInfo>> f = new CompletableFuture<>();
        relisting = f;
        Thread t = new Thread(() -> {
            try {
                listed = VolumeList.decode(discover());
                f.complete(listed);
            } catch (Exception e) {
                f.completeExceptionally(e);
            }
        }, "pistore-rdma-relist-" + index);
        t.setDaemon(true);
        t.start();
        return f;
    }

    /** The relist running, or the last (guarded by this). */
    private CompletableFuture<java.util.List<VolumeInfo>> relisting;

    /** Has every answer of the target pass through {@code s} before its request completes. */
    @Override
    public void screen(AnswerScreen s) {
        screen = s;
    }

    /**
     * Ends the connection as lost, with {@code reason} (any thread, without waiting): disconnecting
     * flushes the QP, then the poller fails what is in flight and tells the lost listener, as after a
     * request timeout.
     */
    @Override
    public void drop(String reason) {
        synchronized (this) {
            if (closed) {
                return;
            }
            closeReason = reason;
            closed = true;
        }
        cm.close();
        cq.wakeup();
    }

    private Completion screened(String volume, Completion c) {
        AnswerScreen s = screen;
        return s == null || volume == null ? c : s.screen(volume, c);
    }

    /** Whether the connection has ended (lost or closed): submissions fail at once. */
    @Override
    public boolean isShut() {
        return closed;
    }

    /** The target address this queue's QP is connected to. */
    String address() {
        return address;
    }

    static int maxSg(VerbsDevice dev) {
        return Math.max(1, Math.min(256, dev.caps().maxPiFastRegPageListLen()));
    }

    @Override
    public int depth() {
        return depth;
    }

    @Override
    public int inFlight() {
        return inFlight.get();
    }

    /** A free slot, its request timeout starting now (under the lock the timeout check holds), or null. */
    private synchronized HostSlot takeSlot() {
        if (freeTop == 0) {
            return null;
        }
        HostSlot s = slots[free[--freeTop]];
        s.sentNanos = System.nanoTime();
        return s;
    }

    @Override
    public CompletableFuture<Completion> submit(BlockRequest r) {
        if (closed) {
            return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR, closeReason));
        }
        if (inFlight.incrementAndGet() > depth) {
            inFlight.decrementAndGet();
            return CompletableFuture.completedFuture(Completion.failure(Status.QUEUE_FULL,
                    "queue depth " + depth + " reached"));
        }
        HostSlot s = takeSlot();
        if (s == null) { // cannot happen while inFlight bounds the slots
            inFlight.decrementAndGet();
            return CompletableFuture.completedFuture(Completion.failure(Status.QUEUE_FULL, "no free command slot"));
        }
        CompletableFuture<Completion> f = new CompletableFuture<>();
        s.future = f;
        s.request = r;
        try {
            poster.start(s, r);
        } catch (VerbsException e) {
            abort(s, Completion.failure(Status.TRANSPORT_ERROR, "rdma: " + e.getMessage()));
        } catch (RuntimeException e) {
            abort(s, Completion.failure(Status.INTERNAL_ERROR, "rdma: " + e));
        }
        if (closed) {
            failAll();
        }
        return f;
    }

    // ------------------------------------------------------------------ discovery (queue 0, at connect)

    /** Asks the target for its volumes: it RDMA-WRITEs the list into a buffer registered here. */
    byte[] discover() throws VerbsException, InterruptedException {
        HostSlot s = slots[depth];
        MemoryRegion buf = pd.register(ByteBuffer.allocateDirect(DISCOVERY_BYTES), Access.LOCAL_WRITE
                | Access.REMOTE_WRITE);
        try {
            CompletableFuture<Completion> f = new CompletableFuture<>();
            s.future = f;
            s.path = HostSlot.PATH_NONE;
            postAdmin(Capsule.OP_DISCOVER, 0, 0, buf);
            Completion c;
            try {
                c = f.get(10, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                throw new VerbsException(VerbsException.ENOTCONN, "discovery got no answer: " + e);
            }
            if (!c.isSuccess()) {
                throw new VerbsException(VerbsException.ECONNREFUSED, "discovery failed: " + c);
            }
            byte[] out = new byte[discoveredLength];
            buf.buffer().get(0, out);
            return out;
        } finally {
            buf.close();
        }
    }

    private volatile int discoveredLength;

    /**
     * Sends admin capsule {@code op} on the admin slot (its future already set), with {@code blocks}
     * and {@code lba} as the command's fields and all of {@code answer} as the buffer the target
     * RDMA-writes its answer into.
     */
    private void postAdmin(int op, long blocks, long lba, MemoryRegion answer) throws VerbsException {
        HostSlot s = slots[depth];
        int n = Capsule.encode(cmd, s.cid * Capsule.SIZE, op, 0, s.cid, Protection.NONE, blocks, lba, answer.iova(),
                answer.length(), answer.rkey(), 0, new byte[0]);
        SendWr send = s.send.reset();
        send.wrId = T_SEND | s.cid;
        send.signaled = true;
        send.addSge(cmdMr.addr(s.cid * Capsule.SIZE), n, cmdMr.lkey());
        qp.postSend(send);
    }

    /** Where the target writes its path reports (made at the first query, kept until shutdown; guarded by this). */
    private MemoryRegion reportBuf;
    private static final int REPORT_BYTES = 64 * 1024;

    /**
     * Asks the target for its path states (on the admin slot, one query at a time): it answers once
     * its change counter differs from {@code known}, or after {@code waitMs}, RDMA-writing the report
     * into a buffer registered here; the future completes with the response (on the poller thread),
     * after which {@link #pathReport} holds the report's bytes. A target without path states answers
     * {@code INVALID_FIELD} (an unknown opcode).
     */
    CompletableFuture<Completion> pathStates(long known, int waitMs) throws VerbsException {
        HostSlot s = slots[depth];
        CompletableFuture<Completion> f = new CompletableFuture<>();
        synchronized (this) {
            if (closed) {
                return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR, closeReason));
            }
            if (s.future != null) {
                throw new IllegalStateException("a path state query is already outstanding");
            }
            if (reportBuf == null) {
                reportBuf = pd.register(ByteBuffer.allocateDirect(REPORT_BYTES), Access.LOCAL_WRITE | Access.REMOTE_WRITE);
            }
            s.future = f;
            s.path = HostSlot.PATH_NONE;
        }
        postAdmin(Capsule.OP_PATH_STATES, waitMs, known, reportBuf);
        if (closed) {
            failAll();
        }
        return f;
    }

    /** The bytes of the report the last successful {@link #pathStates} answer wrote. */
    synchronized byte[] pathReport() {
        byte[] out = new byte[Math.min(discoveredLength, REPORT_BYTES)];
        reportBuf.buffer().get(0, out);
        return out;
    }

    // ------------------------------------------------------------------ completions

    private void pollLoop() {
        WorkCompletion[] wcs = new WorkCompletion[32];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        long limit = TimeUnit.MILLISECONDS.toNanos(owner.requestTimeoutMillis());
        long checked = System.nanoTime();
        try {
            while (true) {
                long now = System.nanoTime();
                if (now - checked >= TIMEOUT_CHECK_NANOS) {
                    checked = now;
                    checkTimeouts(now, limit);
                }
                int n = cq.poll(wcs);
                if (n == 0) {
                    if (closed) {
                        break;
                    }
                    cq.await(TimeUnit.MILLISECONDS.toNanos(100));
                    continue;
                }
                for (int i = 0; i < n; i++) {
                    handle(wcs[i]);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            closeReason = "rdma queue failed: " + e;
            closed = true;
        }
        failAll();
        java.util.function.Consumer<String> l;
        synchronized (lostLock) {
            pollerEnded = true;
            l = lostListener;
        }
        if (l != null && !closing) {
            l.accept(closeReason);
        }
    }

    /**
     * A request unanswered for longer than the request timeout (a target whose NIC acknowledges but
     * whose process hangs): the connection is treated as lost, as tcp's host does. Disconnecting
     * first flushes the QP, so the target can no longer reach the requests' memory once they fail;
     * the poller then fails them and hands the queue to the reconnect. The admin slot (discovery)
     * keeps its own wait.
     */
    private void checkTimeouts(long now, long limit) {
        if (closed) {
            return;
        }
        HostSlot late = null;
        synchronized (this) {
            for (int i = 0; i < depth && late == null; i++) {
                HostSlot s = slots[i];
                if (s.future != null && now - s.sentNanos > limit) {
                    late = s;
                }
            }
            if (late == null) {
                return;
            }
            BlockRequest r = late.request;
            closeReason = "no response to " + (r == null ? "a" : r.op()) + " command 0x" + Integer.toHexString(late.cid)
                    + " within " + TimeUnit.NANOSECONDS.toMillis(limit) + " ms";
            closed = true;
        }
        cm.close(); // flushes what is posted; close() later finds it closed (idempotent)
        failAll();
    }

    private void handle(WorkCompletion wc) {
        if (wc.status != WcStatus.SUCCESS) {
            if (!closed) {
                closeReason = wc.status == WcStatus.WR_FLUSH_ERR ? "connection lost" : "rdma " + wc.opcode + " failed: "
                        + wc.status;
                closed = true;
            }
            failAll();
            return;
        }
        if (wc.opcode == WcOpcode.LOCAL_INV) {
            invalidated(slots[(int) wc.wrId]);
            return;
        }
        if (wc.opcode != WcOpcode.RECV) {
            return;
        }
        int slot = (int) wc.wrId;
        int at = slot * Capsule.SIZE;
        int cid = Capsule.responseCid(rsp, at);
        HostSlot s = cid < slots.length ? slots[cid] : null;
        if (s == null || s.future == null) {
            repost(slot);
            return;
        }
        Completion c = Capsule.decodeResponse(rsp, at, s.request == null ? 0 : s.request.lba());
        if (cid == depth) {
            discoveredLength = Capsule.responsePayload(rsp, at);
        }
        repost(slot);
        CompletableFuture<Completion> f;
        String volume;
        synchronized (this) {
            if (s.future == null) {
                return; // failed meanwhile
            }
            volume = s.request == null ? null : s.request.volume();
            c = finish(s, c);
            if (c == null) {
                return; // ends when its LOCAL_INV completes
            }
            f = detach(s);
        }
        f.complete(screened(volume, c));
    }

    /** The LOCAL_INV of a request's key completed: the MR goes back to the pool and the request ends. */
    private void invalidated(HostSlot s) {
        CompletableFuture<Completion> f;
        Completion c;
        String volume;
        synchronized (this) {
            IntegrityMr mr = s.mr;
            if (s.future == null || mr == null) {
                return; // failed meanwhile
            }
            volume = s.request == null ? null : s.request.volume();
            s.mr = null;
            if (s.checkAtInvalidate) {
                mr.checkStatus(s.status);
            }
            pool.put(mr);
            c = s.pending;
            f = detach(s);
        }
        if (f != null) {
            f.complete(screened(volume, c));
        }
    }

    private void repost(int slot) {
        try {
            qp.postRecv(recvs[slot]);
        } catch (VerbsException e) {
            closed = true;
            closeReason = "cannot post a receive: " + e.getMessage();
        }
    }

    /**
     * Finishes a request whose response arrived (under the queue's lock); returns its completion, or
     * null when it ends later, once the LOCAL_INV of its key has completed.
     */
    private Completion finish(HostSlot s, Completion c) {
        c = HostResponseCheck.check(s, c);
        if (s.path == HostSlot.PATH_OFFLOAD) {
            return invalidateThenComplete(s, c) ? null : c;
        }
        return c;
    }

    /**
     * Posts a signalled LOCAL_INV of the slot's key; {@code c} completes the request when it
     * completes ({@link #invalidated}). When the post fails, the MR goes back to the pool with its
     * key still valid (its {@code needsInvalidate()} makes the next user invalidate first) and the
     * caller completes {@code c} now; returns whether the LOCAL_INV was posted.
     */
    private boolean invalidateThenComplete(HostSlot s, Completion c) {
        s.pending = c;
        SendWr inv = s.inv.reset();
        inv.wrId = T_INV | s.cid;
        inv.opcode = WrOpcode.LOCAL_INV;
        inv.signaled = true;
        inv.invalidateKey = s.key;
        try {
            qp.postSend(inv);
            return true;
        } catch (VerbsException e) {
            closed = true;
            closeReason = "cannot invalidate an integrity MR: " + e.getMessage();
            IntegrityMr mr = s.mr;
            s.mr = null;
            if (s.checkAtInvalidate) {
                mr.checkStatus(s.status);
            }
            pool.put(mr);
            return false;
        }
    }

    private void complete(HostSlot s, Completion c) {
        CompletableFuture<Completion> f = detach(s);
        if (f != null) {
            f.complete(c);
        }
    }

    /** Frees the slot and returns its future, or null when someone else already completed it. */
    private synchronized CompletableFuture<Completion> detach(HostSlot s) {
        CompletableFuture<Completion> f = s.future;
        if (f == null) {
            return null;
        }
        boolean admin = s.cid == depth;
        s.clear();
        if (!admin) {
            free[freeTop++] = s.cid;
            inFlight.decrementAndGet();
        }
        return f;
    }

    /**
     * Ends a request that failed while being posted. An integrity MR whose registration was posted
     * (its key may be valid) is invalidated first, as after a response; otherwise it goes straight
     * back to the pool after its status check.
     */
    private void abort(HostSlot s, Completion c) {
        IntegrityMr mr = s.mr;
        if (mr != null && mr.needsInvalidate()) {
            boolean posted;
            synchronized (this) {
                s.checkAtInvalidate = true;
                posted = invalidateThenComplete(s, c);
            }
            if (posted) {
                return;
            }
        } else if (mr != null) {
            s.mr = null;
            mr.checkStatus(s.status);
            pool.put(mr);
        }
        complete(s, c);
    }

    /** Fails every request in flight (the connection is gone). */
    private void failAll() {
        java.util.List<CompletableFuture<Completion>> fs = new java.util.ArrayList<>();
        synchronized (this) {
            for (HostSlot s : slots) {
                if (s.future != null) {
                    if (s.mr != null) {
                        IntegrityMr mr = s.mr;
                        s.mr = null;
                        mr.checkStatus(s.status);
                        pool.put(mr);
                    }
                    fs.add(detach(s));
                }
            }
        }
        Completion c = Completion.failure(Status.TRANSPORT_ERROR, closeReason);
        for (CompletableFuture<Completion> f : fs) {
            f.complete(c);
        }
    }

    @Override
    public void fence(io.pistore.spi.WriteFence f) {
        poster.fence = f;
    }

    /**
     * Ends the queue and releases its QP, CQ and memory regions (the PD is the connection's); called
     * by the owner at close, and by a reconnect for a queue whose connection was lost. Idempotent.
     */
    @Override
    public void shutdown() {
        closing = true;
        closed = true;
        if (!released.compareAndSet(false, true)) {
            return;
        }
        cm.close();
        cq.wakeup();
        try {
            poller.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        failAll();
        if (pool != null) {
            pool.close();
        }
        synchronized (this) {
            if (reportBuf != null) {
                reportBuf.close();
            }
        }
        for (HostSlot s : slots) {
            if (s.staging != null) {
                s.staging.close();
            }
        }
        cmdMr.close();
        rspMr.close();
        cq.close();
    }

    @SuppressWarnings("unused")
    private static String str(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
