package io.pistore.engine.stats;

/**
 * The latency buckets of the engine's counters: upper bounds in 1-2-5 steps from 1 µs to 10 s, then
 * one bucket for everything slower. Storage latencies span that range (a memory volume answers in
 * microseconds, an fsync behind a busy disk in tens of milliseconds); a fixed set of bounds keeps
 * recording to a few comparisons and one counter increment.
 */
public final class LatencyBuckets {
    private static final long[] UPPER_NANOS = bounds();

    private LatencyBuckets() {
    }

    private static long[] bounds() {
        long[] b = new long[22];
        long decade = 1_000; // 1 µs
        int i = 0;
        while (i < b.length) {
            b[i++] = decade;
            if (i < b.length) {
                b[i++] = 2 * decade;
            }
            if (i < b.length) {
                b[i++] = 5 * decade;
            }
            decade *= 10;
        }
        return b;
    }

    /** Buckets with a finite upper bound; one more ({@link #count()} - 1) takes everything slower. */
    public static int finiteCount() {
        return UPPER_NANOS.length;
    }

    /** All buckets: the finite ones and the last, unbounded one. */
    public static int count() {
        return UPPER_NANOS.length + 1;
    }

    /** The upper bound of finite bucket {@code i}, in nanoseconds (inclusive). */
    public static long upperNanos(int i) {
        return UPPER_NANOS[i];
    }

    /** The bucket of a latency: the first whose upper bound is at least {@code nanos}. */
    public static int indexOf(long nanos) {
        int lo = 0;
        int hi = UPPER_NANOS.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (UPPER_NANOS[mid] < nanos) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
