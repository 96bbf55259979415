package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.Connection;
import io.pistore.transport.rdma.verbs.QueuePair;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/** One side of a soft RC connection. */
final class SoftConnection implements Connection {
    private final SoftQp qp;
    private final String peer;
    private final ByteBuffer peerPrivateData;
    private final ConnectHandler handler;
    private final Object context;
    private final AtomicBoolean disconnectedReported = new AtomicBoolean();

    SoftConnection(SoftQp qp, String peer, ByteBuffer peerPrivateData, ConnectHandler handler, Object context) {
        this.context = context;
        this.qp = qp;
        this.peer = peer;
        this.peerPrivateData = peerPrivateData.asReadOnlyBuffer();
        this.handler = handler;
        qp.connection = this;
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
    public Object context() {
        return context;
    }

    @Override
    public String peer() {
        return peer;
    }

    /** The peer closed: tell the passive side's handler once (RDMA_CM_EVENT_DISCONNECTED). */
    void peerDisconnected() {
        if (handler != null && disconnectedReported.compareAndSet(false, true)) {
            SoftFabric.schedule(() -> handler.onDisconnected(this), 0);
        }
    }

    @Override
    public void close() {
        qp.close();
    }

    @Override
    public String toString() {
        return "soft connection " + qp + " to " + peer;
    }
}
