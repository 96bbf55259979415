package io.pistore.engine.stats;

import io.pistore.integrity.PiErrorKind;
import io.pistore.spi.Operation;
import io.pistore.spi.Status;

/**
 * What passed through one transport to one volume: requests, data bytes, failures by status,
 * latencies in {@link LatencyBuckets}, requests in flight, FUA writes and PI errors by kind and
 * place. The request path adds to counters its thread owns ({@link ThreadOwnedCounters}: no atomic
 * instruction, no shared cache line); readers (a metrics scrape, a test) sum them when asked. A
 * request adds to three: it started, it ended, its bytes; a timed one (a sample, see
 * {@link TargetStats}) also to its latency bucket and the latency sum. The requests in flight are
 * those started less those ended.
 */
public final class VolumeCounters {
    private static final int OPS = Operation.values().length;
    private static final int STATUSES = Status.values().length;
    private static final int KINDS = PiErrorKind.values().length;
    private static final int PLACES = PiErrorPlace.values().length;
    private static final int BUCKETS = LatencyBuckets.count();

    // where each figure sits in the row of counters
    private static final int STARTED = 0;
    private static final int FUA = 1;
    private static final int ENDED = 2;
    private static final int BYTES = ENDED + OPS;
    private static final int LATENCY_NANOS = BYTES + OPS;
    private static final int FAILURES = LATENCY_NANOS + OPS;
    private static final int LATENCY_BUCKETS = FAILURES + OPS * STATUSES;
    private static final int PI_ERRORS = LATENCY_BUCKETS + OPS * BUCKETS;
    private static final int SIZE = PI_ERRORS + KINDS * PLACES;

    private final String transport;
    private final String volume;
    private final ThreadOwnedCounters counters = new ThreadOwnedCounters(SIZE);

    VolumeCounters(String transport, String volume) {
        this.transport = transport;
        this.volume = volume;
    }

    public String transport() {
        return transport;
    }

    public String volume() {
        return volume;
    }

    void started() {
        ThreadOwnedCounters.add(counters.shard(), STARTED, 1);
    }

    /**
     * A request that ended after {@code nanos} ({@code -1}: not timed), with {@code dataBytes} of
     * data, with status {@code s}.
     */
    void ended(Operation op, long dataBytes, boolean fua, long nanos, Status s) {
        long[] mine = counters.shard();
        int o = op.ordinal();
        ThreadOwnedCounters.add(mine, ENDED + o, 1);
        if (s == Status.SUCCESS) {
            if (dataBytes > 0) {
                ThreadOwnedCounters.add(mine, BYTES + o, dataBytes);
            }
        } else {
            ThreadOwnedCounters.add(mine, FAILURES + o * STATUSES + s.ordinal(), 1);
        }
        if (fua) {
            ThreadOwnedCounters.add(mine, FUA, 1);
        }
        if (nanos >= 0) {
            ThreadOwnedCounters.add(mine, LATENCY_BUCKETS + o * BUCKETS + LatencyBuckets.indexOf(nanos), 1);
            ThreadOwnedCounters.add(mine, LATENCY_NANOS + o, nanos);
        }
    }

    void piError(PiErrorKind kind, PiErrorPlace place) {
        ThreadOwnedCounters.add(counters.shard(), PI_ERRORS + kind.ordinal() * PLACES + place.ordinal(), 1);
    }

    /** Requests of {@code op} that ended, successful or not. */
    public long requests(Operation op) {
        return counters.sum(ENDED + op.ordinal());
    }

    /** Data bytes moved by successful requests of {@code op} (reads and writes; zero for the others). */
    public long bytes(Operation op) {
        return counters.sum(BYTES + op.ordinal());
    }

    /** Requests of {@code op} that ended with status {@code s} (never SUCCESS). */
    public long failures(Operation op, Status s) {
        return counters.sum(FAILURES + op.ordinal() * STATUSES + s.ordinal());
    }

    /**
     * Timed requests of {@code op} (the sample) per latency bucket, {@link LatencyBuckets#count()}
     * of them, not cumulative.
     */
    public long[] latencyBuckets(Operation op) {
        long[] b = new long[BUCKETS];
        counters.sum(LATENCY_BUCKETS + op.ordinal() * BUCKETS, b);
        return b;
    }

    /** The latencies of the timed requests of {@code op}, summed, in nanoseconds. */
    public long latencyNanos(Operation op) {
        return counters.sum(LATENCY_NANOS + op.ordinal());
    }

    /** Requests handed to the engine that have not completed yet. */
    public long inFlight() {
        long[] ended = new long[OPS];
        counters.sum(ENDED, ended);
        long n = 0;
        for (long e : ended) {
            n += e;
        }
        // started is read after ended: every request counted as ended is counted as started
        return Math.max(0, counters.sum(STARTED) - n);
    }

    /** Writes (and zeroing requests) that asked for FUA. */
    public long fuaWrites() {
        return counters.sum(FUA);
    }

    public long piErrors(PiErrorKind kind, PiErrorPlace place) {
        return counters.sum(PI_ERRORS + kind.ordinal() * PLACES + place.ordinal());
    }
}
