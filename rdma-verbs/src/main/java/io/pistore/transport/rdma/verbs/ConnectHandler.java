package io.pistore.transport.rdma.verbs;

import java.nio.ByteBuffer;

/** The passive side of connection management ({@code RDMA_CM_EVENT_CONNECT_REQUEST} and friends). */
public interface ConnectHandler {
    /**
     * What the listener needs to create the QP of an accepted connection; {@code context} is handed
     * back by {@link RcConnection#context()} (as {@code cm_id->context}).
     */
    record Accept(ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq, QpConfig config,
                  Object context) {
    }

    /**
     * A connect request with the host's private data; return the resources for its QP, or throw to
     * reject it (the active side's connect fails with the message).
     */
    Accept onConnectRequest(String peer, ByteBuffer privateData) throws java.io.IOException;

    /** The connection is established; receives may be posted now. */
    void onEstablished(RcConnection c);

    /** The peer disconnected (or the connection failed). */
    void onDisconnected(RcConnection c);
}
