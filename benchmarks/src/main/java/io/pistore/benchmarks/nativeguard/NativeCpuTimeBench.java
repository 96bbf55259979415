package io.pistore.benchmarks.nativeguard;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardPath;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * PI generate / verify of 1 MiB of data on the native path timed by the thread's CPU time, the
 * companion of {@code isal_bench SECONDS cpu} (which times ISA-L the same way): on a machine shared
 * with other tenants, wall-clock figures swing widely between runs, CPU time much less. Prints, per
 * format and op, the best and median of {@code samples} samples of {@code seconds} CPU-seconds each,
 * in the isal_bench line shape.
 *
 * <pre>java -cp "benchmarks/target/pistore-benchmarks-0.1.0-SNAPSHOT.jar:benchmarks/target/lib/*" \
 *     io.pistore.benchmarks.nativeguard.NativeCpuTimeBench [seconds-per-sample [samples [path]]]</pre>
 */
public final class NativeCpuTimeBench {
    private NativeCpuTimeBench() {
    }

    public static void main(String[] args) {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 0.5;
        int samples = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        GuardPath.Use use = args.length > 2 ? GuardPath.Use.parse(args[2]) : GuardPath.Use.NATIVE;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        System.out.println("# " + GuardPath.describe() + "; path " + use + "; CPU time");
        for (String fs : new String[] {"512+8", "4096+8", "4096+16"}) {
            BlockFormat f = BlockFormat.parse(fs);
            long nblocks = (1 << 20) / f.dataSize();
            int len = (int) (nblocks * f.blockSize());
            ByteBuffer b = ByteBuffer.allocateDirect(len);
            byte[] r = new byte[len];
            new SplittableRandom(2).nextBytes(r);
            b.put(r).clear();
            PiContext ctx = PiContext.builder(f).initialRefTag(1).guardPath(use).build();
            ScatterList list = ScatterList.of(b);
            Runnable gen = () -> Pi.generate(ctx, list, nblocks);
            Runnable ver = () -> {
                PiError e = Pi.verify(ctx, list, nblocks);
                if (e != null) {
                    throw new IllegalStateException(e.toString());
                }
            };
            gen.run();
            for (String op : new String[] {"generate", "verify"}) {
                Runnable o = op.equals("generate") ? gen : ver;
                sample(mx, o, 1.0); // warm-up
                double[] gbps = new double[samples];
                for (int i = 0; i < samples; i++) {
                    gbps[i] = sample(mx, o, seconds);
                }
                Arrays.sort(gbps);
                System.out.printf(Locale.ROOT, "java=%-12s op=%-8s format=%s gbps=%.2f median=%.2f%n",
                        use.name().toLowerCase(Locale.ROOT) + "-" + f.guard().cliName(), op, fs,
                        gbps[samples - 1], gbps[samples / 2]);
            }
        }
    }

    /** GB/s of data (1 MiB per op) per CPU-second of this thread. */
    private static double sample(ThreadMXBean mx, Runnable op, double seconds) {
        long budget = (long) (seconds * 1e9);
        long ops = 0;
        long t0 = mx.getCurrentThreadCpuTime();
        long t;
        do {
            for (int i = 0; i < 10; i++) {
                op.run();
            }
            ops += 10;
            t = mx.getCurrentThreadCpuTime();
        } while (t - t0 < budget);
        return ops * 1048576.0 / (t - t0);
    }
}
