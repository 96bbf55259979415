package io.pistore.transport.rdma.verbs;

/** An RC queue pair ({@code ib_qp}). */
public interface QueuePair {
    int qpNum();

    QpState state();

    /**
     * Posts a chain of send work requests ({@code ib_post_send}). A request the provider refuses
     * (queue full, bad opcode, an integrity MR whose status was not checked) throws, and it and the
     * requests after it are not posted; the ones before it are.
     */
    void postSend(SendWr chain) throws VerbsException;

    /** Posts a chain of receive work requests ({@code ib_post_recv}). */
    void postRecv(RecvWr chain) throws VerbsException;
}
