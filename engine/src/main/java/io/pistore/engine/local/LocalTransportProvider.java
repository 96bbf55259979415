package io.pistore.engine.local;

import io.pistore.integrity.GuardType;
import io.pistore.spi.Availability;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.TransportOptions;
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

    /** It takes no options; naming one ({@code local.x}) is an error. */
    @Override
    public Availability availability(TransportOptions options) {
        try {
            options.check(NAME, options());
            return Availability.available();
        } catch (IllegalArgumentException e) {
            return Availability.unavailable(e.getMessage());
        }
    }

    @Override
    public TransportCapabilities capabilities(TransportOptions options) {
        return new TransportCapabilities(EnumSet.noneOf(GuardType.class), TransportCapabilities.MAX_TRANSFER_BYTES);
    }

    @Override
    public String embeddedListenAddress() {
        return "";
    }

    @Override
    public BlockTransport create(TransportOptions options) {
        options.check(NAME, options());
        return new LocalTransport();
    }
}
