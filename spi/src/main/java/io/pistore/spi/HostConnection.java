package io.pistore.spi;

import java.util.List;

/**
 * A host's connection to one target: its volumes and one or more queues. Closing it fails every
 * request still in flight with {@link Status#TRANSPORT_ERROR}.
 */
public interface HostConnection extends AutoCloseable {
    List<VolumeInfo> volumes();

    int queueCount();

    HostQueue queue(int index);

    /**
     * How often a queue of this connection was connected again after losing its connection, for
     * counters; 0 for transports that do not reconnect.
     */
    default long reconnects() {
        return 0;
    }

    /**
     * Whether this connection serves {@link BlockRequest#readMetadata}: its target in the same process
     * does, or its transport carries such reads (tcp). By default not: such a request is refused.
     */
    default boolean readsMetadataOnly() {
        return false;
    }

    @Override
    void close();
}
