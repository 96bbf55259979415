package io.pistore.benchmarks;

import io.pistore.integrity.Pi;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A companion to {@link PiBench} for a busy machine: {@code Pi.generate} and {@code Pi.verify} of
 * two builds of the integrity library side by side in one JVM, timed by <em>thread CPU time</em>,
 * round robin. Each build is loaded by its own class loader from its jar: "after" is the jar this
 * class was loaded with, "before" the jar given on the command line (e.g. built from an older
 * commit). Same workloads and units as {@link PiBench}: GB/s of data, median and best of 15 rounds.
 *
 * <p>Run: {@code java -cp ... io.pistore.benchmarks.PiCpuTime /path/to/old/pistore-integrity.jar}.
 */
public final class PiCpuTime {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final String[] FORMATS = {"512+8:crc16", "4096+8:crc16", "4096+16:crc64", "4096+16:crc32c"};
    private static final int ROUNDS = 15;
    private static final int REPS = 10;
    private static long sink;

    private PiCpuTime() {
    }

    /** One workload on one build of the library. */
    private static final class Workload {
        final String name;
        final MethodHandle op;
        final Object ctx;
        final Object list;
        final long nblocks;
        final double[] gbs = new double[ROUNDS];

        Workload(ClassLoader l, String op, String format, String memory) throws Throwable {
            this.name = op + " " + format + " " + memory;
            String[] fg = format.split(":");
            Class<?> guardType = l.loadClass("io.pistore.integrity.GuardType");
            Class<?> piType = l.loadClass("io.pistore.integrity.PiType");
            Class<?> location = l.loadClass("io.pistore.integrity.PiLocation");
            Class<?> blockFormat = l.loadClass("io.pistore.integrity.BlockFormat");
            Class<?> piContext = l.loadClass("io.pistore.integrity.PiContext");
            Class<?> checkFlags = l.loadClass("io.pistore.integrity.CheckFlags");
            Class<?> scatterList = l.loadClass("io.pistore.integrity.ScatterList");
            Class<?> pi = l.loadClass("io.pistore.integrity.Pi");
            int[] dm = (int[]) blockFormat.getMethod("parseSizes", String.class).invoke(null, fg[0]);
            Object f = blockFormat.getMethod("of", int.class, int.class, guardType, piType, location).invoke(null,
                    dm[0], dm[1], guardType.getMethod("parse", String.class).invoke(null, fg[1]),
                    piType.getField("TYPE_1").get(null), location.getField("FIRST").get(null));
            Object b = piContext.getMethod("builder", blockFormat).invoke(null, f);
            Class<?> builder = b.getClass();
            b = builder.getMethod("checks", checkFlags).invoke(b, checkFlags.getField("ALL").get(null));
            b = builder.getMethod("initialRefTag", long.class).invoke(b, 1234L);
            b = builder.getMethod("appTag", int.class).invoke(b, 0x5A5A);
            this.ctx = builder.getMethod("build").invoke(b);
            this.nblocks = Bench.BYTES / dm[0];
            ByteBuffer buf = Bench.randomBuffer(memory, (int) nblocks * (dm[0] + dm[1]), 7);
            this.list = scatterList.getMethod("of", ByteBuffer[].class).invoke(null, (Object) new ByteBuffer[] {buf});
            Method gen = pi.getMethod("generate", piContext, scatterList, long.class);
            Method ver = pi.getMethod("verify", piContext, scatterList, long.class);
            gen.invoke(null, ctx, list, nblocks);
            if (ver.invoke(null, ctx, list, nblocks) != null) {
                throw new IllegalStateException("generated PI does not verify: " + name);
            }
            MethodHandle h = MethodHandles.publicLookup().unreflect(op.equals("generate") ? gen : ver);
            this.op = h.asType(h.type().changeParameterType(0, Object.class).changeParameterType(1, Object.class)
                    .changeReturnType(Object.class));
        }

        void run() throws Throwable {
            Object r = op.invokeExact(ctx, list, nblocks);
            if (r != null) {
                sink++;
            }
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

    public static void main(String[] args) throws Throwable {
        if (args.length != 1) {
            System.err.println("usage: PiCpuTime <integrity jar to compare against (before)>");
            System.exit(2);
        }
        URL after = Pi.class.getProtectionDomain().getCodeSource().getLocation();
        URL before = Path.of(args[0]).toUri().toURL();
        ClassLoader parent = ClassLoader.getPlatformClassLoader();
        ClassLoader[] loaders = {new URLClassLoader(new URL[] {before}, parent),
                new URLClassLoader(new URL[] {after}, parent)};
        List<Workload[]> pairs = new ArrayList<>();
        for (String op : List.of("generate", "verify")) {
            for (String format : FORMATS) {
                for (String memory : List.of("heap", "direct")) {
                    pairs.add(new Workload[] {new Workload(loaders[0], op, format, memory),
                            new Workload(loaders[1], op, format, memory)});
                }
            }
        }
        for (int w = 0; w < 300; w++) {
            for (Workload[] p : pairs) {
                p[0].run();
                p[1].run();
            }
        }
        for (int r = 0; r < ROUNDS; r++) {
            for (Workload[] p : pairs) {
                for (Workload x : p) {
                    long t0 = MX.getCurrentThreadCpuTime();
                    for (int k = 0; k < REPS; k++) {
                        x.run();
                    }
                    x.gbs[r] = (double) Bench.BYTES * REPS / (MX.getCurrentThreadCpuTime() - t0);
                }
            }
        }
        System.out.println("before: " + before + "\nafter:  " + after);
        for (Workload[] p : pairs) {
            System.out.printf("%-32s before median %7.3f best %7.3f | after median %7.3f best %7.3f | after/before %.2f%n",
                    p[0].name, p[0].median(), p[0].best(), p[1].median(), p[1].best(), p[1].median() / p[0].median());
        }
        if (sink == 42) {
            System.out.println();
        }
    }
}
