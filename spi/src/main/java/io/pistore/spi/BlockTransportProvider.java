package io.pistore.spi;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * A transport, found by name through {@link ServiceLoader}. {@link #availability} never throws:
 * a provider that cannot run here says why in one line. Settings reach it as
 * {@link TransportOptions}, checked against the {@link #options()} it declares; the methods without
 * options use every default.
 */
public interface BlockTransportProvider {
    /** local, tcp, rdma, … */
    String name();

    /** The settings this transport takes, each named {@code <name()>.<setting>}. */
    default List<TransportOption<?>> options() {
        return List.of();
    }

    /** Whether the transport can run here with these settings (never throws; a bad setting is a cause). */
    Availability availability(TransportOptions options);

    default Availability availability() {
        return availability(TransportOptions.NONE);
    }

    /** What the transport does with these settings (only asked when available). */
    TransportCapabilities capabilities(TransportOptions options);

    default TransportCapabilities capabilities() {
        return capabilities(TransportOptions.NONE);
    }

    /**
     * Creates a transport with these settings; only called when available.
     *
     * @throws IllegalArgumentException when a setting of this transport is unknown or has a bad value
     */
    BlockTransport create(TransportOptions options);

    default BlockTransport create() {
        return create(TransportOptions.NONE);
    }

    /**
     * Whether {@link BlockTransport#connect} takes a comma-separated list of peers that serve the same
     * volumes ({@code HOST:PORT,HOST:PORT,...}, the peers of a replicated volume) and fails over among
     * them by itself when the peer in use is lost. A transport that does not takes one address; the
     * application refuses a list for it before connecting.
     */
    default boolean takesPeerLists() {
        return false;
    }

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
