package io.pistore.transport.rdma.verbs;

/** A listening {@code rdma_cm_id}. */
public interface Listener extends AutoCloseable {
    String address();

    @Override
    void close();
}
