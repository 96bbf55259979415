package io.pistore.app.bench;

import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.spi.Availability;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.TransportOptions;
import java.io.IOException;
import java.util.function.UnaryOperator;

/**
 * A test-only transport built on {@code local}, with {@code local}'s capabilities and an embedded
 * target, unavailable unless its test switches it on (so runs over {@code --transport all} and
 * other tests never pick it). Its host connections and its target's handler are {@code local}'s, wrapped as
 * {@link #connections} and {@link #handler} say.
 */
abstract class SwitchedOffLocalProvider implements BlockTransportProvider {
    /** The names of the test transports a running test switched on. */
    private static final java.util.Set<String> ON = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private final String name;

    SwitchedOffLocalProvider(String name) {
        this.name = name;
    }

    /** A test transport switched on, until {@link #close}. */
    interface Switch extends AutoCloseable {
        @Override
        void close();
    }

    /** Makes the test transport {@code name} available until the returned switch is closed. */
    static Switch on(String name) {
        ON.add(name);
        return () -> ON.remove(name);
    }

    @Override
    public final String name() {
        return name;
    }

    /**
     * How one transport this provider creates wraps each of {@code local}'s host connections (asked once
     * per transport; default: not at all).
     */
    UnaryOperator<HostConnection> connections() {
        return UnaryOperator.identity();
    }

    /** The handler a listener of this transport gives requests to, around the target's (default: the target's). */
    TargetHandler handler(TargetHandler target) {
        return target;
    }

    @Override
    public final BlockTransport create(TransportOptions options) {
        BlockTransport local = new LocalTransportProvider().create(options);
        UnaryOperator<HostConnection> wrap = connections();
        return new BlockTransport() {
            @Override
            public TargetListener listen(String address, TargetHandler handler) throws IOException {
                return local.listen(address, handler(handler));
            }

            @Override
            public HostConnection connect(String address, ConnectOptions options) throws IOException {
                return wrap.apply(local.connect(address, options));
            }

            @Override
            public void close() {
                local.close();
            }
        };
    }

    @Override
    public final Availability availability(TransportOptions options) {
        return ON.contains(name) ? Availability.available() : Availability.unavailable("a test-only transport, switched off");
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
