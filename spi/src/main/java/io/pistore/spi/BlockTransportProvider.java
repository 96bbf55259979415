package io.pistore.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * A transport, found by name through {@link ServiceLoader}. {@link #availability()} never throws:
 * a provider that cannot run here says why in one line.
 */
public interface BlockTransportProvider {
    /** local, tcp, rdma, … */
    String name();

    Availability availability();

    TransportCapabilities capabilities();

    /** Creates a transport; only called when available. */
    BlockTransport create();

    /** Where an embedded target of this transport listens by default (a free loopback port for networks). */
    default String embeddedListenAddress() {
        return "127.0.0.1:0";
    }

    /** Every provider on the class path, in a stable order (by name). */
    static List<BlockTransportProvider> all() {
        List<BlockTransportProvider> list = new ArrayList<>();
        for (BlockTransportProvider p : ServiceLoader.load(BlockTransportProvider.class)) {
            list.add(p);
        }
        list.sort((a, b) -> a.name().compareTo(b.name()));
        return list;
    }
}
