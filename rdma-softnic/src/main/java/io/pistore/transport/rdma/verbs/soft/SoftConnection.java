package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.EstablishedConnection;
import java.nio.ByteBuffer;

/** One side of a soft RC connection. */
final class SoftConnection extends EstablishedConnection<SoftQp> {
    SoftConnection(SoftQp qp, String peer, ByteBuffer peerPrivateData, ConnectHandler handler, Object context) {
        super(qp, peer, peerPrivateData, context, handler);
        qp.connection = this;
    }

    /** The peer closed: tell the passive side's handler once (RDMA_CM_EVENT_DISCONNECTED). */
    void peerDisconnected() {
        ConnectHandler h = disconnectHandlerOnce();
        if (h != null) {
            SoftFabric.schedule(() -> h.onDisconnected(this), 0);
        }
    }

    @Override
    public void close() {
        qp.close();
    }

    @Override
    public String toString() {
        return "soft connection " + qp + " to " + peer();
    }
}
