package io.pistore.transport.tcp;

import io.pistore.integrity.GuardType;
import io.pistore.spi.Availability;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportCapabilities;
import io.pistore.transport.tcp.internal.TcpTransport;
import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import java.util.EnumSet;
import java.util.List;

/**
 * The {@code tcp} transport: one TCP connection per queue, PI generated and checked in software on
 * both ends (docs/PROTOCOL-TCP.md). Always available. Its settings are the {@code tcp.*} options of
 * {@link TcpConfig}.
 */
public final class TcpTransportProvider implements BlockTransportProvider {
    public static final String NAME = "tcp";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<TransportOption<?>> options() {
        return TcpConfig.OPTIONS;
    }

    @Override
    public Availability availability(TransportOptions options) {
        try {
            options.check(NAME, TcpConfig.OPTIONS);
            return Availability.available();
        } catch (IllegalArgumentException e) {
            return Availability.unavailable(e.getMessage());
        }
    }

    @Override
    public TransportCapabilities capabilities(TransportOptions options) {
        return new TransportCapabilities(EnumSet.noneOf(GuardType.class), TcpConfig.from(options).maxTransferBytes);
    }

    /** A host connects to the first peer of a list that answers and fails over to the next when it is lost. */
    @Override
    public boolean takesPeerLists() {
        return true;
    }

    @Override
    public String embeddedListenAddress() {
        return "127.0.0.1:0";
    }

    @Override
    public BlockTransport create(TransportOptions options) {
        return create(TcpConfig.from(options));
    }

    /** A transport with explicit settings. */
    public BlockTransport create(TcpConfig config) {
        return new TcpTransport(config);
    }
}
