package io.pistore.spi;

import java.io.IOException;

/**
 * A transport instance: the target side listens and hands requests to a {@link TargetHandler}; the
 * host side connects and submits requests to queues.
 */
public interface BlockTransport extends AutoCloseable {
    /** Starts listening on {@code address} (transport-specific, e.g. {@code 127.0.0.1:0}). */
    TargetListener listen(String address, TargetHandler handler) throws IOException;

    /**
     * Connects to a listening target and discovers its volumes. {@code address} is transport-specific:
     * one target, or where the provider {@link BlockTransportProvider#takesPeerLists() takes peer lists}
     * a comma-separated list of peers serving the same volumes, to fail over among.
     */
    HostConnection connect(String address, ConnectOptions options) throws IOException;

    @Override
    void close();
}
