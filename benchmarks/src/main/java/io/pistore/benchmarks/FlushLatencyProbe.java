package io.pistore.benchmarks;

import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;

/**
 * Flush latency of a durable file volume: one thread writes 16 random 4 KiB blocks (4096+8, PI
 * generated), then flushes, for {@code SECONDS}; prints the flush latency's median and p99, the
 * writes per second and the process's CPU time (every thread: checkpoints too) per write. Uses only the public volume API, so one build of it runs against any engine
 * jar on the class path (before and after a change):
 *
 * <pre>java -cp "benchmarks/target/classes:app/target/lib/*" io.pistore.benchmarks.FlushLatencyProbe DIR [SECONDS]</pre>
 */
public final class FlushLatencyProbe {
    private FlushLatencyProbe() {
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        BlockFormat f = BlockFormat.of(4096, 8);
        long blocks = 65536; // 256 MiB
        try (VolumeStore s = VolumeStore.open(dir)) {
            Volume v = s.get("probe") != null ? s.get("probe") : s.create("probe", f, blocks);
            Random r = new Random(1);
            byte[] d = new byte[4096];
            byte[] m = new byte[8];
            long[] lat = new long[1 << 20];
            int flushes = 0;
            long writes = 0;
            long end = System.nanoTime() + seconds * 1_000_000_000L;
            long t0 = System.nanoTime();
            long cpu0 = processCpuNanos();
            while (System.nanoTime() < end && flushes < lat.length) {
                for (int i = 0; i < 16; i++) {
                    long lba = r.nextInt((int) blocks);
                    r.nextBytes(d);
                    Pi.generate(PiContext.builder(f).initialRefTag(lba).build(), ScatterList.wrap(d), ScatterList.wrap(m), 1);
                    v.write(lba, 1, ScatterList.wrap(d), ScatterList.wrap(m), false);
                    writes++;
                }
                long a = System.nanoTime();
                v.flush();
                lat[flushes++] = System.nanoTime() - a;
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            long[] l = Arrays.copyOf(lat, flushes);
            Arrays.sort(l);
            double cpuPerWrite = (processCpuNanos() - cpu0) / 1e3 / writes;
            System.out.printf("flushes %d, flush p50 %.1f us, p99 %.1f us, writes/s %.0f, cpu us/write %.2f%n", flushes,
                    l[flushes / 2] / 1e3, l[(int) (flushes * 0.99)] / 1e3, writes / secs, cpuPerWrite);
        }
    }
}
