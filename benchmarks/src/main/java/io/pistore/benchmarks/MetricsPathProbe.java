package io.pistore.benchmarks;

import io.pistore.server.metrics.EngineCollector;
import io.pistore.server.metrics.MetricsEndpoint;
import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.stats.TargetStats;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportOptions;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * Where the cost of {@code --metrics} on the local transport comes from, end to end in one fresh
 * JVM per figure: bench's closed loop (one queue, qd 32, 4 KiB random reads of a prefilled memory
 * volume, PI inserted and stripped, each completion resubmitting on the queue's worker thread), with
 * one of the parts {@code bench --metrics} adds:
 *
 * <ul>
 *   <li>{@code off}: nothing;
 *   <li>{@code wrap}: the measuring handler ({@code TargetStats.measure}), no endpoint;
 *   <li>{@code endpoint}: the metrics endpoint (JVM metrics included), the handler not wrapped;
 *   <li>{@code endpoint-nojvm}: an endpoint with the engine's collector only;
 *   <li>{@code on}: both, as {@code bench --metrics} runs.
 * </ul>
 *
 * Prints one line: requests per second of wall time, the worker thread's CPU and allocation per
 * request (its own, so other tenants of a shared machine do not count), the process's CPU per
 * request, young collections, and per second of the measurement the worker's ns per request (a
 * bimodal run shows there):
 *
 * <pre>java -cp "PROBE_CLASSES:app/target/lib/*" io.pistore.benchmarks.MetricsPathProbe MODE [WARM_S] [MEASURE_S]</pre>
 */
public final class MetricsPathProbe {
    private static final int QD = 32;
    private static final long BLOCKS = 65536;

    private MetricsPathProbe() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "off";
        int warm = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int measure = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        BlockFormat f = BlockFormat.of(4096, 8);
        BlockTransportProvider p = Transports.find("local", TransportOptions.NONE);
        TargetStats stats = new TargetStats();
        EngineCollector collector = new EngineCollector(stats);
        try (VolumeStore store = VolumeStore.inMemory(); BlockTransport t = p.create(TransportOptions.NONE)) {
            store.create("v", f, BLOCKS);
            collector.add(store);
            TargetService service = new TargetService(store);
            TargetHandler h = mode.equals("wrap") || mode.equals("on") ? stats.measure("local", service) : service;
            AutoCloseable endpoint = null;
            if (mode.equals("endpoint") || mode.equals("on")) {
                endpoint = MetricsEndpoint.start("0", collector);
            } else if (mode.equals("endpoint-nojvm")) {
                PrometheusRegistry r = new PrometheusRegistry();
                r.register(collector);
                HTTPServer s = HTTPServer.builder().hostname("127.0.0.1").port(0).registry(r).buildAndStart();
                endpoint = s::close;
            } else if (!mode.equals("off") && !mode.equals("wrap")) {
                throw new IllegalArgumentException("mode: off, wrap, endpoint, endpoint-nojvm or on, not " + mode);
            }
            try (TargetListener l = t.listen(p.embeddedListenAddress(), h);
                 HostConnection c = t.connect(l.address(), new ConnectOptions(1, QD))) {
                BlockDevice dev = BlockDevice.open(c, "v");
                ByteBuffer big = ByteBuffer.allocateDirect(1 << 20);
                for (long lba = 0; lba < BLOCKS; lba += 256) {
                    big.clear();
                    long at = lba;
                    BlockDevice.await(() -> dev.write(at, ScatterList.of(big)));
                }
                run(dev, f, mode, warm, measure);
            }
            if (endpoint != null) {
                endpoint.close();
            }
        }
        System.exit(0); // the loop's slots are still resubmitting
    }

    private static final LongAdder OPS = new LongAdder();
    private static volatile boolean stop;

    private static void run(BlockDevice dev, BlockFormat f, String mode, int warm, int measure) throws Exception {
        for (int k = 0; k < QD; k++) {
            new Slot(dev, f, k).issue();
        }
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long worker = -1;
        for (Thread th : Thread.getAllStackTraces().keySet()) {
            if (th.getName().startsWith("pistore-local-")) {
                worker = th.getId();
            }
        }
        Thread.sleep(warm * 1000L);
        long ops0 = OPS.sum();
        long cpu0 = mx.getThreadCpuTime(worker);
        long alloc0 = mx.getThreadAllocatedBytes(worker);
        long proc0 = os.getProcessCpuTime();
        long gc0 = gcs();
        long t0 = System.nanoTime();
        StringBuilder perSecond = new StringBuilder();
        long opsPrev = ops0;
        long cpuPrev = cpu0;
        for (int s = 0; s < measure; s++) {
            Thread.sleep(1000);
            long o = OPS.sum();
            long c = mx.getThreadCpuTime(worker);
            perSecond.append(String.format(Locale.ROOT, " %.0f", (c - cpuPrev) / (double) Math.max(1, o - opsPrev)));
            opsPrev = o;
            cpuPrev = c;
        }
        long ops = OPS.sum() - ops0;
        double secs = (System.nanoTime() - t0) / 1e9;
        long cpu = mx.getThreadCpuTime(worker) - cpu0;
        long alloc = mx.getThreadAllocatedBytes(worker) - alloc0;
        long proc = os.getProcessCpuTime() - proc0;
        stop = true;
        System.out.printf(Locale.ROOT, "%s iops %.0f worker_ns %.0f alloc_b %.1f proc_ns %.0f gcs %d per_s%s%n",
                mode, ops / secs, cpu / (double) ops, alloc / (double) ops, proc / (double) ops, gcs() - gc0,
                perSecond);
    }

    private static long gcs() {
        long n = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            n += Math.max(0, b.getCollectionCount());
        }
        return n;
    }

    /** One request in flight, resubmitted from its completion as bench's slots are. */
    private static final class Slot {
        final BlockDevice dev;
        final BlockFormat f;
        final SplittableRandom rnd;
        final ScatterList data = ScatterList.of(ByteBuffer.allocateDirect(4096));

        Slot(BlockDevice dev, BlockFormat f, int index) {
            this.dev = dev;
            this.f = f;
            this.rnd = new SplittableRandom(0x5EED + index);
        }

        void issue() {
            long lba = rnd.nextLong(BLOCKS);
            data.segment(0).clear();
            dev.submit(0, BlockRequest.read("v", lba, 1, data, null, dev.insertStrip(lba)))
                    .whenComplete((c, e) -> complete(c));
        }

        void complete(Completion c) {
            if (c == null || !c.isSuccess()) {
                throw new IllegalStateException(String.valueOf(c));
            }
            OPS.increment();
            if (!stop) {
                issue();
            }
        }
    }
}
