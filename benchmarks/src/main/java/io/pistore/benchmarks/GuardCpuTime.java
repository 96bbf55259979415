package io.pistore.benchmarks;

import io.pistore.integrity.internal.GuardAlgorithm;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A companion to {@link GuardBench} for a busy machine: the library's guard kernels against a plain
 * copy of the same bytes (the memcpy every request pays anyway), timed by <em>thread CPU time</em>
 * rather than wall time, round robin in one JVM, so that time slices lost to other processes do not
 * count. Prints the median and best of 15 rounds (20 × 1 MiB each) in GB/s of CPU time, and the
 * kernel/copy ratio of the medians. {@code -Dimpl=CLASS} times a kernel variant instead of the
 * library's (a {@code GuardAlgorithm} with an {@code INSTANCE} field).
 *
 * <p>Not a JMH benchmark (no forks, one JVM for all variants); use it for ratios, and JMH for the
 * figures. Run: {@code java -cp ... io.pistore.benchmarks.GuardCpuTime [crc16 ip crc32c crc64]}.
 */
public final class GuardCpuTime {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final int ROUNDS = 15;
    private static final int REPS = 20;
    private static long sink;

    private GuardCpuTime() {
    }

    private interface Op {
        long run(ByteBuffer b);
    }

    private static final class Variant {
        final String name;
        final Op op;
        final ByteBuffer buf;
        final double[] gbs = new double[ROUNDS];

        Variant(String name, Op op, ByteBuffer buf) {
            this.name = name;
            this.op = op;
            this.buf = buf;
        }

        double median() {
            double[] x = gbs.clone();
            Arrays.sort(x);
            return x[x.length / 2];
        }

        double best() {
            return Arrays.stream(gbs).max().orElse(0);
        }
    }

    public static void main(String[] args) {
        if (!MX.isCurrentThreadCpuTimeSupported()) {
            throw new IllegalStateException("this JVM cannot measure thread CPU time");
        }
        List<String> guards = args.length > 0 ? Arrays.asList(args) : List.of("crc16", "ip", "crc32c", "crc64");
        int block = 4096;
        int count = Bench.BYTES / block;
        String impl = System.getProperty("impl", "lib");
        for (String g : guards) {
            List<Variant> vs = new ArrayList<>();
            for (String memory : List.of("heap", "direct")) {
                ByteBuffer buf = Bench.randomBuffer(memory, Bench.BYTES, 42);
                ByteBuffer dst = Bench.randomBuffer(memory, Bench.BYTES, 43);
                vs.add(new Variant("copy " + memory, b -> {
                    dst.clear();
                    dst.put(b.duplicate().clear());
                    return dst.get(Bench.BYTES - 1);
                }, buf));
                GuardAlgorithm a = GuardBench.algorithm(g, impl);
                long[] out = new long[count];
                vs.add(new Variant(g + " stream " + memory + " " + impl,
                        b -> a.update(a.start(0), b, 0, Bench.BYTES), buf));
                vs.add(new Variant(g + " blocks" + block + " " + memory + " " + impl, b -> {
                    a.updateBlocks(b, 0, block, block, count, 0, out);
                    return out[count - 1];
                }, buf));
            }
            measure(vs);
            // Order per memory: copy, stream, blocks.
            for (int i = 0; i < vs.size(); i++) {
                Variant copy = vs.get(i / 3 * 3);
                Variant v = vs.get(i);
                if (v == copy) {
                    continue;
                }
                System.out.printf("%-34s median %7.3f best %7.3f | %-12s median %7.3f | kernel/copy %.2f%n",
                        v.name, v.median(), v.best(), copy.name, copy.median(), v.median() / copy.median());
            }
        }
        if (sink == 42) {
            System.out.println();
        }
    }

    private static void measure(List<Variant> vs) {
        for (int w = 0; w < 2000; w++) {
            for (Variant v : vs) {
                sink += v.op.run(v.buf);
            }
        }
        for (int r = 0; r < ROUNDS; r++) {
            for (Variant v : vs) {
                long t0 = MX.getCurrentThreadCpuTime();
                for (int k = 0; k < REPS; k++) {
                    sink += v.op.run(v.buf);
                }
                long ns = MX.getCurrentThreadCpuTime() - t0;
                v.gbs[r] = (double) Bench.BYTES * REPS / ns;
            }
        }
    }
}
