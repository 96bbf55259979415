package io.pistore.app.bench;

import io.pistore.server.metrics.EngineCollector;
import io.pistore.server.metrics.MetricsEndpoint;
import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.stats.TargetStats;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A fio-like load generator over a {@link BlockDevice}: {@code queues × qd} request slots, each
 * resubmitting from its completion, for a fixed time. Latency goes into HdrHistogram recorders;
 * a progress line is printed each second.
 *
 * <p>{@code verify} gives each slot its own share of the volume, writes blocks whose data names
 * their LBA and a generation number, reads them back and counts blocks whose content is wrong
 * although no error was reported ({@code data_mismatches}) apart from detected errors.
 */
public final class BenchRunner {
    /** Pause before a request that failed with a transport error is sent again. */
    static final long RETRY_PAUSE_MS = 100;
    /** Resends requests after transport errors, off the transports' I/O threads. */
    private static final java.util.concurrent.ScheduledExecutorService RETRIES =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "pistore-bench-retry");
                t.setDaemon(true);
                return t;
            });

    /**
     * Completions running on this thread, one inside another. A request answered before its
     * submitter registered the callback (a transport that answers at once, or a submitting thread
     * slower than the one answering: cold code beside warm code) runs the callback inside the
     * submit, and the callback submits the next request: without a bound that recursion can run
     * the thread out of stack, and the slot is lost.
     */
    private static final ThreadLocal<int[]> NESTED = ThreadLocal.withInitial(() -> new int[1]);
    private static final int MAX_NESTED = 8;

    private static final long HIGHEST_NANOS = TimeUnit.SECONDS.toNanos(60);
    /**
     * The length of one of a run's seconds (of {@code --seconds} and {@code --ramp}, a progress line
     * each): a second, unless the system property {@code pistore.bench.second.ms} shortens it (for
     * tests, which check what a run reports, not how fast it goes). Rates stay per real second.
     */
    static final long SECOND_NANOS =
            TimeUnit.MILLISECONDS.toNanos(Math.max(1, Long.getLong("pistore.bench.second.ms", 1000)));

    private final BenchOptions o;
    private final PrintStream progressOut;

    /** {@code ops} done in one of a run's seconds, per real second. */
    private static long perSecond(long ops) {
        return Math.round(ops * (double) TimeUnit.SECONDS.toNanos(1) / SECOND_NANOS);
    }

    /**
     * The figures of this run: the embedded target's, and the PI errors this process catches as a
     * host ({@code where="host"}); shown with {@code --metrics}.
     */
    private TargetStats stats = new TargetStats();
    private EngineCollector collector = new EngineCollector(stats);

    public BenchRunner(BenchOptions options, PrintStream progressOut) {
        this.o = options;
        this.progressOut = progressOut;
    }

    /** Runs {@code o.pi} against {@code o.target} or an embedded target, on transport {@code name}. */
    public BenchResult run(String name) throws Exception {
        return runSideBySide(name, List.of(o.pi), 1).get(0);
    }

    /**
     * Runs each PI mode of {@code modes} in turn, {@code rounds} times, over one transport, one
     * embedded target (or {@code o.target}) and one connection, so that the modes are compared under
     * the same conditions: the order alternates by round (A B, B A, ...) to cancel drift. An embedded
     * target gets one volume per format the modes need: {@code o.volume} in {@code o.format}, and for
     * {@code off} beside a PI mode, {@code o.volume + "-nopi"} without metadata (alone, {@code off}
     * uses {@code o.volume} without metadata, as it always has). Results come in run order.
     */
    public List<BenchResult> runSideBySide(String name, List<BenchOptions.PiMode> modes, int rounds) throws Exception {
        o.validate();
        if (modes.isEmpty() || rounds < 1) {
            throw new IllegalArgumentException("nothing to run: " + modes.size() + " PI modes, " + rounds + " rounds");
        }
        BlockTransportProvider p = Transports.find(name, o.transportOptions);
        TargetAddress.check(p, o.target);
        try (BlockTransport t = p.create(o.transportOptions)) {
            if (o.target != null) {
                // a host of a running target: the endpoint shows what this process sees as a host
                stats = new TargetStats(o.metricsLatencySample);
                collector = new EngineCollector(stats);
                try (MetricsEndpoint m = o.metrics == null ? null : MetricsEndpoint.start(o.metrics, collector)) {
                    if (m != null && progressOut != null) {
                        progressOut.println("[" + name + "] metrics of this host at " + m.url());
                    }
                    return runOn(name, t, o.target, modes, rounds, null, null);
                }
            }
            Map<BenchOptions.PiMode, String> volumes = new EnumMap<>(BenchOptions.PiMode.class);
            Map<String, BlockFormat> formats = new LinkedHashMap<>();
            boolean mixed = modes.stream().anyMatch(m -> m != BenchOptions.PiMode.OFF)
                    && modes.contains(BenchOptions.PiMode.OFF);
            for (BenchOptions.PiMode m : modes) {
                boolean plain = m == BenchOptions.PiMode.OFF;
                String v = plain && mixed ? o.volume + "-nopi" : o.volume;
                volumes.put(m, v);
                formats.put(v, plain ? BlockFormat.of(o.format.dataSize(), 0) : o.format);
            }
            try (VolumeStore store = o.dataDir == null ? VolumeStore.inMemory()
                    : VolumeStore.open(o.dataDir, o.cacheBytes, "pistore bench")) {
                Map<String, Boolean> fresh = new LinkedHashMap<>();
                for (Map.Entry<String, BlockFormat> e : formats.entrySet()) {
                    long blocks = o.sizeBytes / e.getValue().dataSize();
                    boolean reused = store.get(e.getKey()) != null;
                    // before creating (and later prefilling) anything: does --bs fit the blocks?
                    o.checkBlockSize(reused ? store.get(e.getKey()).format().dataSize() : e.getValue().dataSize(),
                            reused ? "the volume's" : "--format's");
                    if (!reused) {
                        store.create(e.getKey(), e.getValue(), blocks);
                    }
                    fresh.put(e.getKey(), !reused && store.get(e.getKey()).blockCount() == blocks);
                }
                stats = new TargetStats(o.metricsLatencySample);
                collector = new EngineCollector(stats);
                collector.add(store);
                try (TargetService service = new TargetService(store);
                     MetricsEndpoint m = o.metrics == null ? null : MetricsEndpoint.start(o.metrics, collector);
                     TargetListener l = t.listen(p.embeddedListenAddress(),
                             m == null ? service : stats.measure(name, service))) {
                    if (m != null && progressOut != null) {
                        progressOut.println("[" + name + "] metrics at " + m.url());
                    }
                    return runOn(name, t, l.address(), modes, rounds, volumes, fresh);
                }
            }
        }
    }

    private List<BenchResult> runOn(String name, BlockTransport t, String address, List<BenchOptions.PiMode> modes,
                                    int rounds, Map<BenchOptions.PiMode, String> volumes, Map<String, Boolean> fresh)
            throws Exception {
        boolean reads = o.rw != BenchOptions.Rw.VERIFY && o.rw != BenchOptions.Rw.WRITE
                && o.rw != BenchOptions.Rw.RANDWRITE;
        List<BenchResult> results = new ArrayList<>();
        ConnectOptions co = new ConnectOptions(o.queues, o.queueDepth);
        if (volumes == null && o.volume != null) {
            co = co.volume(o.volume); // a host given a list of peers connects to one that has it
        }
        try (HostConnection c = HostConnect.connect(t, address, co, volumes == null ? o.connectTimeoutMillis : 0)) {
            collector.add(c, name); // its reconnects
            Map<String, BlockDevice> devices = new LinkedHashMap<>();
            Map<String, Boolean> unwrittenIsZero = new LinkedHashMap<>();
            for (BenchOptions.PiMode m : modes) {
                String v = volumes == null ? o.volume : volumes.get(m);
                if (!devices.containsKey(v)) {
                    BlockDevice dev = BlockDevice.open(c, v);
                    stats.transport(name).volume(v); // its series from the start: where="host" at zero while healthy
                    if (dev.info().readOnly() && o.rw != BenchOptions.Rw.RANDREAD && o.rw != BenchOptions.Rw.READ) {
                        // the target would refuse every write: say so once, before the run
                        throw new IllegalArgumentException("volume " + v + " is read-only to this host (the target's "
                                + "access rules): --rw " + o.rw.cliName() + " writes; use --rw randread or read");
                    }
                    o.checkBlockSize(dev.format().dataSize(), "the volume's"); // before a prefill
                    boolean isFresh = fresh != null && fresh.get(v);
                    boolean prefill = isFresh && o.prefill && reads;
                    if (prefill) {
                        prefill(name, dev);
                    }
                    devices.put(v, dev);
                    unwrittenIsZero.put(v, isFresh && !prefill);
                }
            }
            for (int round = 1; round <= rounds && !o.interrupted.get(); round++) {
                for (int i = 0; i < modes.size(); i++) {
                    // A B, B A, ...: neither mode always runs first, after the other has warmed the caches.
                    BenchOptions.PiMode m = modes.get(round % 2 == 1 ? i : modes.size() - 1 - i);
                    String v = volumes == null ? o.volume : volumes.get(m);
                    Run run = new Run(name, devices.get(v), v, m, unwrittenIsZero.get(v));
                    if (modes.size() > 1 || rounds > 1) {
                        // side by side, each progress line says which mode and round it belongs to
                        run.label = name + " pi=" + m.cliName() + (rounds > 1 ? " round " + round : "");
                    }
                    BenchResult r = run.execute();
                    r.round = rounds > 1 ? round : 0;
                    results.add(r);
                    // After a run the volume holds what it wrote, in generations the next run does not
                    // know: a later verify checks only the blocks it writes itself.
                    unwrittenIsZero.put(v, false);
                }
            }
        }
        return results;
    }

    /**
     * Writes every block of a fresh embedded volume once, so reads check real PI: a never-written
     * block carries an escape tuple, whose checks are skipped, and would flatter the figures.
     */
    private void prefill(String name, BlockDevice dev) throws Exception {
        long t0 = System.nanoTime();
        int ds = dev.format().dataSize();
        int per = Math.max(1, Math.min((1 << 20) / ds, (int) dev.info().blockCount()));
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(per * ds);
        SplittableRandom r = new SplittableRandom(42);
        while (buf.hasRemaining()) {
            buf.put((byte) r.nextInt());
        }
        for (long lba = 0; lba < dev.info().blockCount(); lba += per) {
            int n = (int) Math.min(per, dev.info().blockCount() - lba);
            buf.clear().limit(n * ds);
            long at = lba;
            BlockDevice.await(() -> dev.write(at, ScatterList.of(buf)));
        }
        if (progressOut != null && o.progress) {
            progressOut.printf(Locale.ROOT, "[%s prefill] wrote %d blocks in %.1f s%n", name, dev.info().blockCount(),
                    (System.nanoTime() - t0) / 1e9);
        }
    }

    /** The state of one run. */
    private final class Run {
        final String transport;
        /** What the progress lines call this run: the transport, and the mode and round side by side. */
        String label;
        final BlockDevice dev;
        final String volume;
        final BenchOptions.PiMode pi;
        final BlockFormat f;
        final int blocksPerIo;
        final long chunks;
        final Recorder recorder = new Recorder(HIGHEST_NANOS, 3);
        final LongAdder ops = new LongAdder();
        final LongAdder guard = new LongAdder();
        final LongAdder app = new LongAdder();
        final LongAdder ref = new LongAdder();
        final LongAdder io = new LongAdder();
        final LongAdder mismatches = new LongAdder();
        final AtomicLong sequential = new AtomicLong();
        final String[] firstProblemHolder = new String[1];
        volatile boolean measuring;
        volatile boolean stop;
        CountDownLatch done;
        long[] generations;

        /** Whether a block this run never wrote is known to read as zeros. */
        final boolean unwrittenIsZero;

        Run(String transport, BlockDevice dev, String volume, BenchOptions.PiMode pi, boolean unwrittenIsZero) {
            this.unwrittenIsZero = unwrittenIsZero;
            this.transport = transport;
            this.label = transport;
            this.dev = dev;
            this.volume = volume;
            this.pi = pi;
            this.f = dev.format();
            o.checkBlockSize(f.dataSize(), "the volume's");
            this.blocksPerIo = o.blockSize / f.dataSize();
            this.chunks = dev.info().blockCount() / blocksPerIo;
            if (chunks < (long) o.queues * o.queueDepth) {
                throw new IllegalArgumentException("volume " + dev.info().name() + " is too small for "
                        + o.queues * o.queueDepth + " requests of " + o.blockSize + " bytes in flight");
            }
            if (o.rw == BenchOptions.Rw.VERIFY) {
                if (chunks > 64L << 20) {
                    throw new IllegalArgumentException("--rw verify tracks at most 64 Mi blocks of --bs; use a larger --bs");
                }
                generations = new long[(int) chunks];
            }
        }

        BenchResult execute() throws InterruptedException {
            int slots = o.queues * o.queueDepth;
            done = new CountDownLatch(slots);
            long t0 = System.nanoTime();
            for (int q = 0; q < o.queues; q++) {
                for (int k = 0; k < o.queueDepth; k++) {
                    new Slot(q, q * o.queueDepth + k, slots).issue();
                }
            }
            Histogram total = new Histogram(HIGHEST_NANOS, 3);
            Histogram interval = null;
            long measureStart = 0;
            long lastOps = 0;
            long lastErrors = 0;
            int tick = 0;
            int totalTicks = o.rampSeconds + o.seconds;
            long opsAtMeasureStart = 0;
            long cpuAtMeasureStart = o.rampSeconds == 0 ? ProcessCpu.nanos() : -1;
            List<Long> opsPerSecond = new ArrayList<>();
            while (tick < totalTicks && !o.interrupted.get()) {
                long wake = t0 + SECOND_NANOS * (tick + 1);
                long now;
                while ((now = System.nanoTime()) < wake && !o.interrupted.get()) {
                    TimeUnit.NANOSECONDS.sleep(Math.min(wake - now, 50_000_000));
                }
                if (o.interrupted.get()) {
                    // Ctrl-C: the part of a second run so far counts, as a measured one (a ramp too)
                    interval = recorder.getIntervalHistogram(interval);
                    total.add(interval);
                    lastOps = ops.sum();
                    if (!measuring) {
                        measureStart = t0;
                        opsAtMeasureStart = 0;
                        cpuAtMeasureStart = cpuAtMeasureStart < 0 ? ProcessCpu.nanos() : cpuAtMeasureStart;
                    }
                    break;
                }
                tick++;
                interval = recorder.getIntervalHistogram(interval);
                long opsNow = ops.sum();
                long delta = opsNow - lastOps;
                lastOps = opsNow;
                if (tick == o.rampSeconds) {
                    measuring = true;
                    cpuAtMeasureStart = ProcessCpu.nanos();
                    measureStart = System.nanoTime();
                    opsAtMeasureStart = opsNow;
                } else if (tick > o.rampSeconds) {
                    total.add(interval);
                }
                if (tick > o.rampSeconds) {
                    opsPerSecond.add(perSecond(delta));
                }
                long errorsNow = guard.sum() + app.sum() + ref.sum() + io.sum() + mismatches.sum();
                long errorsDelta = errorsNow - lastErrors;
                lastErrors = errorsNow;
                if (o.progress && progressOut != null) {
                    // every column is of this second; the totals are in the summary
                    progressOut.printf(Locale.ROOT, "[%s %3ds%s] iops=%.0f mib_per_s=%.1f p99_us=%s errors=%d%n",
                            label, tick, tick <= o.rampSeconds ? " ramp" : "", (double) perSecond(delta),
                            perSecond(delta) * (double) o.blockSize / (1 << 20),
                            interval.getTotalCount() == 0 ? "-"
                                    : String.format(Locale.ROOT, "%.1f", interval.getValueAtPercentile(99) / 1000.0),
                            errorsDelta);
                }
            }
            long measureEnd = System.nanoTime();
            long cpuAtMeasureEnd = ProcessCpu.nanos();
            stop = true;
            long unanswered = 0;
            if (!done.await(60, TimeUnit.SECONDS)) {
                unanswered = done.getCount();
                io.add(unanswered);
                problem(unanswered + " requests still unanswered 60 s after the run stopped");
            }
            if (o.rampSeconds == 0 || measureStart == 0) {
                measureStart = t0;
                opsAtMeasureStart = 0;
            }
            long measuredOps = lastOps - opsAtMeasureStart;
            double secs = (measureEnd - measureStart) / 1e9;
            BenchResult r = new BenchResult();
            r.transport = transport;
            r.embedded = o.target == null;
            r.rw = o.rw.cliName();
            r.blockSize = o.blockSize;
            r.queueDepth = o.queueDepth;
            r.queues = o.queues;
            r.pi = pi.cliName();
            r.seconds = secs;
            r.ops = measuredOps;
            r.bytes = measuredOps * o.blockSize;
            r.iops = measuredOps / secs;
            r.mibPerSec = r.bytes / secs / (1 << 20);
            if (cpuAtMeasureStart >= 0 && cpuAtMeasureEnd >= 0) {
                long cpu = cpuAtMeasureEnd - cpuAtMeasureStart;
                r.cpuCores = cpu / (double) (measureEnd - measureStart);
                r.cpuUsPerOp = measuredOps == 0 ? 0 : cpu / 1e3 / measuredOps;
            }
            if (total.getTotalCount() > 0) {
                r.p50us = total.getValueAtPercentile(50) / 1000.0;
                r.p99us = total.getValueAtPercentile(99) / 1000.0;
                r.p999us = total.getValueAtPercentile(99.9) / 1000.0;
                r.maxUs = total.getMaxValue() / 1000.0;
            }
            r.latency = total;
            r.iopsPerSecond = opsPerSecond.stream().mapToLong(Long::longValue).toArray();
            r.guardErrors = guard.sum();
            r.appErrors = app.sum();
            r.refErrors = ref.sum();
            r.ioErrors = io.sum();
            r.dataMismatches = mismatches.sum();
            r.firstProblem = firstProblemHolder[0];
            r.unanswered = unanswered;
            return r;
        }

        void problem(String s) {
            synchronized (firstProblemHolder) {
                if (firstProblemHolder[0] == null) {
                    firstProblemHolder[0] = s;
                }
            }
        }

        /** One request slot: its own buffers, one request in flight at a time. */
        private final class Slot {
            final int queue;
            final int index;
            final int slots;
            final SplittableRandom rnd;
            final ByteBuffer data;
            final ByteBuffer meta;
            final ScatterList dataList;
            final ScatterList metaList;
            long lba;
            long chunk;
            boolean write;
            long started;

            Slot(int queue, int index, int slots) {
                this.queue = queue;
                this.index = index;
                this.slots = slots;
                this.rnd = new SplittableRandom(0x5EED + index);
                this.data = ByteBuffer.allocateDirect(o.blockSize).order(ByteOrder.BIG_ENDIAN);
                byte[] fill = new byte[o.blockSize];
                for (int i = 0; i < fill.length; i++) {
                    fill[i] = (byte) rnd.nextInt();
                }
                data.put(fill).clear();
                this.dataList = ScatterList.of(data);
                if (pi == BenchOptions.PiMode.PASS && f.metadataSize() > 0) {
                    meta = ByteBuffer.allocateDirect(blocksPerIo * f.metadataSize());
                    metaList = ScatterList.of(meta);
                } else {
                    meta = null;
                    metaList = null;
                }
            }

            void issue() {
                choose();
                submit();
            }

            /** Sends the request chosen last (again, after a transport error: the same LBA and content). */
            private void submit() {
                started = System.nanoTime();
                CompletableFuture<Completion> answer;
                try {
                    answer = dev.submit(queue, write ? writeRequest() : readRequest());
                } catch (RuntimeException e) { // refused before it was sent: counted like a failed answer
                    answer = CompletableFuture.failedFuture(e);
                }
                answer.whenComplete((c, e) -> {
                    int[] nested = NESTED.get();
                    nested[0]++;
                    try {
                        complete(c, e, nested[0] > MAX_NESTED);
                    } catch (RuntimeException | Error bug) {
                        // A slot that dies here would leave the run waiting for it; count it and say why.
                        io.increment();
                        problem("bench slot at lba " + lba + " failed: " + bug);
                        done.countDown();
                    } finally {
                        nested[0]--;
                    }
                });
            }

            /**
             * After a transport error (the target went away; the connection reconnects by itself),
             * the same request again after a pause, so the workload resumes once the target is back.
             * A write that failed so may or may not have reached the disk: sending it again makes its
             * content known, which the verify workload relies on.
             */
            private void retryLater() {
                RETRIES.schedule(() -> {
                    if (stop) {
                        done.countDown();
                    } else {
                        submit();
                    }
                }, RETRY_PAUSE_MS, TimeUnit.MILLISECONDS);
            }

            private void choose() {
                switch (o.rw) {
                    case RANDREAD: write = false; chunk = rnd.nextLong(chunks); break;
                    case RANDWRITE: write = true; chunk = rnd.nextLong(chunks); break;
                    case RANDRW: write = rnd.nextBoolean(); chunk = rnd.nextLong(chunks); break;
                    case READ: write = false; chunk = Math.floorMod(sequential.getAndIncrement(), chunks); break;
                    case WRITE: write = true; chunk = Math.floorMod(sequential.getAndIncrement(), chunks); break;
                    default: // VERIFY: only this slot's chunks, so the expected content is known
                        write = rnd.nextBoolean();
                        long mine = (chunks - index + slots - 1) / slots;
                        chunk = index + rnd.nextLong(mine) * slots;
                        break;
                }
                lba = chunk * blocksPerIo;
            }

            private Protection protection() {
                switch (pi) {
                    case INSERT: return dev.insertStrip(lba);
                    case PASS: return f.hasPi()
                            ? Protection.pass(CheckFlags.ALL, f.refTagOf(lba), 0, 0xFFFF)
                            : Protection.NONE;
                    default: return f.hasPi() ? new Protection(true, CheckFlags.NONE, f.refTagOf(lba), 0, 0)
                            : Protection.NONE;
                }
            }

            private PiContext hostContext() {
                return PiContext.builder(f).initialRefTag(f.refTagOf(lba)).build();
            }

            private BlockRequest writeRequest() {
                if (o.rw == BenchOptions.Rw.VERIFY) {
                    long gen = generations[(int) chunk] + 1;
                    fillPattern(gen);
                }
                if (metaList != null) {
                    Pi.generate(hostContext(), dataList, metaList, blocksPerIo);
                }
                return BlockRequest.write(volume, lba, blocksPerIo, dataList, metaList, protection(), false);
            }

            private BlockRequest readRequest() {
                // Pass mode: the PI comes back into this process's memory and is checked once, here, at
                // the end of its path (what reaches the application is what is checked); the request
                // asks no hop before for checks (its PiDuty leaves them to the host).
                Protection p = protection();
                return BlockRequest.read(volume, lba, blocksPerIo, dataList, metaList, pi == BenchOptions.PiMode.PASS
                        && f.hasPi() ? Protection.pass(CheckFlags.NONE, p.initialRefTag(), 0, 0) : p);
            }

            /** Each block: LBA, generation, then a value derived from both, as longs. */
            private void fillPattern(long gen) {
                int ds = f.dataSize();
                for (int b = 0; b < blocksPerIo; b++) {
                    long blockLba = lba + b;
                    int base = b * ds;
                    data.putLong(base, blockLba);
                    data.putLong(base + 8, gen);
                    long v = blockLba * 0x9E3779B97F4A7C15L ^ gen;
                    for (int i = 16; i < ds; i += 8) {
                        data.putLong(base + i, v);
                    }
                }
            }

            private boolean matches(long gen) {
                int ds = f.dataSize();
                for (int b = 0; b < blocksPerIo; b++) {
                    long blockLba = lba + b;
                    int base = b * ds;
                    long v = gen == 0 ? 0 : blockLba * 0x9E3779B97F4A7C15L ^ gen;
                    if (data.getLong(base) != (gen == 0 ? 0 : blockLba) || data.getLong(base + 8) != gen) {
                        return false;
                    }
                    for (int i = 16; i < ds; i += 8) {
                        if (data.getLong(base + i) != v) {
                            return false;
                        }
                    }
                }
                return true;
            }

            /** {@code deep}: this runs nested more than {@link #MAX_NESTED} completions deep on its thread. */
            private void complete(Completion c, Throwable e, boolean deep) {
                long lat = System.nanoTime() - started;
                if (e != null || c == null) {
                    io.increment();
                    problem(String.valueOf(e));
                } else if (c.isSuccess()) {
                    // Pass mode: the application's check of a read (the only one: readRequest); a block
                    // it rejects is a detected error, not a data mismatch (wrong data nobody reported).
                    PiError pe = !write && metaList != null
                            ? Pi.verify(hostContext(), dataList, metaList, blocksPerIo) : null;
                    if (pe != null) {
                        stats.hostPiError(transport, volume, pe.kind());
                        count(pe.kind().shortName());
                        problem("host check at lba " + (lba + pe.blockIndex()) + ": " + pe);
                    } else if (o.rw == BenchOptions.Rw.VERIFY) {
                        if (write) {
                            generations[(int) chunk]++;
                        } else if ((generations[(int) chunk] != 0 || unwrittenIsZero)
                                && !matches(generations[(int) chunk])) {
                            mismatches.increment();
                            problem("data mismatch at lba " + lba + " (no error reported)");
                        }
                    }
                } else if (c.status().isPiError()) {
                    if (c.caughtByHost()) { // the transport's check on this side; the target never saw it
                        stats.hostPiError(transport, volume, c.status().piErrorKind());
                    }
                    count(c.piError() == null ? "guard" : c.piError().kind().shortName());
                    problem(c.toString());
                } else {
                    io.increment();
                    problem(c.toString());
                }
                boolean reachedTarget = c != null && c.status() != Status.TRANSPORT_ERROR;
                if (reachedTarget) { // a request the target never saw is an error, not an I/O of the workload
                    ops.increment();
                    // ramp seconds too: their progress lines show their own percentiles (the total adds
                    // only the measured seconds' intervals)
                    recorder.recordValue(Math.min(lat, HIGHEST_NANOS));
                }
                // every failure that is no PI error (a lost target, a volume deleted under the run) is
                // sent again after the pause, not at once: the retries stay at one per slot per pause
                boolean failed = c == null || !c.isSuccess() && !c.status().isPiError();
                if (stop) {
                    done.countDown();
                } else if (failed) {
                    retryLater();
                } else if (deep) {
                    // answered before whenComplete was called, so this runs inside the submit of the
                    // request before: the next one starts from a fresh stack, not one level deeper
                    RETRIES.execute(this::issue);
                } else {
                    issue();
                }
            }

            private void count(String kind) {
                switch (kind) {
                    case "guard": guard.increment(); break;
                    case "app": app.increment(); break;
                    default: ref.increment(); break;
                }
            }
        }
    }
}
