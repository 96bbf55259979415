package io.pistore.benchmarks;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;

/** Shared sizes and buffers of the benchmarks. */
final class Bench {
    /**
     * Bytes of data every benchmark covers per invocation: 1 MiB. Each benchmark method is annotated
     * {@code @OperationsPerInvocation(BYTES)} and reports in ops/ns, so its score is data bytes per
     * nanosecond, which is GB/s (10^9 bytes per second).
     */
    static final int BYTES = 1 << 20;

    private Bench() {
    }

    /** A heap or direct buffer of {@code n} random bytes, big-endian. */
    static ByteBuffer randomBuffer(String memory, int n, long seed) {
        byte[] a = new byte[n];
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < n; i++) {
            a[i] = (byte) r.nextInt(256);
        }
        ByteBuffer b;
        switch (memory) {
            case "heap": b = ByteBuffer.allocate(n); break;
            case "direct": b = ByteBuffer.allocateDirect(n); break;
            default: throw new IllegalArgumentException("memory must be heap or direct, not " + memory);
        }
        b.put(a).clear();
        return b;
    }
}
