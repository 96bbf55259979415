package io.pistore.engine.local;

import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * In-process transport. A listener registers its handler under a name (the address); a host
 * connects by that name. Addresses are process-wide.
 */
final class LocalTransport implements BlockTransport {
    private static final Map<String, TargetHandler> TARGETS = new ConcurrentHashMap<>();
    private static final AtomicInteger NEXT = new AtomicInteger();

    @Override
    public TargetListener listen(String address, TargetHandler handler) throws IOException {
        String name = address == null || address.isEmpty() || address.endsWith(":0")
                ? "local-" + NEXT.incrementAndGet() : address;
        if (TARGETS.putIfAbsent(name, handler) != null) {
            throw new IOException("local address " + name + " is already in use");
        }
        return new TargetListener() {
            @Override
            public String address() {
                return name;
            }

            @Override
            public void close() {
                TARGETS.remove(name, handler);
            }
        };
    }

    @Override
    public HostConnection connect(String address, ConnectOptions options) throws IOException {
        TargetHandler h = TARGETS.get(address);
        if (h == null) {
            throw new IOException("no local target listens at '" + address + "'");
        }
        return new LocalHostConnection(address, h, options);
    }

    @Override
    public void close() {
    }
}
