package io.pistore.app.bench;

import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.spi.Availability;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.TransportOptions;

/**
 * A test-only transport built on {@code local}, with {@code local}'s capabilities and an embedded
 * target, unavailable unless its test switches it on (so runs over {@code --transport all} and
 * other tests never pick it).
 */
abstract class SwitchedOffLocalProvider implements BlockTransportProvider {
    /** Whether the test that uses this transport is running. */
    abstract boolean enabled();

    @Override
    public final Availability availability(TransportOptions options) {
        return enabled() ? Availability.available() : Availability.unavailable("a test-only transport, switched off");
    }

    @Override
    public final TransportCapabilities capabilities(TransportOptions options) {
        return new LocalTransportProvider().capabilities();
    }

    @Override
    public final String embeddedListenAddress() {
        return "";
    }
}
