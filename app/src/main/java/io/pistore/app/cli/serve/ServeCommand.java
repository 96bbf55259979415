package io.pistore.app.cli.serve;

import io.pistore.app.cli.volume.VolumeCommand;
import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ConfigOption;
import io.pistore.app.cli.DataDirOption;
import io.pistore.app.cli.ExitCodes;
import io.pistore.app.cli.LogLevel;
import io.pistore.app.cli.LogLevelOption;
import io.pistore.app.cli.Numbers;
import io.pistore.app.cli.PermissionProblem;
import io.pistore.app.cli.ReplicaOptions;
import io.pistore.app.cli.ServerLog;
import io.pistore.app.cli.TransportOptionsOption;
import io.pistore.app.bench.TargetAddress;
import io.pistore.engine.Transports;
import io.pistore.frontend.iscsi.IscsiServer;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.engine.stats.TargetStats;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.server.PistoreServer;
import io.pistore.server.metrics.MetricsWebConfig;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.TransportOptions;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Consumer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code pistore serve}: the target daemon. */
@Command(name = "serve", sortOptions = false,
        description = {"Serves the volumes of a data directory over a transport until SIGINT or SIGTERM.",
            "Listens on 127.0.0.1 unless --listen says otherwise; logs one line per connection.",
            "--nbd also exports every volume over NBD (docs/NBD.md): in-process through the local transport, "
                + "or, with --target, the volumes of a remote target reached through --transport. With --nbd and "
                + "no --target, the transport listener runs only when --listen or --transport is given."})
public final class ServeCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ConfigOption config;

    @Mixin
    DataDirOption data;

    @Mixin
    TransportOptionsOption transportOptions;

    @Mixin
    ReplicaOptions replica;

    @Mixin
    TlsOptions tls;

    @Mixin
    LogLevelOption logLevel;

    @Mixin
    ServeReadiness readiness;

    /** The transport settings of the config file and the command line, checked. */
    private TransportOptions settings;

    @Option(names = "--transport", paramLabel = "NAME", defaultValue = "tcp",
            description = "Transport to serve on (default: ${DEFAULT-VALUE}; config key: transport).")
    String transport;

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = "127.0.0.1:4430",
            description = "Address to listen on; a bare PORT listens on 127.0.0.1 (default: ${DEFAULT-VALUE}; "
                    + "config key: listen).")
    String listen;

    @Option(names = "--cache", paramLabel = "BYTES", defaultValue = "0", converter = Numbers.LongSizeConverter.class,
            description = "Read cache of hot blocks and their PI per volume, e.g. 256m (default: none; config key: cache).")
    long cache;

    @Option(names = "--nbd", paramLabel = "HOST:PORT", arity = "0..1", fallbackValue = "127.0.0.1:10809",
            description = "Export the volumes over NBD on this address (bare --nbd: ${FALLBACK-VALUE}; host "
                    + "127.0.0.1 when only a port is given; config key: nbd).")
    String nbd;

    @Option(names = "--iscsi", paramLabel = "HOST:PORT", arity = "0..1", fallbackValue = "127.0.0.1:3260",
            description = "Serve every volume as an iSCSI target iqn.2026-12.io.pistore:VOLUME, LUN 0, on this address "
                    + "(bare --iscsi: ${FALLBACK-VALUE}; docs/ISCSI.md).")
    String iscsi;

    @Option(names = "--target", paramLabel = "HOST:PORT[,HOST:PORT...]",
            description = "With --nbd: export the volumes of the target at this address, reached through "
                    + "--transport, instead of local volumes; over tcp and rdma a list of peers serving the same "
                    + "volumes (a replicated volume's), failing over to the next when one is lost "
                    + "(config key: target).")
    String target;

    @Option(names = "--metrics", paramLabel = "HOST:PORT",
            description = "Serve Prometheus metrics (requests, latency, PI errors, connections, JVM) at "
                    + "http://HOST:PORT/metrics; a bare PORT listens on 127.0.0.1 (default: off; config key: "
                    + "metrics; docs/OPERATIONS.md).")
    String metrics;

    @Option(names = "--metrics-latency-sample", paramLabel = "N", defaultValue = "8",
            description = "With --metrics: time one request in N, picked at random, for the latency histogram "
                    + "(every request is counted); 1 times every request, at two clock reads each "
                    + "(default: ${DEFAULT-VALUE}).")
    int metricsLatencySample;

    @Option(names = {"--metrics-web-config", "--web.config.file"}, paramLabel = "FILE",
            description = "With --metrics: TLS and basic authentication from a web-config file in the Prometheus "
                    + "exporter toolkit's format (tls_server_config, basic_auth_users; docs/SECURITY.md; config key: "
                    + "metrics-web-config).")
    java.nio.file.Path metricsWebConfig;

    @Option(names = "--memory-volume", paramLabel = "NAME:SIZE[:DATA+META]",
            description = "Serve an in-memory volume (repeatable; format 4096+8 Type 1 by default) instead of "
                    + "the volumes of --data; its content is lost at exit.")
    List<String> memoryVolumes = new ArrayList<>();

    @Mixin
    ServeNbdOptions nbdOptions;

    @Mixin
    IscsiServeOptions iscsiOptions;

    @Mixin
    ServeScrubOptions scrubOptions;

    @Option(names = "--strict-permissions",
            description = "Refuse to start when the data directory or a volume's files give group or others "
                    + "access (default: one warning line each; docs/SECURITY.md).")
    boolean strictPermissions;

    private ServerLog serverLog;

    /** Set when an interrupt stopped the server; restored on the thread once everything is closed. */
    private boolean interrupted;

    /** Counted down when call() has closed and flushed everything; the signal hook waits for it. */
    private final CountDownLatch finished = new CountDownLatch(1);

    @Override
    public Integer call() throws Exception {
        if (readiness.launchesDaemon()) {
            return ServeDaemon.launch(spec, daemonLog(), spec.commandLine().getOut(), spec.commandLine().getErr());
        }
        try {
            return serve();
        } finally {
            readiness.stopped();
            finished.countDown();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private Integer serve() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (target != null && nbd == null) {
            throw CliException.usage("--target needs --nbd: it names the target whose volumes NBD exports");
        }
        if (target != null && !memoryVolumes.isEmpty()) {
            throw CliException.usage("--memory-volume serves local volumes; it cannot be combined with --target");
        }
        try {
            TargetStats.checkLatencySample("--metrics-latency-sample", metricsLatencySample);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
        nbdOptions.checkRanges();
        if (nbd != null) {
            try {
                NbdServer.parseAddress(nbd);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
        }
        try {
            IscsiServer.parseAddress(iscsi == null ? "" : iscsi);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
        if (metricsWebConfig != null && metrics == null) {
            throw CliException.usage("--metrics-web-config needs --metrics: it sets up the metrics endpoint");
        }
        if (strictPermissions && memoryVolumes.isEmpty() && target == null) {
            PermissionProblem.requirePrivate(data.existing());
        }
        boolean listens = target == null && (nbd == null || given("--listen") || given("--transport"));
        settings = transportOptions.resolve(config);
        settings = nbdOptions.withTcpAccess(settings, listens, transport);
        settings = withTcpTlsEngine(settings);
        nbdOptions.resolve(tls, nbd != null);
        CountDownLatch stop = new CountDownLatch(1);
        serverLog = new ServerLog(out, logLevel.level());
        serverLog.applyToTransports();
        Consumer<String> log = serverLog.at(LogLevel.INFO);
        boolean replicated = replica.id != null || replica.listen != null;
        if (replicated && replica.listen == null) {
            throw CliException.usage("--replica-id needs --replica-listen: the address the volumes' peer lists name");
        }
        if (replicated && !memoryVolumes.isEmpty()) {
            throw CliException.usage("--memory-volume cannot be combined with replicated volumes (--replica-listen)");
        }
        if (replicated && target != null) {
            throw CliException.usage("--target exports another target's volumes; replicated volumes are served by the "
                    + "serve of each of their peers");
        }
        PistoreServer.Builder b = PistoreServer.builder().transportOptions(settings).log(log)
                .metricsLatencySample(metricsLatencySample).nbdQueues(nbdOptions.queues);
        if (metrics != null) {
            b.metrics(metrics);
            if (metricsWebConfig != null) {
                try {
                    b.metricsWebConfig(MetricsWebConfig.read(metricsWebConfig));
                } catch (IllegalArgumentException e) {
                    throw CliException.usage("cannot serve metrics on " + metrics + ": " + e.getMessage());
                }
            }
        }
        if (nbd != null) {
            b.nbd(nbd, nbdOptions.serverOptions(target != null && target.contains(","),
                    target != null && !target.contains(","), log, serverLog.at(LogLevel.DEBUG)));
        }
        if (scrubOptions.every != null && target != null) {
            throw CliException.usage("--scrub-every scrubs this serve's volumes; one that exports --target's has none");
        }
        scrubOptions.apply(b);
        IscsiServer.Options iscsiOpts = iscsiOptions.options(iscsi != null, nbdOptions.accessFile, log);
        if (iscsi != null) {
            b.iscsi(iscsi, iscsiOpts);
        }
        BlockTransportProvider p = null;
        if (target != null) {
            p = find(transport);
            try {
                TargetAddress.check(p, target);
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            b.nbdTarget(transport, target);
        } else {
            if (listens) {
                p = find(transport);
                b.listen(transport, StartupLines.withHost(listen));
            }
            if (replicated) {
                b.replica(replica.id("with --replica-listen"), replica.host(), replica.port());
            }
            for (String m : memoryVolumes) {
                memoryVolume(b, m);
            }
        }
        PistoreServer server;
        if (target == null && memoryVolumes.isEmpty()) {
            // Opened here, so that a directory another process owns is one usage line naming it.
            VolumeStore store = VolumeCommand.open(data, cache, spec,
                    "stop it, or export its volumes with --nbd --target HOST:PORT");
            try {
                server = b.dataDir(data.dir).volumes(store).build();
            } catch (IllegalArgumentException e) {
                store.close();
                throw CliException.usage(e.getMessage());
            }
        } else {
            try {
                server = b.build();
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
        }
        try (server) {
            try {
                server.start();
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            new ServeStartReport(out, spec.commandLine().getErr(), settings, nbdOptions, target,
                    memoryVolumes.isEmpty() ? data.dir : null, iscsiOptions.described()).print(server, p);
            scrubOptions.describe(out);
            // Every listener is up: the single point where the server is ready.
            out.flush();
            awaitStop(stop); // says it is ready once SIGTERM and SIGINT stop it cleanly
            if (server.nbd() != null) {
                out.println("pistore serve: stopping NBD");
            }
            if (server.volumes() != null) {
                out.println("pistore serve: stopping; flushing volumes");
            }
            out.flush();
        }
        out.println("pistore serve: stopped");
        return ExitCodes.OK;
    }

    /** Where a --daemon server logs: --log-file, else serve.log in --data (which must exist) or, without one, here. */
    private java.nio.file.Path daemonLog() {
        if (readiness.logFile != null) {
            return readiness.logFile;
        }
        return memoryVolumes.isEmpty() && target == null ? DataDirOption.requireExisting(data.dir).resolve("serve.log")
                : java.nio.file.Path.of("serve.log");
    }

    /**
     * --tls-engine for the tcp transport too, as tcp.tlsEngine, when its TLS runs on certificates (one
     * switch for every listener and connection of this serve); naming it both ways is a mistake, even alike.
     */
    private TransportOptions withTcpTlsEngine(TransportOptions s) {
        io.pistore.security.tls.TlsEngine e = tls.engine();
        if (e == null || !"true".equalsIgnoreCase(s.asMap().get("tcp.tls")) || s.asMap().containsKey("tcp.tlsPsk")) {
            return s; // pre-shared keys run on Bouncy Castle's TLS, not on an engine
        }
        if (s.asMap().containsKey("tcp.tlsEngine")) {
            throw CliException.usage("--tls-engine and tcp.tlsEngine name the tcp TLS engine twice; give one");
        }
        return s.with("tcp.tlsEngine", e.label());
    }

    /** Whether {@code option} was on the command line (not a default or the config file's). */
    private boolean given(String option) {
        return spec.commandLine().getParseResult().hasMatchedOption(option);
    }

    /** The transport of that name; bad settings (a TLS file that cannot be used, say) are one usage line. */
    private BlockTransportProvider find(String name) {
        try {
            return Transports.find(name, settings);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
    }

    /** {@code NAME:SIZE[:DATA+META]}: one more memory volume for the server. */
    private static void memoryVolume(PistoreServer.Builder b, String spec) {
        String[] parts = spec.split(":", -1);
        try {
            if (parts.length < 2 || parts.length > 3) {
                throw new IllegalArgumentException("expected NAME:SIZE[:DATA+META], not '" + spec + "'");
            }
            BlockFormat f = parts.length == 3 ? BlockFormat.parse(parts[2]) : BlockFormat.of(4096, 8);
            long bytes = Numbers.parseSize(parts[1]);
            if (bytes <= 0 || bytes % f.dataSize() != 0) {
                throw new IllegalArgumentException("size of " + parts[0] + " must be a positive multiple of "
                        + f.dataSize() + " bytes, not " + parts[1]);
            }
            b.memoryVolume(parts[0], f, bytes / f.dataSize());
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--memory-volume: " + e.getMessage());
        }
    }

    /**
     * Waits for SIGINT/SIGTERM, or for an interrupt of the serving thread (how a program that runs
     * {@code serve} in a thread of its own stops it). The signal's hook lets the JVM exit only after
     * call() has stopped the servers and flushed the volumes (at most 15 s). The interrupt status is
     * put back only once all is closed: set, it would make the volumes' file channels refuse the
     * final flush.
     */
    private void awaitStop(CountDownLatch stop) throws InterruptedException {
        Thread hook = new Thread(() -> {
            stop.countDown();
            try {
                finished.await(15, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "pistore-serve-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        Runnable restoreSignals = ServeReadiness.onStopSignals(stop::countDown);
        readiness.ready(spec.commandLine().getOut(), serverLog.at(LogLevel.WARN));
        try {
            stop.await();
        } catch (InterruptedException e) {
            interrupted = true;
        } finally {
            restoreSignals.run();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the JVM is already stopping: the hook ran
            }
        }
    }
}
