package io.pistore.engine.local;

import io.pistore.integrity.GuardType;
import io.pistore.spi.Availability;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportCapabilities;
import java.util.EnumSet;

/**
 * The built-in {@code local} transport: host and target in one process, no network. Requests pass
 * through a bounded queue to one worker thread per host queue. It is the baseline the other
 * transports are measured against.
 */
public final class LocalTransportProvider implements BlockTransportProvider {
    public static final String NAME = "local";

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
        return new TransportCapabilities(EnumSet.noneOf(GuardType.class), TransportCapabilities.MAX_TRANSFER_BYTES);
    }

    @Override
    public String embeddedListenAddress() {
        return "";
    }

    @Override
    public BlockTransport create() {
        return new LocalTransport();
    }
}
