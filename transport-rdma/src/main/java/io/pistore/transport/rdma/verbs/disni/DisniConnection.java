package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.EstablishedConnection;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/** An established DiSNI RC connection: its cm_id, QP, and (passive side) the handler to tell on disconnect. */
final class DisniConnection extends EstablishedConnection<DisniQp> {
    private final DisniDevice device;
    final DisniOps.Id id;
    private final AtomicBoolean closed = new AtomicBoolean();

    DisniConnection(DisniDevice device, DisniOps.Id id, DisniQp qp, String peer, ByteBuffer peerPrivateData,
                    Object context, ConnectHandler handler) {
        super(qp, peer, peerPrivateData, context, handler);
        this.device = device;
        this.id = id;
    }

    /** RDMA_CM_EVENT_DISCONNECTED (or DEVICE_REMOVAL): the QP is in error; the passive handler hears once. */
    void peerDisconnected() {
        qp.toError();
        ConnectHandler h = disconnectHandlerOnce();
        if (h != null) {
            h.onDisconnected(this);
        }
    }

    boolean isClosed() {
        return closed.get();
    }

    /** {@code rdma_disconnect} (the NIC flushes posted work with WR_FLUSH_ERR), then QP and id are destroyed. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            device.closeConnection(this);
            qp.close();
        }
    }

    @Override
    public String toString() {
        return "disni connection " + qp + " to " + peer();
    }
}
