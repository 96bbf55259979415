package io.pistore.app.cli;

import io.pistore.app.bench.TargetAddress;
import io.pistore.engine.Transports;
import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.frontend.iscsi.IscsiServer;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.frontend.nbd.NbdTls;
import io.pistore.security.access.AccessRules;
import io.pistore.security.tls.PskKeys;
import io.pistore.security.tls.TlsContext;
import io.pistore.engine.stats.TargetStats;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardPath;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.server.PistoreServer;
import io.pistore.server.metrics.MetricsWebConfig;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.TransportOptions;
import io.pistore.spi.VolumeInfo;
import java.io.IOException;
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
final class ServeCommand implements Callable<Integer> {
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

    /** The loaded server TLS material, or null without --tls-cert. */
    private TlsContext tlsContext;

    /** The loaded pre-shared keys of NBD TLS, or null without --tls-psk. */
    private PskKeys pskKeys;

    /** The NBD access rules, or null without --access or --nbd-access. */
    private AccessRules access;

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

    @Option(names = "--nbd-tls", paramLabel = "off|on|require",
            description = "NBD_OPT_STARTTLS: off refuses it, on lets each client choose, require refuses every "
                    + "export to a client that did not start TLS (default: require with --tls-cert or --tls-psk, "
                    + "else off; config key: nbd-tls).")
    String nbdTls;

    @Option(names = "--access", paramLabel = "FILE",
            description = "Which volumes each client may use, read-write or read-only, by its certificate (CN or "
                    + "subjectAltName; on NBD also its --tls-psk identity), on every listener: NBD (needs --tls-verify-client) and the tcp transport "
                    + "(sets tcp.access: needs tcp.tls and tcp.tlsVerifyClient); docs/SECURITY.md; config key: access.")
    java.nio.file.Path accessFile;

    @Option(names = "--nbd-access", paramLabel = "FILE",
            description = "As --access, for the NBD listener only; on NBD a client is also known by its pre-shared "
                    + "key identity with --tls-psk (config key: nbd-access).")
    java.nio.file.Path nbdAccess;

    @Option(names = "--nbd-queues", paramLabel = "N", defaultValue = "1",
            description = "Queues of the NBD frontend's connection to the volumes (default: ${DEFAULT-VALUE}).")
    int nbdQueues;

    @Option(names = "--nbd-spin-us", paramLabel = "MICROS", defaultValue = "${sys:pistore.nbd.spinMicros:-100}",
            description = "Longest an NBD connection's thread polls for the client's next request before it "
                    + "blocks; adapts to the gaps between requests, yields the CPU, stops when idle; 0: never polls "
                    + "(default: ${DEFAULT-VALUE}, or -Dpistore.nbd.spinMicros).")
    long nbdSpinMicros;

    @Option(names = "--nbd-resend-ms", paramLabel = "MILLIS", defaultValue = "30000",
            description = "How long the NBD frontend sends a request again, every 100 ms, after its connection to "
                    + "the target was lost (until the host has reconnected, to the same or the next peer of "
                    + "--target) before the client gets EIO; flushes only with a list of peers; 0: EIO at once "
                    + "(default: ${DEFAULT-VALUE}).")
    long nbdResendMillis;

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
            new TargetStats(metricsLatencySample);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--metrics-latency-sample: " + e.getMessage());
        }
        if (nbdQueues < 1 || nbdQueues > 64) {
            throw CliException.usage("--nbd-queues must be 1 to 64, not " + nbdQueues);
        }
        if (nbdSpinMicros < 0 || nbdSpinMicros > NbdServer.MAX_SPIN_MICROS) {
            throw CliException.usage("--nbd-spin-us must be 0 to " + NbdServer.MAX_SPIN_MICROS + ", not " + nbdSpinMicros);
        }
        if (nbdResendMillis < 0 || nbdResendMillis > 3_600_000) {
            throw CliException.usage("--nbd-resend-ms must be 0 to 3600000, not " + nbdResendMillis);
        }
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
        settings = transportOptions.resolve(config);
        settings = withTcpAccess(settings);
        settings = withTcpTlsEngine(settings);
        tlsContext = tls.serverContext();
        pskKeys = tls.pskKeys();
        nbdTlsMode();
        access = nbdAccess();
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
                .metricsLatencySample(metricsLatencySample).nbdQueues(nbdQueues);
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
            b.nbd(nbd, nbdOptions(log));
        }
        if (iscsi != null) {
            b.iscsi(iscsi, new IscsiServer.Options().log(log));
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
            if (nbd == null || given("--listen") || given("--transport")) {
                p = find(transport);
                b.listen(transport, StartupLines.withHost(listen));
            }
            if (replicated) {
                b.replica(replica.id("with --replica-listen"), replica.host(), replica.port());
            }
            if (memoryVolumes.isEmpty()) {
                b.dataDir(data.dir);
            }
        }
        VolumeStore store = target != null ? null : openStore();
        PistoreServer server;
        try {
            server = b.volumes(store).build();
        } catch (IllegalArgumentException e) {
            if (store != null) {
                store.close();
            }
            throw CliException.usage(e.getMessage());
        }
        try (server) {
            try {
                server.start();
            } catch (IllegalArgumentException e) {
                throw CliException.usage(e.getMessage());
            }
            printStarted(out, server, p);
            // Every listener is up: the single point where the server is ready.
            out.flush();
            awaitStop(stop); // says it is ready once SIGTERM and SIGINT stop it cleanly
            if (server.nbd() != null) {
                out.println("pistore serve: stopping NBD");
            }
            if (store != null) {
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

    /** The NBD frontend's options from the command line (the server sets the largest transfer). */
    private NbdServer.Options nbdOptions(Consumer<String> log) {
        // flushes are sent again only to the peers of a replicated volume (a list): they acknowledge
        // a write once a quorum's log holds it, where a single restarted target may have lost it
        NbdServer.Options o = new NbdServer.Options().spinMicros(nbdSpinMicros).resendMillis(nbdResendMillis)
                .resendFlushes(target != null && target.contains(","));
        if (pskKeys != null) {
            o.tls(nbdTlsMode(), pskKeys);
        } else {
            o.tls(nbdTlsMode(), tlsContext);
        }
        return o.access(access).log(log).debugLog(serverLog.at(LogLevel.DEBUG));
    }

    /** What listens now, where, and over which volumes: the lines an operator reads at start. */
    private void printStarted(PrintWriter out, PistoreServer server, BlockTransportProvider p) {
        if (server.metrics() != null) {
            out.println("pistore serve: metrics at " + server.metrics().url());
            out.flush();
            warnIfExposed("metrics", server.metrics().address(), server.metrics().tls(),
                    "reads every volume's name and figures");
        }
        VolumeStore store = server.volumes();
        if (store == null) {
            HostConnection hc = server.nbdConnection();
            out.println("pistore serve: " + hc.volumes().size() + " volume(s) of target " + target + " over "
                    + p.name());
            out.println("  " + GuardPath.describe());
            printNbd(out, server, "target " + target + " over " + p.name());
            return;
        }
        if (server.controlSocket() == null && server.controlProblem() != null) {
            out.println("pistore serve: no live volume changes: " + server.controlProblem());
        }
        ReplicaNode node = server.replica();
        if (node != null) {
            printReplicated(out, node, server.replicatedVolumes());
        }
        String from = memoryVolumes.isEmpty() ? "from " + data.dir : "in memory";
        if (!server.listeners().isEmpty()) {
            TargetListener l = server.listeners().get(0).listener();
            out.println("pistore serve: " + store.list().size() + " volume(s) " + from + " on "
                    + StartupLines.where(p.name(), l.address()));
            if (!settings.isEmpty()) {
                out.println("  transport options: " + settings);
            }
            String tlsLine = p.name().equals("tcp") ? TlsLine.tcp(settings) : null;
            if (tlsLine != null) {
                out.println("  " + tlsLine);
            }
            if (!p.name().equals(LocalTransportProvider.NAME)) {
                warnIfExposed(p.name() + " transport", listenerAddress(l), transportTls(p));
            }
            TransportCapabilities caps = p.capabilities(settings);
            if (!caps.hardwareGuards().isEmpty()) {
                out.println("  " + StartupLines.offload(p.name(), caps.hardwareGuards()));
            }
        } else {
            out.println("pistore serve: " + store.list().size() + " volume(s) " + from);
        }
        out.println("  " + GuardPath.describe());
        if (server.controlSocket() != null) {
            out.println("  volumes change live: pistore volume create|resize|delete --data " + data.dir);
        }
        for (Volume v : store.list()) {
            out.println("  " + v.name() + " " + v.blockCount() + " blocks " + v.format());
        }
        if (server.nbd() != null) {
            printNbd(out, server, "in-process (local transport)");
        }
        if (server.iscsi() != null) {
            java.net.InetSocketAddress a = server.iscsi().address();
            out.println("pistore serve: iSCSI on " + a.getAddress().getHostAddress() + ":" + a.getPort() + ", targets "
                    + IscsiServer.IQN_PREFIX + "VOLUME, LUN 0");
        }
    }

    /** The replica peer and the replicated volumes it serves here, with a warning where a peer list misnames it. */
    private static void printReplicated(PrintWriter out, ReplicaNode node, List<ReplicatedVolume> volumes) {
        out.println("pistore serve: replica " + node.id() + " on " + node.peer().getAddress() + ", "
                + node.volumeNames().size() + " replicated volume(s)");
        String here = node.peer().getAddress();
        for (ReplicatedVolume v : volumes) {
            String name = v.name();
            out.println("  " + name + " replicated on " + ReplicaPeers.describe(v.group().getPeers().stream().toList()));
            v.group().getPeers().stream().filter(m -> m.getId().toString().equals(node.id())).findFirst()
                    .filter(m -> !m.getAddress().equals(here))
                    .ifPresent(m -> out.println("  warning: the peers of " + name + " name " + node.id() + " at "
                            + m.getAddress() + ", but it listens on " + here + ": they cannot reach it"));
        }
    }

    private void printNbd(PrintWriter out, PistoreServer s, String via) {
        NbdServer server = s.nbd();
        HostConnection hc = s.nbdConnection();
        boolean everywhere = server.address().getAddress().isAnyLocalAddress();
        // A wildcard address is no address a client can use: name loopback, which reaches it from here.
        String host = everywhere ? "127.0.0.1" : server.address().getAddress().getHostAddress();
        String hostPort = (host.contains(":") ? "[" + host + "]" : host) + ":" + server.address().getPort();
        NbdTls mode = nbdTlsMode();
        out.println("pistore serve: NBD on " + (everywhere ? "every address, port " + server.address().getPort()
                : hostPort) + ", " + via + ", " + hc.volumes().size() + " export(s)"
                + (mode == NbdTls.OFF ? "" : ", TLS " + mode + " ("
                        + (pskKeys != null ? "pre-shared keys " + pskKeys : tlsContext) + ")")
                + (access == null ? "" : ", " + access.size() + " access rule(s) from " + nbdAccessFile()));
        String scheme = mode == NbdTls.REQUIRE ? "nbds" : "nbd";
        for (VolumeInfo v : hc.volumes()) {
            out.println("  " + scheme + "://" + hostPort + "/" + v.name() + "  " + v.dataBytes() + " bytes  "
                    + v.format());
        }
        out.flush();
        warnIfExposed("NBD", server.address(), mode == NbdTls.REQUIRE);
    }

    /** The access file of the NBD listener: --nbd-access, else --access. */
    private java.nio.file.Path nbdAccessFile() {
        return nbdAccess != null ? nbdAccess : accessFile;
    }

    /**
     * --access for the transport's listener: the same file as tcp.access, when this serve listens on
     * tcp (a serve that exports another target's volumes over NBD has no transport listener).
     */
    private TransportOptions withTcpAccess(TransportOptions s) {
        if (accessFile == null) {
            return s;
        }
        if (nbdAccess != null) {
            throw CliException.usage("--access and --nbd-access name the NBD rules twice; give one");
        }
        boolean listens = target == null && (nbd == null || given("--listen") || given("--transport"));
        if (!listens) {
            return s;
        }
        if (transport.equals("rdma")) {
            throw CliException.usage("--access: the rdma transport has no access rules, so its listener would let "
                    + "every host use every volume; serve NBD and tcp only, or drop --access");
        }
        if (!transport.equals("tcp")) {
            return s;
        }
        if (s.asMap().containsKey("tcp.access")) {
            throw CliException.usage("--access and tcp.access name the tcp rules twice; give one");
        }
        return s.with("tcp.access", accessFile.toString());
    }

    /**
     * --tls-engine for the tcp transport too, as tcp.tlsEngine, when its TLS is on (one switch for
     * every listener and connection of this serve); naming it both ways is a mistake, even alike.
     */
    private TransportOptions withTcpTlsEngine(TransportOptions s) {
        io.pistore.security.tls.TlsEngine e = tls.engine();
        if (e == null || !"true".equalsIgnoreCase(s.asMap().get("tcp.tls"))) {
            return s;
        }
        if (s.asMap().containsKey("tcp.tlsEngine")) {
            throw CliException.usage("--tls-engine and tcp.tlsEngine name the tcp TLS engine twice; give one");
        }
        return s.with("tcp.tlsEngine", e.label());
    }

    /** --nbd-access or --access, read and checked against the TLS settings; null without them or --nbd. */
    private AccessRules nbdAccess() {
        java.nio.file.Path file = nbdAccessFile();
        if (file == null || nbd == null && nbdAccess == null) {
            return null;
        }
        String option = nbdAccess != null ? "--nbd-access" : "--access";
        if (nbdTlsMode() != NbdTls.REQUIRE || pskKeys == null && !tlsContext.requiresClientCertificate()) {
            throw CliException.usage(option + " needs client certificates on NBD (--tls-cert, --tls-key, --tls-ca, "
                    + "--tls-verify-client) or pre-shared keys (--tls-psk), and --nbd-tls require");
        }
        try {
            return AccessRules.read(file);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
    }

    /** --nbd-tls, checked against the TLS material; require by default when there is a certificate. */
    private NbdTls nbdTlsMode() {
        if (nbdTls == null) {
            return tlsContext != null || pskKeys != null ? NbdTls.REQUIRE : NbdTls.OFF;
        }
        NbdTls m;
        try {
            m = NbdTls.parse(nbdTls);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--nbd-tls must be off, on or require, not '" + nbdTls + "'");
        }
        if (m != NbdTls.OFF && tlsContext == null && pskKeys == null) {
            throw CliException.usage("--nbd-tls " + m + " needs --tls-cert and --tls-key, or --tls-psk");
        }
        return m;
    }

    /**
     * One line on stderr when a listener that carries volume data in plaintext can be reached from
     * other machines: it says what is exposed and how to close it.
     */
    private void warnIfExposed(String what, java.net.InetSocketAddress bound, boolean encrypted) {
        warnIfExposed(what, bound, encrypted, "reads and writes every volume");
    }

    /** As above, saying what anyone who reaches the listener can do ({@code exposes}). */
    private void warnIfExposed(String what, java.net.InetSocketAddress bound, boolean encrypted, String exposes) {
        if (encrypted || bound.getAddress().isLoopbackAddress()) {
            return;
        }
        String host = bound.getAddress().getHostAddress();
        spec.commandLine().getErr().println("pistore serve: warning: " + what + " on "
                + (bound.getAddress().isAnyLocalAddress() ? "every address" : host) + " port " + bound.getPort()
                + " accepts clients without TLS: anyone who can reach it " + exposes
                + " (see docs/SECURITY.md)");
        spec.commandLine().getErr().flush();
    }

    /** The listener's address as a socket address (its string is HOST:PORT for the network transports). */
    private static java.net.InetSocketAddress listenerAddress(TargetListener l) {
        try {
            return NbdServer.parseAddress(l.address());
        } catch (IllegalArgumentException e) {
            return new java.net.InetSocketAddress("127.0.0.1", 0); // not a network address: nothing exposed
        }
    }

    /** Whether the transport's listener runs TLS (its {@code NAME.tls} setting, as tcp's). */
    private boolean transportTls(BlockTransportProvider p) {
        return "true".equalsIgnoreCase(settings.asMap().get(p.name() + ".tls"));
    }

    /** The transport of {@code p}; bad settings (a TLS file that cannot be used, say) are one usage line. */
    private boolean given(String option) {
        return spec.commandLine().getParseResult().hasMatchedOption(option);
    }

    private BlockTransportProvider find(String name) {
        try {
            return Transports.find(name, settings);
        } catch (IllegalArgumentException e) {
            throw CliException.usage(e.getMessage());
        }
    }

    private VolumeStore openStore() throws IOException {
        if (memoryVolumes.isEmpty()) {
            // A second serve of these volumes would write beside the first; NBD can reach them through it.
            return VolumeCommand.open(data, cache, spec, "stop it, or export its volumes with --nbd --target HOST:PORT");
        }
        VolumeStore s = VolumeStore.inMemory();
        try {
            for (String m : memoryVolumes) {
                createMemoryVolume(s, m);
            }
        } catch (IllegalArgumentException e) {
            s.close();
            throw CliException.usage("--memory-volume: " + e.getMessage());
        }
        return s;
    }

    /** {@code NAME:SIZE[:DATA+META]}. */
    private static void createMemoryVolume(VolumeStore s, String spec) throws IOException {
        String[] parts = spec.split(":", -1);
        if (parts.length < 2 || parts.length > 3) {
            throw new IllegalArgumentException("expected NAME:SIZE[:DATA+META], not '" + spec + "'");
        }
        BlockFormat f = parts.length == 3 ? BlockFormat.parse(parts[2]) : BlockFormat.of(4096, 8);
        long bytes = Numbers.parseSize(parts[1]);
        if (bytes <= 0 || bytes % f.dataSize() != 0) {
            throw new IllegalArgumentException("size of " + parts[0] + " must be a positive multiple of "
                    + f.dataSize() + " bytes, not " + parts[1]);
        }
        s.create(parts[0], f, bytes / f.dataSize());
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
