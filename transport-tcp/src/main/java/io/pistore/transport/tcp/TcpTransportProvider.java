package io.pistore.transport.tcp;

import io.pistore.integrity.GuardType;
import io.pistore.spi.Availability;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportCapabilities;
import io.pistore.transport.tcp.internal.TcpTransport;
import java.util.EnumSet;

/**
 * The {@code tcp} transport: one TCP connection per queue, PI generated and checked in software on
 * both ends (docs/PROTOCOL-TCP.md). Always available. Settings come from {@code -Dpistore.tcp.*}
 * (see {@link TcpConfig}).
 */
public final class TcpTransportProvider implements BlockTransportProvider {
    public static final String NAME = "tcp";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Availability availability() {
        return Availability.available();
    }

    @Override
    public TransportCapabilities capabilities() {
        return new TransportCapabilities(EnumSet.noneOf(GuardType.class), TcpConfig.defaults().maxTransferBytes);
    }

    @Override
    public String embeddedListenAddress() {
        return "127.0.0.1:0";
    }

    @Override
    public BlockTransport create() {
        return create(TcpConfig.fromSystemProperties());
    }

    /** A transport with explicit settings. */
    public BlockTransport create(TcpConfig config) {
        return new TcpTransport(config);
    }
}
