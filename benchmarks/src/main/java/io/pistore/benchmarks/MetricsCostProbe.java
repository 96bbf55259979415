package io.pistore.benchmarks;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.stats.TargetStats;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.PiDuty;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.VolumeInfo;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * What the engine's counters ({@code TargetStats.measure}, behind {@code serve --metrics}) add to a
 * request, by the measuring thread's CPU time (which leaves out the slices other tenants take):
 * 4 KiB reads of a memory volume with PI checked and stripped, straight into the target service,
 * then through four wrappers: one that only wraps the completion, one that also reads the clock
 * twice, and the measuring one timing every request, then the default sample of them. Prints
 * nanoseconds of CPU per request for each, per round:
 *
 * <pre>java -cp "benchmarks/target/classes:app/target/lib/*" io.pistore.benchmarks.MetricsCostProbe [ROUNDS]</pre>
 */
public final class MetricsCostProbe {
    private static long sink;

    private MetricsCostProbe() {
    }

    /** Wraps the completion as the measuring handler does, and nothing else. */
    private static final class CompletionOnly implements TargetHandler {
        private final TargetHandler d;

        CompletionOnly(TargetHandler d) {
            this.d = d;
        }

        @Override
        public List<VolumeInfo> volumes() {
            return d.volumes();
        }

        @Override
        public void execute(BlockRequest r, io.pistore.spi.PiDuty checked, Consumer<Completion> done) {
            d.execute(r, checked, c -> {
                sink++;
                done.accept(c);
            });
        }
    }

    /** Wraps the completion and reads the clock before and after, as the measuring handler does. */
    private static final class ClockOnly implements TargetHandler {
        private final TargetHandler d;

        ClockOnly(TargetHandler d) {
            this.d = d;
        }

        @Override
        public List<VolumeInfo> volumes() {
            return d.volumes();
        }

        @Override
        public void execute(BlockRequest r, io.pistore.spi.PiDuty checked, Consumer<Completion> done) {
            long start = System.nanoTime();
            d.execute(r, checked, c -> {
                sink += System.nanoTime() - start;
                done.accept(c);
            });
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int n = 2_000_000;
        BlockFormat f = BlockFormat.of(4096, 8);
        try (VolumeStore store = VolumeStore.inMemory()) {
            store.create("v", f, 65536);
            TargetService service = new TargetService(store);
            TargetHandler[] handlers = {service, new CompletionOnly(service), new ClockOnly(service),
                new TargetStats(1).measure("local", service),
                new TargetStats(TargetStats.DEFAULT_LATENCY_SAMPLE).measure("local", service)};
            String[] names = {"plain", "completion wrapped", "+ clock twice", "measured, every request timed",
                "measured, 1 in " + TargetStats.DEFAULT_LATENCY_SAMPLE + " timed"};
            ScatterList data = ScatterList.of(ByteBuffer.allocateDirect(4096));
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            Consumer<Completion> done = c -> sink++;
            for (int round = 1; round <= rounds; round++) {
                StringBuilder line = new StringBuilder("round " + round + ":");
                for (int k = 0; k < handlers.length; k++) {
                    long t0 = mx.getCurrentThreadCpuTime();
                    for (int i = 0; i < n; i++) {
                        long lba = (i * 7919L) & 65535;
                        handlers[k].execute(BlockRequest.read("v", lba, 1, data, null, Protection.insertStrip(f, lba)),
                                PiDuty.of(Protection.insertStrip(f, lba)), done);
                        data.segment(0).clear();
                    }
                    long cpu = mx.getCurrentThreadCpuTime() - t0;
                    line.append(String.format(Locale.ROOT, "  %s %.0f ns", names[k], cpu / (double) n));
                }
                System.out.println(line);
            }
        }
        System.out.println(sink == 42 ? "" : "done");
    }
}
