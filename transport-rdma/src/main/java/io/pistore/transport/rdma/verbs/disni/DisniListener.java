package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;

/**
 * The passive side: an RDMA CM listener plus the TCP control listener on the next port
 * ({@link HelloServer}). A hello calls the handler's {@code onConnectRequest} with the private data
 * and keeps its {@code Accept} for {@link #PENDING_MILLIS} ({@link PendingHellos}); the
 * CONNECT_REQUEST whose peer address matches the hello's data source gets its QP from that
 * {@code Accept} and is accepted; ESTABLISHED calls {@code onEstablished}, DISCONNECTED (through the
 * connection) {@code onDisconnected}. A connect request nobody said hello for is refused (its id is
 * destroyed, which rejects it).
 */
final class DisniListener implements Listener {
    private static final System.Logger LOG = System.getLogger("io.pistore.transport.rdma");
    /** How long an accepted hello waits for its connect request. */
    static final long PENDING_MILLIS = 30_000;

    /** A passive connection between accept and ESTABLISHED. */
    record Accepting(DisniListener listener, DisniQp qp, PendingHellos.Pending pending) {
    }

    private final DisniDevice device;
    private final DisniOps ops;
    private final DisniOps.Id id;
    private final InetSocketAddress cmAddress;
    private final HelloServer hellos;
    private final ConnectHandler handler;
    private final PendingHellos pending = new PendingHellos(TimeUnit.MILLISECONDS.toNanos(PENDING_MILLIS),
            System::nanoTime);
    private volatile boolean stopped;

    private DisniListener(DisniDevice device, DisniOps.Id id, InetSocketAddress cmAddress, ServerSocket control,
                          ConnectHandler handler) {
        this.device = device;
        this.ops = device.ops();
        this.id = id;
        this.cmAddress = cmAddress;
        this.handler = handler;
        this.hellos = new HelloServer(control, cmAddress.getPort(), this::offer);
    }

    /** Listens on {@code address} ({@code HOST:PORT}, port 0 for any) of {@code device}. */
    static DisniListener open(DisniDevice device, String address, ConnectHandler handler) throws VerbsException {
        DisniOps ops = device.ops();
        InetSocketAddress at = DisniAddress.parse(address);
        DisniOps.Id id;
        try {
            id = ops.createId(device.channel());
        } catch (IOException e) {
            throw new VerbsException(VerbsException.ENOMEM, "disni: rdma_create_id failed: " + e.getMessage());
        }
        try {
            ops.bindAddr(id, at);
            DisniOps.Ctx c = ops.context(id);
            if (c != null && !ops.sameDevice(c, device.ctx())) {
                throw new VerbsException(VerbsException.EINVAL, "disni: " + address + " is on another RDMA device than"
                        + " the one opened on " + device.localAddress() + " (set rdma.disni.local)");
            }
            ops.listen(id, 128);
            InetSocketAddress bound = ops.source(id);
            InetSocketAddress cm = bound != null && bound.getPort() != 0 ? bound : at;
            ServerSocket control = HelloServer.bind(cm, address);
            DisniListener l = new DisniListener(device, id, cm, control, handler);
            device.events().addListener(id, l);
            l.hellos.start();
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

    @Override
    public String address() {
        return cmAddress.getAddress().getHostAddress() + ":" + cmAddress.getPort();
    }

    /** Asks the handler about a hello (a control session's thread); null when accepted (then pending), else why not. */
    String offer(ConnectHello.Hello h) {
        if (stopped) {
            return "the listener is closing";
        }
        ConnectHandler.Accept a;
        try {
            a = handler.onConnectRequest(h.dataSource().getAddress().getHostAddress() + ":"
                    + h.dataSource().getPort(), h.privateData());
            DisniDevice.disniPd(a.pd());
            DisniDevice.disniCq(a.sendCq());
            DisniDevice.disniCq(a.recvCq());
            device.checkQp(a.config());
        } catch (IOException | RuntimeException e) {
            return DisniProbe.firstLine(String.valueOf(e.getMessage()));
        }
        pending.add(h.dataSource(), a, h.privateData());
        return null;
    }

    /** The pending hello for a connect request from {@code peer} (see {@link PendingHellos#take}). */
    PendingHellos.Pending take(InetSocketAddress peer) {
        return pending.take(peer);
    }

    int pendingCount() {
        return pending.size();
    }

    /** CONNECT_REQUEST on this listener (event thread). */
    void onConnectRequest(DisniOps.Id conn) {
        PendingHellos.Pending p;
        try {
            p = take(ops.destination(conn));
        } catch (IOException e) {
            p = null;
        }
        if (p == null || stopped) {
            LOG.log(System.Logger.Level.WARNING, "disni: refusing a connect request without a hello");
            if (p != null) {
                p.release();
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
            device.events().addAccepting(conn, new Accepting(this, qp, p));
            ops.accept(conn, a.config().rnrRetry());
        } catch (IOException | RuntimeException e) {
            device.events().removeAccepting(conn);
            LOG.log(System.Logger.Level.WARNING, "disni: accepting " + p.dataSource() + " failed: " + e.getMessage());
            device.abandon(conn, qp, qpMade);
            p.release();
        }
    }

    /** ESTABLISHED on an accepted id (event thread). */
    void established(DisniOps.Id conn, Accepting a) {
        PendingHellos.Pending p = a.pending();
        DisniConnection c = new DisniConnection(device, conn, a.qp(), p.dataSource().getAddress()
                .getHostAddress() + ":" + p.dataSource().getPort(), p.privateData(), p.accept().context(), handler);
        device.events().addConnection(conn, c);
        handler.onEstablished(c);
    }

    /** Any other event on an accepted id before ESTABLISHED (event thread): the connection is given up. */
    void notEstablished(DisniOps.Id conn, Accepting a, CmEventType type) {
        LOG.log(System.Logger.Level.WARNING, "disni: accepted connection from " + a.pending().dataSource()
                + " failed: " + type);
        device.abandon(conn, a.qp(), true);
    }

    @Override
    public void close() {
        if (stopped) {
            return;
        }
        stopped = true;
        device.events().removeListener(id);
        hellos.close();
        pending.clear();
        ops.destroyId(id);
    }
}
