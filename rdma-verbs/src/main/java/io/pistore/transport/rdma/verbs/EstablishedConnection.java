package io.pistore.transport.rdma.verbs;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What every provider's connection holds: its QP, the peer's name and private data, the context the
 * passive side's handler gave, and that handler, told of a disconnect at most once. Providers add
 * how they disconnect.
 *
 * @param <Q> the provider's queue pair
 */
public abstract class EstablishedConnection<Q extends QueuePair> implements RcConnection {
    protected final Q qp;
    private final String peer;
    private final ByteBuffer peerPrivateData;
    private final Object context;
    private final ConnectHandler handler;
    private final AtomicBoolean disconnectReported = new AtomicBoolean();

    protected EstablishedConnection(Q qp, String peer, ByteBuffer peerPrivateData, Object context,
                                    ConnectHandler handler) {
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

    /**
     * The handler to tell that the peer disconnected, the first time this is called on a passive
     * side; null otherwise (active side, or already told).
     */
    protected ConnectHandler disconnectHandlerOnce() {
        return handler != null && disconnectReported.compareAndSet(false, true) ? handler : null;
    }
}
