package io.pistore.transport.rdma.verbs.disni;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fake of the DiSNI seam: an in-memory RDMA CM (events flow between ids of any channel of this
 * instance, as between two hosts) and verbs objects that record what the binding asks of them. Work
 * requests are not executed; each {@code execute()} of a post call records a snapshot of the work
 * requests as the native side would see them, so tests can check the SVC caches and patching.
 */
final class FakeDisni implements DisniOps {
    /** IPs whose bind or resolve reaches the fake RDMA device. */
    final Set<InetAddress> deviceIps = ConcurrentHashMap.newKeySet();
    /** Steps scripted to fail: ADDR, ROUTE, CONNECT -> the event to deliver instead (null = deliver nothing). */
    final Map<String, CmEventType> script = new ConcurrentHashMap<>();
    final Set<String> silent = ConcurrentHashMap.newKeySet();
    final List<String> log = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger ports = new AtomicInteger(40000);
    private final AtomicInteger qpNums = new AtomicInteger(100);
    private final AtomicInteger keys = new AtomicInteger(0x1000);
    private final Map<Integer, FId> listeners = new ConcurrentHashMap<>();
    final FCtx ctx = new FCtx();
    final List<FQp> qps = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger destroyedIds = new AtomicInteger();
    /** Registered memory by lkey (rkey = lkey | 0x10000), for the data movement of executed posts. */
    private final Map<Integer, Region> regions = new ConcurrentHashMap<>();

    /** A registration: its address range over its buffer, its PD and access. */
    record Region(long addr, ByteBuffer buf, FPd pd, int access) {
        boolean covers(long a, int len) {
            return a >= addr && a + len <= addr + buf.capacity() && len >= 0;
        }
    }
    final AtomicInteger deregistered = new AtomicInteger();

    static final class FChannel implements Channel {
        final BlockingQueue<CmEvent> q = new LinkedBlockingQueue<>();
        volatile boolean destroyed;
    }

    static final class FId implements Id {
        final FChannel ch;
        volatile InetSocketAddress source;
        volatile InetSocketAddress destination;
        volatile FId peer;
        volatile boolean bound;
        volatile boolean destroyed;
        volatile boolean established;
        volatile FQp qp;
        volatile int rnrRetry = -1;

        FId(FChannel ch) {
            this.ch = ch;
        }
    }

    static final class FCtx implements Ctx {
    }

    static final class FPd implements Pd {
        volatile boolean deallocated;
    }

    static final class FCq implements Cq {
        final ArrayDeque<IbvWC> pending = new ArrayDeque<>();
        volatile boolean armed;
        volatile boolean destroyed;
        final int entries;

        FCq(int entries) {
            this.entries = entries;
        }

        /** Adds a completion (as the NIC would) and raises the channel event when armed. */
        synchronized void complete(long wrId, int status, int opcode, int byteLen, int qpNum) {
            IbvWC w = new IbvWC();
            w.setWr_id(wrId);
            w.setStatus(status);
            w.setOpcode(opcode);
            w.setByte_len(byteLen);
            w.setQp_num(qpNum);
            pending.add(w);
            if (armed) {
                armed = false;
                notifyAll();
            }
        }
    }

    /** A work request as executed: what the NIC reads from the serialised list. */
    record Posted(long wrId, int opcode, int flags, long remoteAddr, int rkey, List<long[]> sges) {
    }

    static final class FQp implements Qp {
        final int num;
        final FPd pd;
        final FCq sendCq;
        final FCq recvCq;
        final int maxSendWr;
        final int maxRecvWr;
        final List<List<Posted>> sends = Collections.synchronizedList(new ArrayList<>());
        final List<List<Posted>> recvs = Collections.synchronizedList(new ArrayList<>());
        /** Posted receives not yet consumed, and SENDs waiting for one (receiver not ready). */
        final ArrayDeque<Posted> rq = new ArrayDeque<>();
        final ArrayDeque<Object[]> waiting = new ArrayDeque<>();
        volatile FId id;

        FQp(int num, FPd pd, FCq sendCq, FCq recvCq, int maxSendWr, int maxRecvWr) {
            this.num = num;
            this.pd = pd;
            this.sendCq = sendCq;
            this.recvCq = recvCq;
            this.maxSendWr = maxSendWr;
            this.maxRecvWr = maxRecvWr;
        }
    }

    FakeDisni(String... deviceIps) {
        for (String ip : deviceIps) {
            try {
                this.deviceIps.add(InetAddress.getByName(ip));
            } catch (IOException e) {
                throw new IllegalArgumentException(e);
            }
        }
    }

    private void event(FId to, CmEventType t, FId listen) {
        if (to != null && !to.ch.destroyed) {
            to.ch.q.add(new CmEvent(t, to, listen));
        }
    }

    /** Delivers the scripted event for {@code step}, or {@code ok}; nothing when the step is silent. */
    private void step(FId id, String step, CmEventType ok) {
        if (silent.contains(step)) {
            return;
        }
        CmEventType t = script.getOrDefault(step, ok);
        event(id, t, null);
    }

    @Override
    public Channel createEventChannel() {
        return new FChannel();
    }

    @Override
    public void destroyEventChannel(Channel ch) {
        ((FChannel) ch).destroyed = true;
    }

    @Override
    public Id createId(Channel ch) {
        return new FId((FChannel) ch);
    }

    @Override
    public void bindAddr(Id id, InetSocketAddress addr) throws IOException {
        FId f = (FId) id;
        int port = addr.getPort() == 0 ? ports.incrementAndGet() : addr.getPort();
        f.source = new InetSocketAddress(addr.getAddress(), port);
        f.bound = deviceIps.contains(addr.getAddress());
    }

    @Override
    public void listen(Id id, int backlog) throws IOException {
        FId f = (FId) id;
        if (listeners.putIfAbsent(f.source.getPort(), f) != null) {
            throw new IOException("rdma_listen: Address already in use");
        }
    }

    @Override
    public void resolveAddr(Id id, InetSocketAddress dst, int timeoutMs) {
        FId f = (FId) id;
        f.destination = dst;
        if (deviceIps.contains(dst.getAddress())) {
            f.source = new InetSocketAddress(dst.getAddress(), ports.incrementAndGet());
            f.bound = true;
            step(f, "ADDR", CmEventType.ADDR_RESOLVED);
        } else {
            step(f, "ADDR", CmEventType.ADDR_ERROR);
        }
    }

    @Override
    public void resolveRoute(Id id, int timeoutMs) {
        step((FId) id, "ROUTE", CmEventType.ROUTE_RESOLVED);
    }

    @Override
    public CmEvent getCmEvent(Channel ch, int timeoutMs) throws IOException {
        try {
            return ((FChannel) ch).q.poll(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted");
        }
    }

    @Override
    public void connect(Id id, int retryCount, int rnrRetryCount) {
        FId f = (FId) id;
        f.rnrRetry = rnrRetryCount;
        log.add("connect retry=" + retryCount + " rnr=" + rnrRetryCount);
        if (silent.contains("CONNECT")) {
            return;
        }
        if (script.containsKey("CONNECT")) {
            event(f, script.get("CONNECT"), null);
            return;
        }
        FId l = listeners.get(f.destination.getPort());
        if (l == null || l.destroyed) {
            event(f, CmEventType.REJECTED, null);
            return;
        }
        FId conn = new FId(l.ch);
        conn.source = l.source;
        conn.destination = f.source;
        conn.bound = true;
        conn.peer = f;
        f.peer = conn;
        l.ch.q.add(new CmEvent(CmEventType.CONNECT_REQUEST, conn, l));
    }

    @Override
    public void accept(Id id, int rnrRetryCount) {
        FId f = (FId) id;
        f.rnrRetry = rnrRetryCount;
        f.established = true;
        f.peer.established = true;
        event(f, CmEventType.ESTABLISHED, null);
        event(f.peer, CmEventType.ESTABLISHED, null);
    }

    @Override
    public void disconnect(Id id) {
        FId f = (FId) id;
        if (moveData) {
            synchronized (this) {
                for (FId x : new FId[] {f, f.peer}) {
                    if (x != null && x.qp != null) {
                        Posted r;
                        while ((r = x.qp.rq.poll()) != null) {
                            x.qp.recvCq.complete(r.wrId(), 5, 128, 0, x.qp.num);
                        }
                    }
                }
            }
        }
        if (f.established) {
            f.established = false;
            event(f, CmEventType.DISCONNECTED, null);
            if (f.peer != null && f.peer.established) {
                f.peer.established = false;
                event(f.peer, CmEventType.DISCONNECTED, null);
            }
        }
    }

    @Override
    public void destroyQp(Id id) {
        ((FId) id).qp = null;
    }

    @Override
    public void destroyId(Id id) {
        FId f = (FId) id;
        if (f.destroyed) {
            return;
        }
        f.destroyed = true;
        destroyedIds.incrementAndGet();
        listeners.remove(f.source == null ? -1 : f.source.getPort(), f);
        if (!f.established && f.peer != null && f.peer.peer == f && !f.peer.established) {
            event(f.peer, CmEventType.REJECTED, null); // a connect request destroyed before accept
        }
    }

    @Override
    public InetSocketAddress source(Id id) {
        return ((FId) id).source;
    }

    @Override
    public InetSocketAddress destination(Id id) {
        return ((FId) id).destination;
    }

    @Override
    public Ctx context(Id id) {
        return ((FId) id).bound ? ctx : null;
    }

    @Override
    public boolean sameDevice(Ctx a, Ctx b) {
        return a == b;
    }

    @Override
    public Pd allocPd(Ctx c) {
        return new FPd();
    }

    @Override
    public void deallocPd(Pd pd) {
        ((FPd) pd).deallocated = true;
    }

    @Override
    public Cq createCq(Ctx c, int entries) {
        return new FCq(entries);
    }

    @Override
    public void destroyCq(Cq cq) {
        ((FCq) cq).destroyed = true;
    }

    @Override
    public Qp createQp(Id id, Pd pd, Cq sendCq, Cq recvCq, int maxSendWr, int maxRecvWr, int maxInline) {
        FQp q = new FQp(qpNums.incrementAndGet(), (FPd) pd, (FCq) sendCq, (FCq) recvCq, maxSendWr, maxRecvWr);
        ((FId) id).qp = q;
        q.id = (FId) id;
        qps.add(q);
        return q;
    }

    @Override
    public int qpNum(Qp qp) {
        return ((FQp) qp).num;
    }

    @Override
    public Mr regMr(Pd pd, ByteBuffer buffer, int ibvAccess) {
        int k = keys.incrementAndGet();
        log.add("reg_mr len=" + buffer.remaining() + " access=" + ibvAccess);
        long addr = 0x7f0000000000L + (long) k * 0x1000000;
        regions.put(k, new Region(addr, buffer.slice(), (FPd) pd, ibvAccess));
        return new Mr(k, addr, buffer.remaining(), k, k | 0x10000);
    }

    @Override
    public void deregMr(Mr mr) {
        regions.remove((Integer) mr.handle());
        deregistered.incrementAndGet();
    }

    static List<long[]> sges(List<IbvSge> l) {
        List<long[]> out = new ArrayList<>();
        for (IbvSge s : l) {
            out.add(new long[] {s.getAddr(), s.getLength(), s.getLkey()});
        }
        return out;
    }

    /** A post-send call over its own copy of the list, patched through the *Mod views. */
    final class SendCall extends SVCPostSend {
        final FQp qp;
        final List<IbvSendWR> wrs;
        boolean freed;

        SendCall(FQp qp, List<IbvSendWR> wrs) {
            this.qp = qp;
            this.wrs = wrs;
        }

        @Override
        public SendWRMod getWrMod(int i) {
            IbvSendWR w = wrs.get(i);
            return new SendWRMod() {
                @Override public void setWr_id(long v) { w.setWr_id(v); }
                @Override public void setSend_flags(int v) { w.setSend_flags(v); }
                @Override public long getWr_id() { return w.getWr_id(); }
                @Override public int getNum_sge() { return w.getNum_sge(); }
                @Override public int getOpcode() { return w.getOpcode(); }
                @Override public int getSend_flags() { return w.getSend_flags(); }
                @Override public RdmaMod getRdmaMod() {
                    return new RdmaMod() {
                        @Override public void setRemote_addr(long v) { w.getRdma().setRemote_addr(v); }
                        @Override public long getRemote_addr() { return w.getRdma().getRemote_addr(); }
                        @Override public void setRkey(int v) { w.getRdma().setRkey(v); }
                        @Override public int getRkey() { return w.getRdma().getRkey(); }
                        @Override public void setReserved(int v) { }
                        @Override public int getReserved() { return 0; }
                    };
                }
                @Override public SgeMod getSgeMod(int j) {
                    IbvSge s = w.getSge(j);
                    return new SgeMod() {
                        @Override public void setAddr(long v) { s.setAddr(v); }
                        @Override public long getAddr() { return s.getAddr(); }
                        @Override public void setLength(int v) { s.setLength(v); }
                        @Override public int getLength() { return s.getLength(); }
                        @Override public void setLkey(int v) { s.setLkey(v); }
                        @Override public int getLkey() { return s.getLkey(); }
                    };
                }
            };
        }

        @Override
        public SVCPostSend execute() throws IOException {
            if (freed) {
                throw new IOException("execute after free");
            }
            List<Posted> snap = new ArrayList<>();
            for (IbvSendWR w : wrs) {
                snap.add(new Posted(w.getWr_id(), w.getOpcode(), w.getSend_flags(), w.getRdma().getRemote_addr(),
                        w.getRdma().getRkey(), sges(w.getSg_list())));
            }
            qp.sends.add(snap);
            if (moveData) {
                for (Posted w : snap) {
                    nic(qp, w);
                }
            }
            return this;
        }

        @Override
        public boolean isValid() {
            return !freed;
        }

        @Override
        public SVCPostSend free() {
            freed = true;
            return this;
        }
    }

    final class RecvCall extends SVCPostRecv {
        final FQp qp;
        final List<IbvRecvWR> wrs;
        boolean freed;

        RecvCall(FQp qp, List<IbvRecvWR> wrs) {
            this.qp = qp;
            this.wrs = wrs;
        }

        @Override
        public RecvWRMod getWrMod(int i) {
            IbvRecvWR w = wrs.get(i);
            return w::getWr_id;
        }

        @Override
        public SVCPostRecv execute() throws IOException {
            if (freed) {
                throw new IOException("execute after free");
            }
            List<Posted> snap = new ArrayList<>();
            for (IbvRecvWR w : wrs) {
                snap.add(new Posted(w.getWr_id(), -1, 0, 0, 0, sges(w.getSg_list())));
            }
            qp.recvs.add(snap);
            if (moveData) {
                synchronized (FakeDisni.this) {
                    qp.rq.addAll(snap);
                    while (!qp.waiting.isEmpty() && !qp.rq.isEmpty()) {
                        Object[] w = qp.waiting.poll();
                        deliver((FQp) w[0], (Posted) w[1], (byte[]) w[2], qp);
                    }
                }
            }
            return this;
        }

        @Override
        public boolean isValid() {
            return !freed;
        }

        @Override
        public SVCPostRecv free() {
            freed = true;
            return this;
        }
    }

    /** Whether executed posts move data between registered buffers, as a NIC would. */
    volatile boolean moveData;
    final AtomicInteger bytesMoved = new AtomicInteger();

    private Region local(FQp qp, long addr, int len, int lkey) {
        Region r = regions.get(lkey);
        return r != null && r.pd == qp.pd && r.covers(addr, len) ? r : null;
    }

    private Region remote(FQp peer, long addr, int len, int rkey, int access) {
        Region r = regions.get(rkey & ~0x10000);
        return r != null && (rkey & 0x10000) != 0 && r.pd == peer.pd && (r.access & access) != 0
                && r.covers(addr, len) ? r : null;
    }

    private byte[] gather(FQp qp, Posted w) {
        int len = 0;
        for (long[] g : w.sges()) len += (int) g[1];
        byte[] b = new byte[len];
        int at = 0;
        for (long[] g : w.sges()) {
            Region r = local(qp, g[0], (int) g[1], (int) g[2]);
            if (r == null) return null;
            r.buf.get((int) (g[0] - r.addr), b, at, (int) g[1]);
            at += (int) g[1];
        }
        return b;
    }

    private boolean scatter(FQp qp, List<long[]> sges, byte[] b) {
        int at = 0;
        for (long[] g : sges) {
            int n = Math.min((int) g[1], b.length - at);
            if (n <= 0) break;
            Region r = local(qp, g[0], n, (int) g[2]);
            if (r == null) return false;
            r.buf.put((int) (g[0] - r.addr), b, at, n);
            at += n;
        }
        return at == b.length;
    }

    /** Executes one posted request as the NIC would (RC, in order, on the posting thread). */
    private synchronized void nic(FQp qp, Posted w) {
        FId peerId = qp.id == null ? null : qp.id.peer;
        FQp peer = peerId == null ? null : peerId.qp;
        boolean signaled = (w.flags() & IbvSendWR.IBV_SEND_SIGNALED) != 0;
        if (peer == null || !qp.id.established) {
            qp.sendCq.complete(w.wrId(), 5, 0, 0, qp.num); // WR_FLUSH_ERR
            return;
        }
        byte[] b;
        switch (w.opcode()) {
            case IbvSendWR.IBV_WR_SEND -> {
                b = gather(qp, w);
                if (b == null) {
                    qp.sendCq.complete(w.wrId(), 4, 0, 0, qp.num); // LOC_PROT_ERR
                    return;
                }
                if (peer.rq.isEmpty()) {
                    peer.waiting.add(new Object[] {qp, w, b});
                    return;
                }
                deliver(qp, w, b, peer);
            }
            case IbvSendWR.IBV_WR_RDMA_WRITE -> {
                b = gather(qp, w);
                Region r = b == null ? null : remote(peer, w.remoteAddr(), b.length, w.rkey(), 2);
                if (r == null) {
                    qp.sendCq.complete(w.wrId(), 10, 1, 0, qp.num); // REM_ACCESS_ERR
                    return;
                }
                r.buf.put((int) (w.remoteAddr() - r.addr), b, 0, b.length);
                bytesMoved.addAndGet(b.length);
                if (signaled) qp.sendCq.complete(w.wrId(), 0, 1, b.length, qp.num);
            }
            case IbvSendWR.IBV_WR_RDMA_READ -> {
                int len = 0;
                for (long[] g : w.sges()) len += (int) g[1];
                Region r = remote(peer, w.remoteAddr(), len, w.rkey(), 4);
                if (r == null) {
                    qp.sendCq.complete(w.wrId(), 10, 2, 0, qp.num);
                    return;
                }
                b = new byte[len];
                r.buf.get((int) (w.remoteAddr() - r.addr), b, 0, len);
                if (!scatter(qp, w.sges(), b)) {
                    qp.sendCq.complete(w.wrId(), 4, 2, 0, qp.num);
                    return;
                }
                bytesMoved.addAndGet(len);
                if (signaled) qp.sendCq.complete(w.wrId(), 0, 2, len, qp.num);
            }
            default -> qp.sendCq.complete(w.wrId(), 2, 0, 0, qp.num); // LOC_QP_OP_ERR
        }
    }

    /** A SEND into the peer's oldest receive. */
    private void deliver(FQp qp, Posted w, byte[] b, FQp peer) {
        Posted r = peer.rq.poll();
        boolean ok = scatter(peer, r.sges(), b);
        peer.recvCq.complete(r.wrId(), ok ? 0 : 1, 128, ok ? b.length : 0, peer.num);
        if ((w.flags() & IbvSendWR.IBV_SEND_SIGNALED) != 0 || !ok) {
            qp.sendCq.complete(w.wrId(), ok ? 0 : 9, 0, b.length, qp.num);
        }
    }

    final AtomicInteger sendCalls = new AtomicInteger();
    final AtomicInteger recvCalls = new AtomicInteger();
    final AtomicInteger pollCalls = new AtomicInteger();

    @Override
    public SVCPostSend postSend(Qp qp, List<IbvSendWR> wrs) {
        sendCalls.incrementAndGet();
        return new SendCall((FQp) qp, wrs);
    }

    @Override
    public SVCPostRecv postRecv(Qp qp, List<IbvRecvWR> wrs) {
        recvCalls.incrementAndGet();
        return new RecvCall((FQp) qp, wrs);
    }

    @Override
    public SVCPollCq poll(Cq cq, IbvWC[] wcs, int n) {
        pollCalls.incrementAndGet();
        FCq f = (FCq) cq;
        return new SVCPollCq() {
            int polls;

            @Override
            public int getPolls() {
                return polls;
            }

            @Override
            public SVCPollCq execute() {
                synchronized (f) {
                    polls = 0;
                    while (polls < n && !f.pending.isEmpty()) {
                        IbvWC s = f.pending.poll();
                        IbvWC d = wcs[polls++];
                        d.setWr_id(s.getWr_id());
                        d.setStatus(s.getStatus());
                        d.setOpcode(s.getOpcode());
                        d.setByte_len(s.getByte_len());
                        d.setQp_num(s.getQp_num());
                        d.setVendor_err(s.getVendor_err());
                    }
                }
                return this;
            }

            @Override
            public boolean isValid() {
                return true;
            }

            @Override
            public SVCPollCq free() {
                return this;
            }
        };
    }

    @Override
    public void requestNotify(Cq cq) {
        ((FCq) cq).armed = true;
    }

    @Override
    public boolean awaitCqEvent(Cq cq, int timeoutMs) throws IOException {
        FCq f = (FCq) cq;
        synchronized (f) {
            if (!f.pending.isEmpty() && !f.armed) {
                return true;
            }
            try {
                f.wait(timeoutMs);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted");
            }
            return !f.pending.isEmpty();
        }
    }
}
