package io.pistore.engine.stats;

import io.pistore.integrity.PiErrorKind;
import io.pistore.spi.Operation;
import io.pistore.spi.Status;
import java.util.concurrent.atomic.LongAdder;

/**
 * What passed through one transport to one volume: requests, data bytes, failures by status,
 * latencies in {@link LatencyBuckets}, requests in flight, FUA writes and PI errors by kind and
 * place. Only {@link LongAdder}s, so the request path never contends on a shared counter; readers
 * (a metrics scrape, a test) sum them when asked. A request costs three or four increments: it
 * started, its latency bucket, its latency, its bytes; the request count is the sum of the buckets
 * and the requests in flight are those started less those counted there.
 */
public final class VolumeCounters {
    private static final int OPS = Operation.values().length;
    private static final int STATUSES = Status.values().length;
    private static final int KINDS = PiErrorKind.values().length;
    private static final int PLACES = PiErrorPlace.values().length;

    private final String transport;
    private final String volume;
    private final LongAdder[] bytes = adders(OPS);
    private final LongAdder[] failures = adders(OPS * STATUSES);
    private final LongAdder[] latencyBuckets = adders(OPS * LatencyBuckets.count());
    private final LongAdder[] latencyNanos = adders(OPS);
    private final LongAdder started = new LongAdder();
    private final LongAdder fuaWrites = new LongAdder();
    private final LongAdder[] piErrors = adders(KINDS * PLACES);

    VolumeCounters(String transport, String volume) {
        this.transport = transport;
        this.volume = volume;
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    public String transport() {
        return transport;
    }

    public String volume() {
        return volume;
    }

    void started() {
        started.increment();
    }

    /** A request that ended after {@code nanos}, with {@code dataBytes} of data, with status {@code s}. */
    void ended(Operation op, long dataBytes, boolean fua, long nanos, Status s) {
        int o = op.ordinal();
        if (s == Status.SUCCESS) {
            if (dataBytes > 0) {
                bytes[o].add(dataBytes);
            }
        } else {
            failures[o * STATUSES + s.ordinal()].increment();
        }
        if (fua) {
            fuaWrites.increment();
        }
        latencyBuckets[o * LatencyBuckets.count() + LatencyBuckets.indexOf(nanos)].increment();
        latencyNanos[o].add(nanos);
    }

    void piError(PiErrorKind kind, PiErrorPlace place) {
        piErrors[kind.ordinal() * PLACES + place.ordinal()].increment();
    }

    /** Requests of {@code op} that ended, successful or not. */
    public long requests(Operation op) {
        long n = 0;
        int first = op.ordinal() * LatencyBuckets.count();
        for (int i = 0; i < LatencyBuckets.count(); i++) {
            n += latencyBuckets[first + i].sum();
        }
        return n;
    }

    /** Data bytes moved by successful requests of {@code op} (reads and writes; zero for the others). */
    public long bytes(Operation op) {
        return bytes[op.ordinal()].sum();
    }

    /** Requests of {@code op} that ended with status {@code s} (never SUCCESS). */
    public long failures(Operation op, Status s) {
        return failures[op.ordinal() * STATUSES + s.ordinal()].sum();
    }

    /** Requests of {@code op} per latency bucket, {@link LatencyBuckets#count()} of them, not cumulative. */
    public long[] latencyBuckets(Operation op) {
        long[] b = new long[LatencyBuckets.count()];
        for (int i = 0; i < b.length; i++) {
            b[i] = latencyBuckets[op.ordinal() * b.length + i].sum();
        }
        return b;
    }

    /** The latencies of requests of {@code op}, summed, in nanoseconds. */
    public long latencyNanos(Operation op) {
        return latencyNanos[op.ordinal()].sum();
    }

    /** Requests handed to the engine that have not completed yet. */
    public long inFlight() {
        long ended = 0;
        for (LongAdder b : latencyBuckets) {
            ended += b.sum();
        }
        // started is read after the buckets: every request counted there as ended is counted as started
        return Math.max(0, started.sum() - ended);
    }

    /** Writes (and zeroing requests) that asked for FUA. */
    public long fuaWrites() {
        return fuaWrites.sum();
    }

    public long piErrors(PiErrorKind kind, PiErrorPlace place) {
        return piErrors[kind.ordinal() * PLACES + place.ordinal()].sum();
    }
}
