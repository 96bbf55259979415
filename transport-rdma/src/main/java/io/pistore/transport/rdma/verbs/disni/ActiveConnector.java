package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The active side of a connection: our own state machine over raw RDMA CM calls, each step waiting
 * for its event with the caller's deadline, so ADDR_ERROR, ROUTE_ERROR, UNREACHABLE, REJECTED and
 * CONNECT_ERROR fail at once with the step named (DiSNI's {@code RdmaEndpoint.connect} waits forever
 * on them). Steps: resolve address, resolve route, hello on the control connection (the private
 * data; see {@link HelloClient}), create the QP, connect, ESTABLISHED. A failed attempt destroys its
 * QP and id.
 */
final class ActiveConnector {
    /** {@code rdma_connect}'s transport retry count: the most the 3-bit field holds. */
    static final int CONNECT_RETRY_COUNT = 7;

    private final DisniDevice device;
    private final DisniOps ops;
    private final CmEventPump events;

    ActiveConnector(DisniDevice device) {
        this.device = device;
        this.ops = device.ops();
        this.events = device.events();
    }

    RcConnection connect(String address, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                       QpConfig config, ByteBuffer privateData, long timeoutMillis) throws VerbsException {
        InetSocketAddress dst = DisniAddress.parse(address);
        DisniPd dpd = DisniDevice.disniPd(pd);
        DisniCq scq = DisniDevice.disniCq(sendCq);
        DisniCq rcq = DisniDevice.disniCq(recvCq);
        device.checkQp(config);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        String where = "disni: connect to " + address + ": ";
        DisniOps.Id id;
        try {
            id = ops.createId(device.channel());
        } catch (IOException e) {
            throw new VerbsException(VerbsException.ENOMEM, where + "rdma_create_id failed: "
                    + DisniProbe.firstLine(String.valueOf(e.getMessage())));
        }
        BlockingQueue<CmEventType> q = events.waitOn(id);
        boolean qpMade = false;
        DisniQp qp = null;
        try {
            ops.resolveAddr(id, dst, millisLeft(deadline));
            await(q, CmEventType.ADDR_RESOLVED, deadline, timeoutMillis, where, "resolving the address");
            DisniOps.Ctx c = ops.context(id);
            if (c != null && !ops.sameDevice(c, device.ctx())) {
                throw new VerbsException(VerbsException.EINVAL, where + "the route leaves through another RDMA"
                        + " device than the one opened on " + device.localAddress() + " (set rdma.disni.local)");
            }
            ops.resolveRoute(id, millisLeft(deadline));
            await(q, CmEventType.ROUTE_RESOLVED, deadline, timeoutMillis, where, "resolving the route");
            InetSocketAddress src = ops.source(id);
            HelloClient.exchange(DisniAddress.control(dst), src, privateData, deadline, where);
            DisniOps.Qp native_ = ops.createQp(id, dpd.pd, scq.cq, rcq.cq, config.maxSendWr(), config.maxRecvWr(), 0);
            qpMade = true;
            qp = new DisniQp(ops, native_, ops.qpNum(native_));
            ops.connect(id, CONNECT_RETRY_COUNT, config.rnrRetry());
            await(q, CmEventType.ESTABLISHED, deadline, timeoutMillis, where, "connecting");
            DisniConnection conn = new DisniConnection(device, id, qp, address, ByteBuffer.allocate(0), null, null);
            events.addConnection(id, conn);
            return conn;
        } catch (VerbsException | RuntimeException e) {
            device.abandon(id, qp, qpMade);
            throw e;
        } catch (IOException e) {
            device.abandon(id, qp, qpMade);
            throw new VerbsException(VerbsException.ECONNREFUSED, where + DisniProbe.firstLine(String.valueOf(
                    e.getMessage())));
        } finally {
            events.stopWaiting(id);
        }
    }

    /** What is left of {@code deadline} in milliseconds, at least 1 (0 means "no timeout" to sockets). */
    static int millisLeft(long deadline) {
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
}
