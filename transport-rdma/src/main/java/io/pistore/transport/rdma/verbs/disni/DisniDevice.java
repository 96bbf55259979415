package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.Connection;
import io.pistore.transport.rdma.verbs.DeviceCaps;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A DiSNI device: one RDMA CM event channel with its own event thread, the verbs context of the
 * local address it was opened on, and the connection management the transport needs.
 *
 * <p><b>Active side</b> ({@link #connect}): our own state machine over raw RDMA CM calls, each step
 * waiting for its event with the caller's deadline, so ADDR_ERROR, ROUTE_ERROR, UNREACHABLE,
 * REJECTED and CONNECT_ERROR fail at once with the step named (DiSNI's {@code RdmaEndpoint.connect}
 * waits forever on them). Steps: resolve address, resolve route, hello on the control connection
 * (the private data; see {@link ConnectHello}), create the QP, connect, ESTABLISHED.
 *
 * <p><b>Passive side</b> ({@link #listen}): the RDMA CM listener plus a TCP control listener on the
 * next port. A hello calls the handler's {@code onConnectRequest} with the private data and keeps
 * its {@code Accept} for {@link #PENDING_MILLIS}; the CONNECT_REQUEST whose peer address matches the
 * hello's data source gets its QP from that {@code Accept} and is accepted; ESTABLISHED calls
 * {@code onEstablished}, DISCONNECTED {@code onDisconnected}. A connect request nobody said hello
 * for is refused (its id is destroyed, which rejects it).
 */
final class DisniDevice implements VerbsDevice {
    private static final System.Logger LOG = System.getLogger("io.pistore.transport.rdma");
    /** The control listener's port: the RDMA CM port plus this. */
    static final int CONTROL_PORT_OFFSET = 1;
    static final long PENDING_MILLIS = 30_000;
    static final int EVENT_POLL_MS = 100;
    static final int CONNECT_RETRY_COUNT = 7;

    private final DisniOps ops;
    private final DisniOps.Channel channel;
    private final DisniOps.Id deviceId;
    private final DisniOps.Ctx ctx;
    private final DeviceCaps caps;
    private final String localAddress;
    private final Thread events;
    private volatile boolean closed;

    private final Map<DisniOps.Id, BlockingQueue<CmEventType>> waiters = new ConcurrentHashMap<>();
    private final Map<DisniOps.Id, DisniListener> listeners = new ConcurrentHashMap<>();
    private final Map<DisniOps.Id, Accepting> accepting = new ConcurrentHashMap<>();
    private final Map<DisniOps.Id, DisniConnection> connections = new ConcurrentHashMap<>();

    /** A passive connection between accept and ESTABLISHED. */
    record Accepting(DisniListener listener, DisniQp qp, Pending pending) {
    }

    /** A hello's accepted resources, waiting for its RDMA connect request. */
    record Pending(InetSocketAddress dataSource, ConnectHandler.Accept accept, ByteBuffer privateData,
                           long expiresNanos) {
    }

    /**
     * Opens the device serving {@code localAddress} (an IP, or null: the first local address whose
     * RDMA CM bind yields a device, among {@code candidates}).
     */
    DisniDevice(DisniOps ops, String localAddress, List<InetAddress> candidates, DeviceCaps caps)
            throws VerbsException {
        this.ops = ops;
        this.caps = caps;
        DisniOps.Channel ch;
        try {
            ch = ops.createEventChannel();
        } catch (IOException e) {
            throw new VerbsException(VerbsException.ENODEV, "disni: rdma_create_event_channel failed: "
                    + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
        this.channel = ch;
        DisniOps.Id found = null;
        DisniOps.Ctx foundCtx = null;
        String foundAddr = null;
        List<InetAddress> tries = new ArrayList<>();
        try {
            if (localAddress != null) {
                tries.add(InetAddress.getByName(localAddress));
            } else {
                tries.addAll(candidates);
            }
            for (InetAddress a : tries) {
                DisniOps.Id id = ops.createId(channel);
                try {
                    ops.bindAddr(id, new InetSocketAddress(a, 0));
                    DisniOps.Ctx c = ops.context(id);
                    if (c != null) {
                        found = id;
                        foundCtx = c;
                        foundAddr = a.getHostAddress();
                        break;
                    }
                } catch (IOException e) {
                    // not an RDMA address; try the next
                }
                ops.destroyId(id);
            }
        } catch (IOException e) {
            ops.destroyEventChannel(channel);
            throw new VerbsException(VerbsException.ENODEV, "disni: " + DisniProbe.firstLine(String.valueOf(
                    e.getMessage())));
        }
        if (found == null) {
            ops.destroyEventChannel(channel);
            throw new VerbsException(VerbsException.ENODEV, localAddress != null
                    ? "disni: " + localAddress + " is not the address of an RDMA device"
                    : "disni: no local address is bound to an RDMA device (tried " + tries.size()
                    + "); set rdma.disni.local=<ip of the RDMA interface>");
        }
        this.deviceId = found;
        this.ctx = foundCtx;
        this.localAddress = foundAddr;
        this.events = new Thread(this::eventLoop, "pistore-disni-cm");
        this.events.setDaemon(true);
        this.events.start();
    }

    /** The local address whose device this is. */
    String localAddress() {
        return localAddress;
    }

    @Override
    public DeviceCaps caps() {
        return caps;
    }

    @Override
    public ProtectionDomain allocPd() throws VerbsException {
        try {
            return new DisniPd(ops, ops.allocPd(ctx));
        } catch (IOException e) {
            throw new VerbsException(VerbsException.ENOMEM, "disni: ibv_alloc_pd failed: "
                    + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
    }

    @Override
    public CompletionQueue createCq(int entries) throws VerbsException {
        if (entries < 1 || entries > caps.maxCqe()) {
            throw new VerbsException(VerbsException.EINVAL, "disni: CQ of " + entries + " entries (1 to "
                    + caps.maxCqe() + ")");
        }
        try {
            return new DisniCq(ops, ops.createCq(ctx, entries));
        } catch (IOException e) {
            throw new VerbsException(VerbsException.ENOMEM, "disni: ibv_create_cq failed: "
                    + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
    }

    // ---------------------------------------------------------------- events

    private void eventLoop() {
        while (!closed) {
            DisniOps.CmEvent ev;
            try {
                ev = ops.getCmEvent(channel, EVENT_POLL_MS);
            } catch (IOException e) {
                if (!closed) {
                    LOG.log(System.Logger.Level.WARNING, "disni: rdma_get_cm_event failed: "
                            + DisniProbe.firstLine(String.valueOf(e.getMessage())));
                    sleepQuietly();
                }
                continue;
            }
            if (ev != null) {
                try {
                    dispatch(ev);
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "disni: handling " + ev.type() + " failed: " + e);
                }
            }
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(EVENT_POLL_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Routes one event: connect request to its listener, others to whoever waits on the id. */
    void dispatch(DisniOps.CmEvent ev) {
        if (ev.type() == CmEventType.CONNECT_REQUEST) {
            DisniListener l = ev.listenId() == null ? null : listeners.get(ev.listenId());
            if (l == null) {
                ops.destroyId(ev.id());
            } else {
                l.onConnectRequest(ev.id());
            }
            return;
        }
        if (ev.id() == null) {
            return;
        }
        BlockingQueue<CmEventType> w = waiters.get(ev.id());
        if (w != null) {
            w.offer(ev.type());
            return;
        }
        Accepting a = accepting.remove(ev.id());
        if (a != null) {
            if (ev.type() == CmEventType.ESTABLISHED) {
                a.listener.established(ev.id(), a);
            } else {
                LOG.log(System.Logger.Level.WARNING, "disni: accepted connection from "
                        + a.pending.dataSource() + " failed: " + ev.type());
                a.qp.close();
                ops.destroyQp(ev.id());
                ops.destroyId(ev.id());
            }
            return;
        }
        DisniConnection c = connections.get(ev.id());
        if (c != null && (ev.type() == CmEventType.DISCONNECTED || ev.type() == CmEventType.DEVICE_REMOVAL)) {
            c.peerDisconnected();
        }
    }

    // ---------------------------------------------------------------- active side

    static InetSocketAddress parse(String address) throws VerbsException {
        String a = address == null ? "" : address.trim();
        int colon = a.lastIndexOf(':');
        if (colon <= 0 || colon == a.length() - 1) {
            throw new VerbsException(VerbsException.EINVAL, "disni: address must be HOST:PORT, not '" + address + "'");
        }
        String host = a.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(a.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (port < 0 || port > 65535 - CONTROL_PORT_OFFSET) {
            throw new VerbsException(VerbsException.EINVAL, "disni: port must be 0 to " + (65535 - CONTROL_PORT_OFFSET)
                    + " in '" + address + "'");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (IOException e) {
            throw new VerbsException(VerbsException.EINVAL, "disni: unknown host '" + host + "'");
        }
    }

    @Override
    public Connection connect(String address, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                              QpConfig config, ByteBuffer privateData, long timeoutMillis) throws VerbsException {
        InetSocketAddress dst = parse(address);
        DisniPd dpd = disniPd(pd);
        DisniCq scq = disniCq(sendCq);
        DisniCq rcq = disniCq(recvCq);
        checkQp(config);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        String where = "disni: connect to " + address + ": ";
        DisniOps.Id id;
        try {
            id = ops.createId(channel);
        } catch (IOException e) {
            throw new VerbsException(VerbsException.ENOMEM, where + "rdma_create_id failed: "
                    + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
        BlockingQueue<CmEventType> q = new LinkedBlockingQueue<>();
        waiters.put(id, q);
        boolean qpMade = false;
        DisniQp qp = null;
        try {
            ops.resolveAddr(id, dst, millisLeft(deadline));
            await(q, CmEventType.ADDR_RESOLVED, deadline, timeoutMillis, where, "resolving the address");
            DisniOps.Ctx c = ops.context(id);
            if (c != null && !ops.sameDevice(c, ctx)) {
                throw new VerbsException(VerbsException.EINVAL, where + "the route leaves through another RDMA"
                        + " device than the one opened on " + localAddress + " (set rdma.disni.local)");
            }
            ops.resolveRoute(id, millisLeft(deadline));
            await(q, CmEventType.ROUTE_RESOLVED, deadline, timeoutMillis, where, "resolving the route");
            InetSocketAddress src = ops.source(id);
            hello(dst, src, privateData, deadline, where);
            DisniOps.Qp native_ = ops.createQp(id, dpd.pd, scq.cq, rcq.cq, config.maxSendWr(), config.maxRecvWr(), 0);
            qpMade = true;
            qp = new DisniQp(ops, native_, ops.qpNum(native_));
            ops.connect(id, CONNECT_RETRY_COUNT, config.rnrRetry());
            await(q, CmEventType.ESTABLISHED, deadline, timeoutMillis, where, "connecting");
            DisniConnection conn = new DisniConnection(this, id, qp, address, ByteBuffer.allocate(0), null, null);
            connections.put(id, conn);
            return conn;
        } catch (VerbsException | RuntimeException e) {
            fail(id, qp, qpMade);
            throw e;
        } catch (IOException e) {
            fail(id, qp, qpMade);
            throw new VerbsException(VerbsException.ECONNREFUSED, where + DisniProbe.firstLine(String.valueOf(
                    e.getMessage())));
        } finally {
            waiters.remove(id);
        }
    }

    private void fail(DisniOps.Id id, DisniQp qp, boolean qpMade) {
        if (qp != null) {
            qp.close();
        }
        if (qpMade) {
            ops.destroyQp(id);
        }
        ops.destroyId(id);
    }

    private static int millisLeft(long deadline) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
    }

    /** Waits for {@code want}; a failing event or the deadline ends the connect with the step named. */
    static void await(BlockingQueue<CmEventType> q, CmEventType want, long deadline, long timeoutMillis, String where,
                      String step) throws VerbsException {
        while (true) {
            long left = deadline - System.nanoTime();
            CmEventType ev;
            try {
                ev = left <= 0 ? null : q.poll(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new VerbsException(VerbsException.ECONNREFUSED, where + "interrupted while " + step);
            }
            if (ev == null) {
                throw new VerbsException(VerbsException.ETIMEDOUT, where + "timed out after " + timeoutMillis
                        + " ms while " + step + " (no " + want + ")");
            }
            if (ev == want) {
                return;
            }
            if (ev.failsConnect()) {
                throw new VerbsException(VerbsException.ECONNREFUSED, where + ev + " while " + step);
            }
            // other events (ADDR_CHANGE, TIMEWAIT_EXIT) do not end the attempt
        }
    }

    /** The control-connection half of a connect: private data out, the handler's verdict back. */
    private void hello(InetSocketAddress dst, InetSocketAddress src, ByteBuffer privateData, long deadline,
                       String where) throws IOException {
        InetSocketAddress control = new InetSocketAddress(dst.getAddress(), dst.getPort() + CONTROL_PORT_OFFSET);
        ConnectHello.Verdict v;
        try (Socket s = new Socket()) {
            s.connect(control, millisLeft(deadline));
            s.setSoTimeout(millisLeft(deadline));
            s.setTcpNoDelay(true);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            ConnectHello.write(out, ConnectHello.encodeHello(src, privateData));
            v = ConnectHello.decodeVerdict(ConnectHello.read(in));
        } catch (SocketTimeoutException e) {
            throw new VerbsException(VerbsException.ETIMEDOUT, where + "no answer from the control listener at "
                    + control + " before the deadline");
        } catch (IOException e) {
            if (e instanceof VerbsException) {
                throw e;
            }
            throw new VerbsException(VerbsException.ECONNREFUSED, where + "control connection to " + control
                    + " failed: " + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
        if (!v.accepted()) {
            throw new VerbsException(VerbsException.ECONNREFUSED, where + "rejected: " + v.message());
        }
    }

    private void checkQp(QpConfig c) throws VerbsException {
        if (c.maxSendWr() > caps.maxQpWr() || c.maxRecvWr() > caps.maxQpWr()) {
            throw new VerbsException(VerbsException.EINVAL, "disni: QP of " + c.maxSendWr() + "/" + c.maxRecvWr()
                    + " work requests; this device allows " + caps.maxQpWr() + " (rdma.disni.maxQpWr)");
        }
        if (c.maxSendSge() > DisniVerbsProvider.MAX_SGE || c.maxRecvSge() > DisniVerbsProvider.MAX_SGE) {
            throw new VerbsException(VerbsException.EINVAL, "disni: QP with " + c.maxSendSge() + "/" + c.maxRecvSge()
                    + " SGEs; libdisni creates QPs with " + DisniVerbsProvider.MAX_SGE);
        }
        if (c.integrity()) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "disni: no integrity QPs (IB_QP_CREATE_INTEGRITY_EN)");
        }
    }

    private static DisniPd disniPd(ProtectionDomain pd) throws VerbsException {
        if (!(pd instanceof DisniPd)) {
            throw new VerbsException(VerbsException.EINVAL, "disni: the PD is not a disni PD: " + pd);
        }
        return (DisniPd) pd;
    }

    private static DisniCq disniCq(CompletionQueue cq) throws VerbsException {
        if (!(cq instanceof DisniCq)) {
            throw new VerbsException(VerbsException.EINVAL, "disni: the CQ is not a disni CQ: " + cq);
        }
        return (DisniCq) cq;
    }

    void closeConnection(DisniConnection c) {
        connections.remove(c.id);
        ops.disconnect(c.id);
        ops.destroyQp(c.id);
        ops.destroyId(c.id);
    }

    // ---------------------------------------------------------------- passive side

    @Override
    public Listener listen(String address, ConnectHandler handler) throws VerbsException {
        InetSocketAddress at = parse(address);
        DisniOps.Id id;
        try {
            id = ops.createId(channel);
        } catch (IOException e) {
            throw new VerbsException(VerbsException.ENOMEM, "disni: rdma_create_id failed: " + e.getMessage());
        }
        try {
            ops.bindAddr(id, at);
            DisniOps.Ctx c = ops.context(id);
            if (c != null && !ops.sameDevice(c, ctx)) {
                throw new VerbsException(VerbsException.EINVAL, "disni: " + address + " is on another RDMA device than"
                        + " the one opened on " + localAddress + " (set rdma.disni.local)");
            }
            ops.listen(id, 128);
            InetSocketAddress bound = ops.source(id);
            InetSocketAddress cm = bound != null && bound.getPort() != 0 ? bound : at;
            ServerSocket control = new ServerSocket();
            try {
                control.setReuseAddress(true);
                control.bind(new InetSocketAddress(cm.getAddress(), cm.getPort() + CONTROL_PORT_OFFSET));
            } catch (IOException e) {
                control.close();
                throw new VerbsException(VerbsException.EINVAL, "disni: cannot open the control listener on port "
                        + (cm.getPort() + CONTROL_PORT_OFFSET) + " beside " + address + ": " + e.getMessage());
            }
            DisniListener l = new DisniListener(id, cm, control, handler);
            listeners.put(id, l);
            l.start();
            return l;
        } catch (VerbsException e) {
            ops.destroyId(id);
            throw e;
        } catch (IOException e) {
            ops.destroyId(id);
            throw new VerbsException(VerbsException.EINVAL, "disni: listen on " + address + " failed: "
                    + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
    }

    final class DisniListener implements Listener {
        private final DisniOps.Id id;
        private final InetSocketAddress cmAddress;
        private final ServerSocket control;
        private final ConnectHandler handler;
        private final List<Pending> pending = new ArrayList<>();
        private final Thread acceptor;
        private volatile boolean stopped;

        DisniListener(DisniOps.Id id, InetSocketAddress cmAddress, ServerSocket control, ConnectHandler handler) {
            this.id = id;
            this.cmAddress = cmAddress;
            this.control = control;
            this.handler = handler;
            this.acceptor = new Thread(this::acceptLoop, "pistore-disni-control-" + cmAddress.getPort());
            this.acceptor.setDaemon(true);
        }

        void start() {
            acceptor.start();
        }

        @Override
        public String address() {
            return cmAddress.getAddress().getHostAddress() + ":" + cmAddress.getPort();
        }

        private void acceptLoop() {
            while (!stopped) {
                Socket s;
                try {
                    s = control.accept();
                } catch (IOException e) {
                    if (!stopped) {
                        LOG.log(System.Logger.Level.WARNING, "disni: control listener: " + e.getMessage());
                    }
                    return;
                }
                Thread t = new Thread(() -> session(s), "pistore-disni-hello");
                t.setDaemon(true);
                t.start();
            }
        }

        /** One hello: the handler decides, the verdict goes back, an accepted hello waits for its connect. */
        void session(Socket s) {
            try (s) {
                s.setSoTimeout(10_000);
                DataInputStream in = new DataInputStream(s.getInputStream());
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                ConnectHello.Hello h;
                try {
                    h = ConnectHello.decodeHello(ConnectHello.read(in));
                } catch (IOException e) {
                    ConnectHello.write(out, ConnectHello.encodeVerdict(false, DisniProbe.firstLine(
                            String.valueOf(e.getMessage()))));
                    return;
                }
                String verdict = offer(h);
                ConnectHello.write(out, ConnectHello.encodeVerdict(verdict == null, verdict));
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "disni: control session: " + e.getMessage());
            }
        }

        /** Asks the handler about a hello; null when accepted (then pending), else why not. */
        String offer(ConnectHello.Hello h) {
            if (stopped) {
                return "the listener is closing";
            }
            ConnectHandler.Accept a;
            try {
                a = handler.onConnectRequest(h.dataSource().getAddress().getHostAddress() + ":"
                        + h.dataSource().getPort(), h.privateData());
                disniPd(a.pd());
                disniCq(a.sendCq());
                disniCq(a.recvCq());
                checkQp(a.config());
            } catch (IOException | RuntimeException e) {
                return DisniProbe.firstLine(String.valueOf(e.getMessage()));
            }
            synchronized (pending) {
                expire();
                pending.add(new Pending(h.dataSource(), a, h.privateData(),
                        System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PENDING_MILLIS)));
            }
            return null;
        }

        /** The pending hello for a connect request from {@code peer}: same address and port, else the only one from that IP. */
        Pending take(InetSocketAddress peer) {
            synchronized (pending) {
                expire();
                Pending sameIp = null;
                int sameIpCount = 0;
                for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
                    Pending p = it.next();
                    if (p.dataSource().equals(peer)) {
                        it.remove();
                        return p;
                    }
                    if (peer != null && p.dataSource().getAddress().equals(peer.getAddress())) {
                        sameIp = p;
                        sameIpCount++;
                    }
                }
                if (sameIpCount == 1) {
                    pending.remove(sameIp);
                    return sameIp;
                }
                return null;
            }
        }

        int pendingCount() {
            synchronized (pending) {
                return pending.size();
            }
        }

        private void expire() {
            long now = System.nanoTime();
            for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
                Pending p = it.next();
                if (now - p.expiresNanos() > 0) {
                    it.remove();
                    release(p);
                }
            }
        }

        private void release(Pending p) {
            p.accept().sendCq().close();
            if (p.accept().recvCq() != p.accept().sendCq()) {
                p.accept().recvCq().close();
            }
        }

        /** CONNECT_REQUEST on this listener (event thread). */
        void onConnectRequest(DisniOps.Id conn) {
            Pending p;
            try {
                p = take(ops.destination(conn));
            } catch (IOException e) {
                p = null;
            }
            if (p == null || stopped) {
                LOG.log(System.Logger.Level.WARNING, "disni: refusing a connect request without a hello");
                if (p != null) {
                    release(p);
                }
                ops.destroyId(conn);
                return;
            }
            ConnectHandler.Accept a = p.accept();
            boolean qpMade = false;
            DisniQp qp = null;
            try {
                DisniOps.Qp q = ops.createQp(conn, ((DisniPd) a.pd()).pd, ((DisniCq) a.sendCq()).cq,
                        ((DisniCq) a.recvCq()).cq, a.config().maxSendWr(), a.config().maxRecvWr(), 0);
                qpMade = true;
                qp = new DisniQp(ops, q, ops.qpNum(q));
                accepting.put(conn, new Accepting(this, qp, p));
                ops.accept(conn, a.config().rnrRetry());
            } catch (IOException | RuntimeException e) {
                accepting.remove(conn);
                LOG.log(System.Logger.Level.WARNING, "disni: accepting " + p.dataSource() + " failed: " + e.getMessage());
                fail(conn, qp, qpMade);
                release(p);
            }
        }

        /** ESTABLISHED on an accepted id (event thread). */
        void established(DisniOps.Id conn, Accepting a) {
            Pending p = a.pending();
            DisniConnection c = new DisniConnection(DisniDevice.this, conn, a.qp(), p.dataSource().getAddress()
                    .getHostAddress() + ":" + p.dataSource().getPort(), p.privateData(), p.accept().context(), handler);
            connections.put(conn, c);
            handler.onEstablished(c);
        }

        @Override
        public void close() {
            if (stopped) {
                return;
            }
            stopped = true;
            listeners.remove(id);
            try {
                control.close();
            } catch (IOException ignored) {
                // closing
            }
            synchronized (pending) {
                for (Pending p : pending) {
                    release(p);
                }
                pending.clear();
            }
            ops.destroyId(id);
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        for (DisniListener l : new ArrayList<>(listeners.values())) {
            l.close();
        }
        for (DisniConnection c : new ArrayList<>(connections.values())) {
            c.close();
        }
        closed = true;
        try {
            events.join(2L * EVENT_POLL_MS + 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        ops.destroyId(deviceId);
        ops.destroyEventChannel(channel);
    }
}
