package io.pistore.engine.stats;

import io.pistore.spi.TargetHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The counters of a target, one {@link TransportCounters} per transport or frontend that reaches it.
 * A server wraps the handler each listener gets with {@link #measure}; whoever reports figures (a
 * metrics endpoint) reads them through {@link #transports()} when asked. The engine itself exports
 * nothing: counting costs two clock reads and a few stores into counters the request's thread owns
 * ({@link ThreadOwnedCounters}), and reading is left to the reader.
 */
public final class TargetStats {
    private final ConcurrentMap<String, TransportCounters> transports = new ConcurrentHashMap<>();

    /** The counters of {@code transport}, made on first use. */
    public TransportCounters transport(String transport) {
        return transports.computeIfAbsent(transport, TransportCounters::new);
    }

    /** Every transport with counters. */
    public List<TransportCounters> transports() {
        return new ArrayList<>(transports.values());
    }

    /** {@code handler}, counting what passes through it under {@code transport}. */
    public TargetHandler measure(String transport, TargetHandler handler) {
        return new MeasuredTargetHandler(handler, transport(transport));
    }
}
