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

    @Override
    void close();
}
