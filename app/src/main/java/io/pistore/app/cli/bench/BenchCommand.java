package io.pistore.app.cli.bench;

import io.pistore.app.cli.volume.VolumeCommand;
import io.pistore.app.cli.serve.ServeReadiness;
import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ConfigOption;
import io.pistore.app.cli.DataDirOption;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.cli.LogLevelOption;
import io.pistore.app.cli.Numbers;
import io.pistore.app.cli.PiConverters;
import io.pistore.app.cli.ServerLog;
import io.pistore.app.cli.TlsLine;
import io.pistore.app.cli.TransportOptionsOption;
import io.pistore.engine.Transports;
import io.pistore.engine.stats.TargetStats;
import io.pistore.app.bench.BenchOptions;
import io.pistore.app.bench.BenchPlot;
import io.pistore.app.bench.BenchResult;
import io.pistore.app.bench.BenchRunner;
import io.pistore.app.bench.PiComparison;
import io.pistore.engine.volume.DataDirInUseException;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardPath;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiType;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportOptions;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code pistore bench}: a fio-like workload with PI against an embedded or a remote target. */
@Command(name = "bench", sortOptions = false,
        description = {"Runs a workload with PI and prints IOPS, MiB/s, latency percentiles and errors.",
            "With --target it runs against a running target's volume: --transport and --rw must be given "
                + "(every --rw but randread and read overwrites the volume).",
            "Without --target it starts an embedded target in this process with a memory volume "
                + "(--format, --size); with --pi off that volume has no metadata.",
            "--rw verify writes blocks that name their LBA and a generation, reads them back and counts "
                + "data_mismatches: wrong content that no error reported.",
            "A request that fails because the target went away is sent again every 100 ms: the workload "
                + "resumes once the connection is back. Exit 1 when a PI check or the verify found bad "
                + "blocks, else 3 when requests failed (io_err), else 0."})
public final class BenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ConfigOption config;

    /** null: not given, which means local for the embedded target and is refused with --target. */
    @Option(names = "--transport", paramLabel = "NAME|all",
            description = "Transport, or 'all' for each available one in turn (default: local, the embedded "
                    + "target in this process; with --target it must be given: tcp or rdma).")
    String transport;

    @Mixin
    TransportOptionsOption transportOptions;

    @Mixin
    LogLevelOption logLevel;

    @Option(names = "--target", paramLabel = "HOST:PORT[,HOST:PORT...]",
            description = "A running target (default: embedded); over tcp and rdma a list of peers serving the same "
                    + "volumes (a replicated volume's), failing over to the next when one is lost.")
    String target;

    @Option(names = "--connect-timeout", paramLabel = "DURATION", defaultValue = "0",
            description = "With --target: how long the first connection may wait for a target that is starting, "
                    + "trying again every 100 ms, e.g. 10s or 500ms (default: ${DEFAULT-VALUE}, fail at once).")
    String connectTimeout;

    @Option(names = "--volume", paramLabel = "NAME", defaultValue = "bench", description = "Volume (default: ${DEFAULT-VALUE}).")
    String volume;

    /** null: not given, which means randrw for the embedded target and is refused with --target. */
    @Option(names = "--rw", paramLabel = "MODE",
            description = "randread, randwrite, randrw, read, write or verify (default: randrw on the embedded "
                    + "target; with --target it must be given, since every mode but randread and read "
                    + "overwrites the volume with test data).")
    String rw;

    @Option(names = "--bs", paramLabel = "BYTES", defaultValue = "4k", converter = Numbers.SizeConverter.class,
            description = "Bytes per request, a multiple of the block (default: ${DEFAULT-VALUE}).")
    int bs;

    @Option(names = "--qd", paramLabel = "N", defaultValue = "32", description = "Requests in flight per queue (default: ${DEFAULT-VALUE}).")
    int qd;

    @Option(names = "--queues", paramLabel = "N", defaultValue = "1", description = "Queues (default: ${DEFAULT-VALUE}).")
    int queues;

    @Option(names = "--seconds", paramLabel = "N", defaultValue = "10", description = "Measured seconds (default: ${DEFAULT-VALUE}).")
    int seconds;

    @Option(names = "--ramp", paramLabel = "N", defaultValue = "1",
            description = "Warm-up seconds before measuring, not counted (default: ${DEFAULT-VALUE}).")
    int ramp;

    @Option(names = "--pi", paramLabel = "MODE[,MODE]", defaultValue = "insert",
            description = "insert (the next hop adds and strips PI), pass (the host makes and checks PI) or off "
                    + "(default: ${DEFAULT-VALUE}). Several, comma-separated, run side by side in one process "
                    + "(see --rounds) and are compared with off, or else with the first.")
    String pi;

    @Option(names = "--rounds", paramLabel = "N", defaultValue = "1",
            description = "Runs every --pi mode N times, alternating their order, over one target and connection, "
                    + "and prints each mode's median and its IOPS ratio per round (default: ${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--format", paramLabel = "DATA+META", defaultValue = "4096+8", converter = PiConverters.SizesConverter.class,
            description = "Embedded volume's format (default: ${DEFAULT-VALUE}).")
    PiConverters.Sizes sizes;

    @Option(names = "--type", paramLabel = "0-3", description = "Embedded volume's PI type (default: 1).")
    Integer type;

    @Option(names = "--guard", paramLabel = "GUARD", converter = PiConverters.GuardConverter.class,
            description = "Embedded volume's guard (default by metadata size).")
    GuardType guard;

    @Option(names = "--size", paramLabel = "BYTES", defaultValue = "1GiB", converter = Numbers.LongSizeConverter.class,
            description = "Embedded volume's size (default: ${DEFAULT-VALUE}).")
    long size;

    @Option(names = "--data", paramLabel = "DIR",
            description = "Embedded target on durable file volumes in DIR, which must exist: bench creates the "
                    + "volume (--volume, --format, --size) there if absent, and a workload that writes overwrites it.")
    java.nio.file.Path data;

    @Option(names = "--cache", paramLabel = "BYTES", defaultValue = "0", converter = Numbers.LongSizeConverter.class,
            description = "With --data: a read cache of hot blocks and their PI per volume (default: none).")
    long cache;

    @Option(names = "--no-prefill", negatable = false,
            description = "Embedded target: do not write every block before a workload that reads "
                    + "(unwritten blocks carry an escape tuple, so their PI checks are skipped).")
    boolean noPrefill;

    @Option(names = "--metrics", paramLabel = "HOST:PORT",
            description = "Serve Prometheus metrics as serve --metrics does: the embedded target's, and the PI "
                    + "errors this host catches (where=\"host\"); with --target this host's alone (a bare PORT "
                    + "listens on 127.0.0.1; default: off).")
    String metrics;

    @Option(names = "--metrics-latency-sample", paramLabel = "N", defaultValue = "8",
            description = "With --metrics: time one request in N for the latency histogram, as serve does "
                    + "(default: ${DEFAULT-VALUE}; 1: every request).")
    int metricsLatencySample;

    @Option(names = "--plot", paramLabel = "FILE",
            description = "Also write an SVG picture of the runs to FILE: latency by percentile (log tail) and "
                    + "IOPS per second, one line per transport and PI mode; it needs no network or script.")
    java.nio.file.Path plot;

    @Option(names = "--json", description = "Print one JSON object per transport on stdout (progress goes to stderr).")
    boolean json;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        // the transports' records (a reconnect, say) at the chosen level, on stderr
        new ServerLog(err, logLevel.level()).applyToTransports();
        if (transport == null) {
            if (target != null) {
                // local reaches only a target in this process: a remote one would be "no local target listens"
                throw CliException.usage("--target " + target + " needs --transport tcp or rdma "
                        + "(the default, local, reaches only the embedded target)");
            }
            transport = "local";
        }
        if (rw == null) {
            if (target != null) {
                // the default randrw would overwrite a real volume with random data without a word
                throw CliException.usage("--target " + target + " needs an explicit --rw: randread and read leave "
                        + "volume " + volume + " as it is, randrw, randwrite, write and verify overwrite it");
            }
            rw = "randrw";
        }
        if (target != null && transport.equals("all")) {
            throw CliException.usage("--transport all runs every transport on its embedded target; with --target "
                    + target + " name the transport that reaches it: --transport tcp or rdma");
        }
        if (target != null && (transport.equals("tcp") || transport.equals("rdma"))) {
            checkTarget(target); // the network transports' addresses; local's are names
        }
        BenchOptions o = new BenchOptions();
        List<BenchOptions.PiMode> modes;
        try {
            o.connectTimeoutMillis = millis(connectTimeout);
            if (target == null && (size < bs || size % sizes.data() != 0)) {
                throw new IllegalArgumentException("--size must be a whole number of " + sizes.data()
                        + "-byte blocks and at least --bs " + bs + ", not " + size);
            }
            if (target == null && bs > 0 && size / bs < (long) qd * queues) {
                throw new IllegalArgumentException("--size " + size + " holds " + size / bs + " requests of --bs " + bs
                        + ", fewer than the " + (long) qd * queues + " in flight (--qd x --queues)");
            }
            o.target = target;
            o.volume = volume;
            o.rw = BenchOptions.Rw.parse(rw);
            modes = BenchOptions.PiMode.parseList(pi);
            o.pi = modes.get(0);
            if (rounds < 1 || rounds > 1000) {
                throw new IllegalArgumentException("--rounds must be 1 to 1000, not " + rounds);
            }
            o.blockSize = bs;
            o.queueDepth = qd;
            o.queues = queues;
            o.seconds = seconds;
            o.rampSeconds = ramp;
            o.sizeBytes = size;
            // the volume is created if absent, the directory is not: a mistyped --data would bench a new one
            o.dataDir = data == null ? null : DataDirOption.requireExisting(data);
            o.prefill = !noPrefill;
            o.metrics = metrics;
            o.metricsLatencySample = TargetStats.checkLatencySample("--metrics-latency-sample", metricsLatencySample);
            if (plot != null) {
                java.nio.file.Path dir = plot.toAbsolutePath().getParent();
                if (dir != null && !java.nio.file.Files.isDirectory(dir)) {
                    throw new IllegalArgumentException("--plot " + plot + ": no directory " + dir);
                }
            }
            o.cacheBytes = cache;
            if (cache > 0 && data == null) {
                throw new IllegalArgumentException("--cache needs --data: the memory volume is its own cache");
            }
            BlockFormat f = BlockFormat.of(sizes.data(), sizes.meta());
            if (guard != null) f = f.withGuard(guard);
            if (type != null) f = f.withType(PiType.of(type));
            o.format = f;
            o.validate();
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
        PrintWriter progressWriter = json ? err : out;
        PrintStream progress = new PrintStream(new WriterStream(progressWriter), true, StandardCharsets.UTF_8);
        TransportOptions settings = transportOptions.resolve(config);
        o.transportOptions = settings;
        progressWriter.println(GuardPath.describe()); // which guard path PI takes here, and why
        String tls = transport.equals("tcp") || transport.equals("all") ? TlsLine.tcp(settings) : null;
        if (tls != null) {
            progressWriter.println(tls);
        }
        progressWriter.flush();
        List<String> names = new ArrayList<>();
        List<BenchResult> results = new ArrayList<>();
        if (transport.equals("all")) {
            for (BlockTransportProvider p : Transports.all()) {
                if (p.availability(settings).isAvailable()) {
                    names.add(p.name());
                } else {
                    BenchResult r = new BenchResult();
                    r.transport = p.name();
                    r.unavailableCause = p.availability(settings).cause();
                    results.add(r);
                }
            }
        } else {
            try {
                Transports.find(transport, settings);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            names.add(transport);
        }
        // Ctrl-C or SIGTERM: the run ends, the summary of what ran is printed, the exit code is its own
        Runnable restoreSignals = ServeReadiness.onStopSignals(() -> o.interrupted.set(true));
        try {
            return runAll(o, names, results, modes, out, err, progress);
        } finally {
            restoreSignals.run();
        }
    }

    private int runAll(BenchOptions o, List<String> names, List<BenchResult> results, List<BenchOptions.PiMode> modes,
                       PrintWriter out, PrintWriter err, PrintStream progress) throws Exception {
        boolean bad = false;
        boolean ioErrors = false;
        boolean sideBySide = modes.size() > 1 || rounds > 1;
        List<PiComparison> comparisons = new ArrayList<>();
        for (String name : names) {
            if (o.interrupted.get()) {
                break;
            }
            List<BenchResult> rs;
            try {
                rs = new BenchRunner(o, progress).runSideBySide(name, modes, rounds);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            } catch (DataDirInUseException e) {
                throw VolumeCommand.inUse(e, "stop it, or bench its volumes with --target HOST:PORT");
            }
            results.addAll(rs);
            for (BenchResult r : rs) {
                bad |= r.piErrors() > 0 || r.dataMismatches > 0;
                ioErrors |= r.ioErrors > 0;
                if (!json) {
                    out.println(r.summary());
                }
            }
            if (sideBySide) {
                PiComparison c = PiComparison.of(rs);
                comparisons.add(c);
                if (!json) {
                    out.println(c.summary());
                }
            }
        }
        if (json) {
            for (BenchResult r : results) {
                out.println(r.toJson());
            }
            for (PiComparison c : comparisons) {
                out.println(c.toJson());
            }
        } else if (results.size() > 1 && !sideBySide) {
            out.println(table(results));
        }
        if (plot != null) {
            writePlot(results);
            (json ? err : out).println("plot: " + plot);
        }
        if (o.interrupted.get()) {
            err.println("pistore bench: interrupted; the results above cover the time it ran");
        }
        out.flush();
        err.flush();
        return bad ? ExitCodes.BAD_BLOCKS : ioErrors ? ExitCodes.FAILURE : ExitCodes.OK;
    }

    /** Each element of --target is HOST:PORT with a port of 1 to 65535 (a bare host is a usage error, not an I/O error). */
    static void checkTarget(String target) {
        for (String a : target.split(",", -1)) {
            int colon = a.lastIndexOf(':');
            String port = colon < 0 ? "" : a.substring(colon + 1);
            boolean ok = colon > 0 && port.matches("\\d{1,5}") && Integer.parseInt(port) >= 1
                    && Integer.parseInt(port) <= 65535;
            if (!ok) {
                throw CliException.usage("--target " + target + ": expected HOST:PORT with a port of 1 to 65535, not '"
                        + a + "'");
            }
        }
    }

    /** {@code 10s}, {@code 500ms}, or a bare number of seconds, 0 to 3600 s. */
    static long millis(String d) {
        String s = d.strip().toLowerCase(Locale.ROOT);
        long m;
        try {
            m = s.endsWith("ms") ? Long.parseLong(s.substring(0, s.length() - 2).strip())
                    : Math.multiplyExact(Long.parseLong(s.endsWith("s") ? s.substring(0, s.length() - 1).strip() : s),
                    1000L);
        } catch (NumberFormatException | ArithmeticException e) {
            m = -1;
        }
        if (m < 0 || m > 3_600_000) {
            throw new IllegalArgumentException("--connect-timeout must be a duration of 0 to 3600 s (10s, 500ms), not '"
                    + d + "'");
        }
        return m;
    }

    private void writePlot(List<BenchResult> results) throws java.io.IOException {
        String title = String.format(Locale.ROOT, "pistore bench: rw=%s bs=%d qd=%d queues=%d, %d s per run%s", rw, bs,
                qd, queues, seconds, rounds > 1 ? ", " + rounds + " rounds" : "");
        java.nio.file.Files.writeString(plot, BenchPlot.svg(title, results), StandardCharsets.UTF_8);
    }

    static String table(List<BenchResult> results) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "%n%-8s %10s %10s %9s %9s %9s %9s %9s %10s%n", "transport", "iops",
                "MiB/s", "p50_us", "p99_us", "p999_us", "pi_err", "io_err", "mismatch"));
        for (BenchResult r : results) {
            if (r.unavailableCause != null) {
                sb.append(String.format(Locale.ROOT, "%-8s unavailable: %s%n", r.transport, r.unavailableCause));
            } else {
                sb.append(String.format(Locale.ROOT, "%-8s %10.0f %10.1f %9.1f %9.1f %9.1f %9d %9d %10d%n", r.transport,
                        r.iops, r.mibPerSec, r.p50us, r.p99us, r.p999us, r.piErrors(), r.ioErrors, r.dataMismatches));
            }
        }
        return sb.toString();
    }

    /** Bridges the runner's PrintStream to the command's writer. */
    private static final class WriterStream extends OutputStream {
        private final PrintWriter w;

        WriterStream(PrintWriter w) {
            this.w = w;
        }

        @Override
        public void write(int b) {
            w.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            w.write(new String(b, off, len, StandardCharsets.UTF_8));
        }

        @Override
        public void flush() {
            w.flush();
        }
    }
}
