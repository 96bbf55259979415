package io.pistore.transport.rdma.verbs;

import java.nio.ByteBuffer;

/** An established RC connection ({@code rdma_cm_id} with its QP). Closing disconnects: outstanding work is flushed. */
public interface RcConnection extends AutoCloseable {
    QueuePair qp();

    /** The private data the peer sent with its connect request (empty on the active side). */
    ByteBuffer peerPrivateData();

    /** A name for the peer, for logs. */
    String peer();

    /** The context the passive side's handler gave when it accepted (null on the active side). */
    Object context();

    @Override
    void close();
}
