package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * CPU time of a file volume's writes, with no transport, CLI or JVM start in the figure: the whole
 * process's CPU time (every thread: writers, checkpoints, GC, JIT) and its minor page faults over
 * {@code WRITES} random 4 KiB writes (4096+8, PI generated once per buffer beforehand) by
 * {@code THREADS} threads on a fresh 1 GiB volume, after a warm-up of as many writes on a volume of
 * its own; then the CPU time of closing it. A machine shared with other work changes wall-clock
 * figures far more than CPU time per request. Uses only the public volume API, so one build of it
 * runs against any engine jar on the class path (the layout before the journal and after):
 *
 * <pre>java -cp "engine/target/test-classes:BUILD/app/target/lib/*" io.pistore.engine.volume.JournalCpuProbe DIR [WRITES] [THREADS]</pre>
 *
 * Prints one line: {@code us_cpu_per_write=… (user … sys …) minflt_per_write=… wall_s=… close_ms_cpu=…}.
 */
public final class JournalCpuProbe {
    private static final BlockFormat F = BlockFormat.of(4096, 8);
    /** The measured volume's blocks: 1 GiB, or -Dprobe.blocks. */
    private static final long BLOCKS = Long.getLong("probe.blocks", 262144);

    private JournalCpuProbe() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]).resolve("journal-cpu-probe");
        long writes = args.length > 1 ? Long.parseLong(args[1]) : 400_000;
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        io.pistore.testkit.TestFiles.deleteTree(dir);
        Files.createDirectories(dir);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume warm = s.create("warm", F, BLOCKS / 16);
            run(warm, writes, threads);
            warm.flush();
            s.delete("warm");
            Volume v = s.create("probe", F, BLOCKS);
            long cpu0 = os.getProcessCpuTime();
            long[] st0 = stat();
            long t0 = System.nanoTime();
            run(v, writes, threads);
            v.flush();
            long wall = System.nanoTime() - t0;
            long cpu = os.getProcessCpuTime() - cpu0;
            long[] st1 = stat();
            long c0 = os.getProcessCpuTime();
            s.close();
            long closeCpu = os.getProcessCpuTime() - c0;
            // utime and stime count clock ticks, 100 a second on Linux
            System.out.printf("us_cpu_per_write=%.2f (user %.2f sys %.2f) minflt_per_write=%.2f wall_s=%.2f"
                    + " close_ms_cpu=%.0f%n", cpu / 1e3 / writes, (st1[1] - st0[1]) * 1e4 / writes,
                    (st1[2] - st0[2]) * 1e4 / writes, (double) (st1[0] - st0[0]) / writes, wall / 1e9, closeCpu / 1e6);
        } finally {
            io.pistore.testkit.TestFiles.deleteTree(dir);
        }
    }

    /** {@code writes} random one-block writes over the volume, shared by {@code threads} threads. */
    private static void run(Volume v, long writes, int threads) throws Exception {
        AtomicLong left = new AtomicLong(writes);
        Thread[] ts = new Thread[threads];
        Exception[] failed = new Exception[1];
        for (int t = 0; t < threads; t++) {
            int seed = t;
            ts[t] = new Thread(() -> {
                try {
                    SplittableRandom r = new SplittableRandom(seed);
                    byte[][] data = new byte[16][4096];
                    byte[][] meta = new byte[16][8];
                    for (int i = 0; i < data.length; i++) {
                        r.nextBytes(data[i]);
                        Pi.generate(PiContext.builder(F).build(), ScatterList.wrap(data[i]), ScatterList.wrap(meta[i]), 1);
                    }
                    long blocks = v.blockCount();
                    for (long n = 0; left.getAndDecrement() > 0; n++) {
                        int k = (int) (n & 15);
                        v.write(r.nextLong(blocks), 1, ScatterList.wrap(data[k]), ScatterList.wrap(meta[k]), false);
                    }
                } catch (Exception e) {
                    synchronized (failed) {
                        failed[0] = e;
                    }
                }
            });
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        if (failed[0] != null) {
            throw failed[0];
        }
    }

    /**
     * This process's minor page faults, user and system CPU ticks so far (fields 10, 14 and 15 of
     * /proc/self/stat), or zeros where there is none.
     */
    private static long[] stat() {
        try {
            String s = Files.readString(Path.of("/proc/self/stat"));
            String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
            return new long[] {Long.parseLong(f[7]), Long.parseLong(f[11]), Long.parseLong(f[12])};
        } catch (Exception e) {
            return new long[3];
        }
    }

}
