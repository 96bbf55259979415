package io.pistore.transport.rdma.verbs;

import java.nio.ByteBuffer;

/** An opened verbs device ({@code ib_device} with its context). */
public interface VerbsDevice extends AutoCloseable {
    DeviceCaps caps();

    ProtectionDomain allocPd() throws VerbsException;

    CompletionQueue createCq(int entries) throws VerbsException;

    Listener listen(String address, ConnectHandler handler) throws VerbsException;

    /**
     * Connects an RC QP to a listener, sending {@code privateData} with the request
     * ({@code rdma_connect} with {@code conn_param.private_data}).
     */
    RcConnection connect(String address, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                       QpConfig config, ByteBuffer privateData, long timeoutMillis) throws VerbsException;

    @Override
    void close();
}
