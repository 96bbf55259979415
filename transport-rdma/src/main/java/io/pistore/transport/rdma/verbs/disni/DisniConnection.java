package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.Connection;
import io.pistore.transport.rdma.verbs.QueuePair;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/** An established DiSNI RC connection: its cm_id, QP, and (passive side) the handler to tell on disconnect. */
final class DisniConnection implements Connection {
    private final DisniDevice device;
    final DisniOps.Id id;
    private final DisniQp qp;
    private final String peer;
    private final ByteBuffer peerPrivateData;
    private final Object context;
    private final ConnectHandler handler;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicBoolean reported = new AtomicBoolean();

    DisniConnection(DisniDevice device, DisniOps.Id id, DisniQp qp, String peer, ByteBuffer peerPrivateData,
                    Object context, ConnectHandler handler) {
        this.device = device;
        this.id = id;
        this.qp = qp;
        this.peer = peer;
        this.peerPrivateData = peerPrivateData.asReadOnlyBuffer();
        this.context = context;
        this.handler = handler;
    }

    @Override
    public QueuePair qp() {
        return qp;
    }

    @Override
    public ByteBuffer peerPrivateData() {
        return peerPrivateData.duplicate();
    }

    @Override
    public String peer() {
        return peer;
    }

    @Override
    public Object context() {
        return context;
    }

    /** RDMA_CM_EVENT_DISCONNECTED (or DEVICE_REMOVAL): the QP is in error; the passive handler hears once. */
    void peerDisconnected() {
        qp.toError();
        if (handler != null && reported.compareAndSet(false, true)) {
            handler.onDisconnected(this);
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
        return "disni connection " + qp + " to " + peer;
    }
}
