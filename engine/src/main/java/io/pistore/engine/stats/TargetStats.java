package io.pistore.engine.stats;

import io.pistore.integrity.PiErrorKind;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The counters of a target, one {@link TransportCounters} per transport or frontend that reaches it.
 * A server wraps the handler each listener gets with {@link #measure}; whoever reports figures (a
 * metrics endpoint) reads them through {@link #transports()} when asked. The engine itself exports
 * nothing: counting costs a few stores into counters the request's thread owns
 * ({@link ThreadOwnedCounters}), and reading is left to the reader.
 *
 * <p>Every request is counted; the latency of one request in {@link #latencySample()}, picked at
 * random, is timed: the two clock reads a latency needs cost more than all the counters together
 * (docs/BENCHMARKS.md#metrics-cost).
 */
public final class TargetStats {
    /** One request in this many is timed unless told otherwise: the clock's cost an eighth, thousands of samples a second under load. */
    public static final int DEFAULT_LATENCY_SAMPLE = 8;

    private final ConcurrentMap<String, TransportCounters> transports = new ConcurrentHashMap<>();
    private final int latencySample;

    public TargetStats() {
        this(DEFAULT_LATENCY_SAMPLE);
    }

    /** Counters that time one request in {@code latencySample} (1: every request). */
    public TargetStats(int latencySample) {
        this.latencySample = checkLatencySample("the latency sample", latencySample);
    }

    /**
     * {@code n} where it is a latency sample these counters take (1 to 1024: one request in N), else an
     * {@link IllegalArgumentException} that names it {@code what} (an option, say).
     */
    public static int checkLatencySample(String what, int n) {
        if (n < 1 || n > 1024) {
            throw new IllegalArgumentException(what + " must be 1 to 1024 (one request in N), not " + n);
        }
        return n;
    }

    /** One request in this many has its latency timed. */
    public int latencySample() {
        return latencySample;
    }

    /** The counters of {@code transport}, made on first use. */
    public TransportCounters transport(String transport) {
        return transports.computeIfAbsent(transport, TransportCounters::new);
    }

    /** Every transport with counters. */
    public List<TransportCounters> transports() {
        return new ArrayList<>(transports.values());
    }

    /**
     * {@code connection} (this process is a host of a remote target), counting the PI errors its
     * transport catches on the host side under {@code transport} with {@link PiErrorPlace#HOST}.
     */
    public HostConnection measureHost(String transport, HostConnection connection) {
        return new MeasuredHostConnection(connection, transport(transport));
    }

    /** A PI error this process caught as a host (its own check of what it read), on {@code volume}. */
    public void hostPiError(String transport, String volume, PiErrorKind kind) {
        transport(transport).volume(volume).piError(kind, PiErrorPlace.HOST);
    }

    /** {@code handler}, counting what passes through it under {@code transport}. */
    public TargetHandler measure(String transport, TargetHandler handler) {
        return new MeasuredTargetHandler(handler, transport(transport), latencySample);
    }
}
