package io.pistore.server;

import io.pistore.engine.Transports;
import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.service.TargetThreads;
import io.pistore.engine.stats.TargetStats;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.frontend.iscsi.IscsiServer;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.server.control.ControlSocket;
import io.pistore.server.control.ReplicaJoiner;
import io.pistore.server.control.ServedVolumeUse;
import io.pistore.server.metrics.EngineCollector;
import io.pistore.server.metrics.MetricsEndpoint;
import io.pistore.server.metrics.MetricsWebConfig;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.TransportOptions;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.function.Consumer;

/**
 * A pistore server in one object: the volumes (of a data directory, in memory, or a given store),
 * their target service and its threads, transport listeners (found by name through
 * {@link Transports}), the NBD frontend, a replica peer, the metrics endpoint and the control socket.
 *
 * <pre>{@code
 * try (PistoreServer server = PistoreServer.builder()
 *         .dataDir(Path.of("/var/lib/pistore"))
 *         .listen("tcp", "127.0.0.1:4430")
 *         .nbd("127.0.0.1:10809")
 *         .build()
 *         .start()) {
 *     ...   // every listener is up: tell whoever waits for the server
 * }
 * }</pre>
 *
 * <p>{@link #start} returns once every listener listens, or throws after closing what it started;
 * {@link #close} closes everything in the reverse order of starting: NBD, the transport listeners,
 * then flushes the volumes, then the target service and its threads, the control socket, the volumes, the
 * replica peer and the metrics endpoint. From {@link #start} on, a server owns what it serves, a given
 * {@link VolumeStore} included; it starts once.
 *
 * <p>Errors of configuration (an unknown transport, an address in use, settings a transport
 * refuses) are {@link IllegalArgumentException}s with a one-line message naming what was asked;
 * {@link IOException}s are the volumes' or the peers'.
 */
public final class PistoreServer implements AutoCloseable {
    /** One transport listener of a started server. */
    public record Listening(BlockTransportProvider provider, TargetListener listener) {
        /** The transport's name ({@code tcp}, {@code rdma}, ...). */
        public String transport() {
            return provider.name();
        }

        /** Where hosts reach it, as the transport writes addresses ({@code HOST:PORT} for tcp). */
        public String address() {
            return listener.address();
        }
    }

    private final Builder b;
    private final TargetStats stats;
    private final EngineCollector collector;
    /** What to close, last started first. */
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final List<Listening> listeners = new ArrayList<>();
    private VolumeStore store;
    private ReplicaNode replica;
    private final List<ReplicatedVolume> replicated = new ArrayList<>();
    private ServedVolumeUse volumeUse;
    private ControlSocket control;
    private String controlProblem;
    private MetricsEndpoint metrics;
    private NbdServer nbd;
    private IscsiServer iscsi;
    private HostConnection nbdConnection;
    private boolean starting;
    private boolean closed;

    private PistoreServer(Builder b) {
        this.b = b;
        this.stats = new TargetStats(b.latencySample);
        this.collector = new EngineCollector(stats);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The directory of a data directory's replicas and Raft storage. */
    public static Path replicationDir(Path dataDir) {
        return dataDir.resolve("replication");
    }

    /**
     * Starts everything the builder names and returns once every listener is up. On a failure,
     * what had started is closed before the exception leaves.
     */
    public synchronized PistoreServer start() throws IOException {
        if (starting) {
            throw new IllegalStateException("a server starts once");
        }
        starting = true;
        try {
            startAll();
            return this;
        } catch (IOException | RuntimeException | Error e) {
            try {
                close();
            } catch (IOException | RuntimeException c) {
                e.addSuppressed(c);
            }
            throw e;
        }
    }

    private void startAll() throws IOException {
        if (b.metricsAddress != null) {
            try {
                metrics = opened(MetricsEndpoint.start(b.metricsAddress, collector, b.metricsWeb));
            } catch (IOException | IllegalArgumentException e) {
                throw new IllegalArgumentException("cannot serve metrics on " + b.metricsAddress + ": "
                        + message(e), e);
            }
        }
        if (b.nbdTarget != null) {
            startRemoteNbd();
            return;
        }
        if (b.replicaId != null) {
            try {
                replica = opened(ReplicaNode.start(b.replicaId, b.replicaHost, b.replicaPort,
                        replicationDir(b.dataDir), b.replicationSettings, b.log));
            } catch (IOException e) {
                String at = b.replicaHost + ":" + b.replicaPort;
                String m = e.getMessage();
                throw new IllegalArgumentException("cannot start replica " + b.replicaId
                        + (m != null && m.contains(at) ? "" : " on " + at) + ": " + m, e);
            }
        }
        store = opened(openStore());
        collector.add(store); // journal and cache figures, for the metrics
        if (b.dataDir != null) {
            volumeUse = opened(new ServedVolumeUse(store));
            if (b.controlSocket) {
                try {
                    control = opened(ControlSocket.start(b.dataDir, store, volumeUse, b.log));
                } catch (IOException e) {
                    controlProblem = e.getMessage();
                }
            }
        }
        if (replica != null) {
            attachReplicated();
            ReplicaJoiner joiner = new ReplicaJoiner(replica, store, b.log);
            if (control != null) {
                control.serveReplicas(joiner);
            }
            if (volumeUse != null) {
                replica.onReplicaGrown(volumeUse::changed); // every peer's iSCSI sessions hear of a growth
            }
        }
        if (b.scrubEvery != null) {
            collector.add(opened(io.pistore.server.scrub.PeriodicScrub.start(store, b.scrubEvery, b.scrubBytesPerSecond,
                    b.log)));
        }
        TargetThreads threads = opened(new TargetThreads());
        TargetService service = opened(new TargetService(store, b.log, threads));
        started.push(this::flushVolumes); // after the listeners close, before the volumes do
        for (String[] l : b.listens) {
            BlockTransportProvider p = find(l[0]);
            BlockTransport t = opened(create(p));
            TargetListener listener;
            try {
                listener = opened(t.listen(l[1], stats.measure(p.name(), service)));
            } catch (IOException | IllegalArgumentException e) {
                String m = message(e);
                // a transport's own message may already say it ("cannot listen on H:P: reason"): not twice
                throw new IllegalArgumentException(m.startsWith("cannot listen on ") ? m
                        : "cannot listen on " + l[1] + ": " + m, e);
            }
            listeners.add(new Listening(p, listener));
        }
        if (b.nbdAddress != null) {
            BlockTransportProvider local = find(LocalTransportProvider.NAME);
            BlockTransport lt = opened(local.create(b.transportOptions));
            TargetListener ll = opened(lt.listen(local.embeddedListenAddress(), stats.measure("nbd", service)));
            HostConnection hc = opened(lt.connect(ll.address(), new ConnectOptions(b.nbdQueues, 1024)));
            startNbd(hc, local);
        }
        if (b.iscsiAddress != null) {
            BlockTransportProvider local = find(LocalTransportProvider.NAME);
            BlockTransport lt = opened(local.create(b.transportOptions));
            TargetListener ll = opened(lt.listen(local.embeddedListenAddress(), stats.measure("iscsi", service)));
            HostConnection hc = opened(lt.connect(ll.address(), new ConnectOptions(2, 256)));
            if (b.dataDir != null) {
                b.iscsiOptions.reservationsDirectory(b.dataDir); // APTPL reservations beside the volumes
            }
            try {
                iscsi = opened(IscsiServer.start(b.iscsiAddress, hc, b.iscsiOptions));
            } catch (IOException | IllegalArgumentException e) {
                throw new IllegalArgumentException("cannot listen for iSCSI on " + b.iscsiAddress + ": " + message(e), e);
            }
            if (volumeUse != null) {
                volumeUse.iscsi(iscsi);
            }
            IscsiServer served = iscsi;
            collector.add(served); // its initiators' connections, for the metrics
            started.push(() -> collector.remove(served));
        }
    }

    /** NBD over the volumes of a remote target. */
    private void startRemoteNbd() throws IOException {
        BlockTransportProvider p = find(b.nbdTargetTransport);
        BlockTransport t = opened(create(p));
        HostConnection hc;
        try {
            hc = opened(t.connect(b.nbdTarget, new ConnectOptions(b.nbdQueues, 1024)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot reach target " + b.nbdTarget + " over " + p.name() + ": "
                    + e.getMessage(), e);
        } catch (IOException e) { // the target is unreachable: an I/O error, not a bad argument
            throw new IOException("cannot reach target " + b.nbdTarget + " over " + p.name() + ": " + e.getMessage(), e);
        }
        collector.add(hc, p.name());
        started.push(() -> collector.remove(hc));
        // with metrics: the PI errors this host's transport catches in what it reads (where="host")
        startNbd(b.metricsAddress != null ? stats.measureHost(p.name(), hc) : hc, p);
    }

    private void startNbd(HostConnection hc, BlockTransportProvider p) {
        int maxTransfer = Math.min(p.capabilities(b.transportOptions).maxTransferBytes(),
                TransportCapabilities.MAX_TRANSFER_BYTES);
        NbdServer.Options o = b.nbdOptions.maxTransferBytes(maxTransfer);
        if (b.nbdLogsToServerLog) {
            o.log(b.log);
        }
        try {
            nbd = NbdServer.start(b.nbdAddress, hc, o);
        } catch (IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException("cannot listen for NBD on " + b.nbdAddress + ": " + e.getMessage(), e);
        }
        nbdConnection = hc;
        NbdServer s = nbd;
        started.push(s);
        collector.add(s);
        started.push(() -> collector.remove(s));
        if (volumeUse != null) {
            volumeUse.nbd(s);
        }
    }

    private VolumeStore openStore() throws IOException {
        if (b.volumes != null) {
            return b.volumes;
        }
        if (b.dataDir != null) {
            return VolumeStore.open(b.dataDir, b.cacheBytes, b.owner);
        }
        VolumeStore s = VolumeStore.inMemory();
        try {
            for (Builder.MemoryVolume m : b.memoryVolumes) {
                s.create(m.name, m.format, m.blocks);
            }
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** Serves the peer's replicated volumes beside the local ones: each a client of its group. */
    private void attachReplicated() throws IOException {
        for (String name : replica.volumeNames()) {
            ReplicatedVolume v = replica.open(name);
            try {
                store.attach(v);
            } catch (IllegalArgumentException e) {
                v.close();
                throw new IllegalArgumentException("replicated volume " + name + ": " + e.getMessage(), e);
            }
            replicated.add(v);
        }
    }

    /** Flushes the volumes (not those that wait for peers: a write they acknowledged is in a quorum's log). */
    private void flushVolumes() throws IOException {
        for (Volume v : store.list()) {
            if (!v.waitsForPeers()) {
                v.flush();
            }
        }
    }

    private BlockTransportProvider find(String name) {
        return Transports.find(name, b.transportOptions);
    }

    private BlockTransport create(BlockTransportProvider p) {
        return p.create(b.transportOptions);
    }

    private <T extends AutoCloseable> T opened(T c) {
        started.push(c);
        return c;
    }

    private static String message(Exception e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /** The served volumes; null for a server that exports a remote target's volumes over NBD. */
    public VolumeStore volumes() {
        return store;
    }

    /** The transport listeners, in the order the builder named them. */
    public List<Listening> listeners() {
        return List.copyOf(listeners);
    }

    /** The NBD frontend, or null without one. */
    public NbdServer nbd() {
        return nbd;
    }

    /** The iSCSI frontend, or null when it is not served. */
    public IscsiServer iscsi() {
        return iscsi;
    }

    /** The connection through which NBD reaches the volumes (in-process or a remote target's), or null. */
    public HostConnection nbdConnection() {
        return nbdConnection;
    }

    /** The metrics endpoint, or null without one. */
    public MetricsEndpoint metrics() {
        return metrics;
    }

    /** The counters of every request the listeners and NBD pass to the volumes. */
    public TargetStats stats() {
        return stats;
    }

    /** This server's replica peer, or null. */
    public ReplicaNode replica() {
        return replica;
    }

    /** The replicated volumes the replica peer served at start, beside the local ones. */
    public List<ReplicatedVolume> replicatedVolumes() {
        return List.copyOf(replicated);
    }

    /** The control socket, or null: not asked, no data directory, or it could not listen ({@link #controlProblem}). */
    public ControlSocket controlSocket() {
        return control;
    }

    /** Why the control socket of a data directory does not listen, or null. */
    public String controlProblem() {
        return controlProblem;
    }

    /** Closes everything that started, last started first; the first failure is thrown, the others suppressed. */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        Exception first = null;
        while (!started.isEmpty()) {
            try {
                started.pop().close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first instanceof IOException io) {
            throw io;
        }
        if (first instanceof RuntimeException r) {
            throw r;
        }
        if (first != null) {
            throw new IOException(first);
        }
    }

    /** What to serve, and where; {@link #build} checks that it fits together. */
    public static final class Builder {
        private record MemoryVolume(String name, BlockFormat format, long blocks) {
        }

        private Path dataDir;
        private VolumeStore volumes;
        private java.time.Duration scrubEvery;
        private long scrubBytesPerSecond;
        private final List<MemoryVolume> memoryVolumes = new ArrayList<>();
        private long cacheBytes;
        private String owner = "pistore server";
        private final List<String[]> listens = new ArrayList<>();
        private TransportOptions transportOptions = TransportOptions.NONE;
        private String nbdAddress;
        private String iscsiAddress;
        private IscsiServer.Options iscsiOptions = new IscsiServer.Options();
        private NbdServer.Options nbdOptions = new NbdServer.Options();
        private boolean nbdLogsToServerLog;
        private int nbdQueues = 1;
        private String nbdTarget;
        private String nbdTargetTransport;
        private String replicaId;
        private String replicaHost;
        private int replicaPort;
        private ReplicationSettings replicationSettings = ReplicationSettings.defaults();
        private String metricsAddress;
        private MetricsWebConfig metricsWeb;
        private int latencySample = TargetStats.DEFAULT_LATENCY_SAMPLE;
        private boolean controlSocket = true;
        private Consumer<String> log = line -> { };

        private Builder() {
        }

        /**
         * Serves the volumes of this data directory: opened at start (owned by the server from then
         * on), with its control socket; with {@link #volumes} too, the directory that store was
         * opened from (a caller that opens it itself, to report its own errors, hands it over).
         */
        public Builder dataDir(Path dir) {
            this.dataDir = dir;
            return this;
        }

        /** Serves this store, which the server closes with itself. */
        public Builder volumes(VolumeStore store) {
            this.volumes = store;
            return this;
        }

        /**
         * Serves an in-memory volume (repeatable); its content is lost at close. A bad name, a name
         * given twice or a size of no blocks is an {@link IllegalArgumentException} here.
         */
        public Builder memoryVolume(String name, BlockFormat format, long blocks) {
            VolumeStore.checkName(name);
            if (blocks <= 0) {
                throw new IllegalArgumentException("volume " + name + " needs at least one block, not " + blocks);
            }
            if (memoryVolumes.stream().anyMatch(m -> m.name.equals(name))) {
                throw new IllegalArgumentException("volume " + name + " is named twice");
            }
            memoryVolumes.add(new MemoryVolume(name, format, blocks));
            return this;
        }

        /** Read cache of hot blocks and their PI per volume of the data directory, in bytes (default none). */
        public Builder cacheBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("cache must not be negative, not " + bytes);
            }
            this.cacheBytes = bytes;
            return this;
        }

        /** Who holds the data directory, as its lock file says (default "pistore server"). */
        public Builder owner(String owner) {
            this.owner = owner;
            return this;
        }

        /** Serves the volumes over {@code transport} on {@code address} (repeatable; port 0 picks a free port). */
        public Builder listen(String transport, String address) {
            listens.add(new String[] {transport, address});
            return this;
        }

        /** Settings of every transport this server creates ({@code tcp.tls=true}, ...). */
        public Builder transportOptions(TransportOptions options) {
            this.transportOptions = options;
            return this;
        }

        /** Exports every volume over NBD on {@code address}, with default options and the server's {@link #log}. */
        public Builder nbd(String address) {
            nbd(address, new NbdServer.Options());
            this.nbdLogsToServerLog = true;
            return this;
        }

        /** Exports every volume over NBD on {@code address} (the largest transfer is set from the transport). */
        public Builder nbd(String address, NbdServer.Options options) {
            this.nbdAddress = address;
            this.nbdOptions = options;
            this.nbdLogsToServerLog = false;
            return this;
        }

        /** Serves every volume as an iSCSI target on {@code address} (docs/ISCSI.md), through the local transport. */
        public Builder iscsi(String address, IscsiServer.Options options) {
            IscsiServer.parseAddress(address);
            this.iscsiAddress = address;
            this.iscsiOptions = options;
            return this;
        }

        /** Queues of the NBD frontend's connection to the volumes (1 to 64; default 1). */
        public Builder nbdQueues(int queues) {
            if (queues < 1 || queues > 64) {
                throw new IllegalArgumentException("NBD queues must be 1 to 64, not " + queues);
            }
            this.nbdQueues = queues;
            return this;
        }

        /**
         * Exports over NBD the volumes of the target at {@code address} (one, or over tcp and rdma a
         * list of peers), reached through {@code transport}, instead of volumes of its own.
         */
        public Builder nbdTarget(String transport, String address) {
            this.nbdTargetTransport = transport;
            this.nbdTarget = address;
            return this;
        }

        /** Runs a replica peer {@code id} on {@code host:port}, its storage in the data directory. */
        public Builder replica(String id, String host, int port) {
            this.replicaId = id;
            this.replicaHost = host;
            this.replicaPort = port;
            return this;
        }

        public Builder replicationSettings(ReplicationSettings settings) {
            this.replicationSettings = settings;
            return this;
        }

        /** Serves Prometheus metrics at {@code http://address/metrics} ({@code HOST:PORT}, or a bare port on loopback). */
        public Builder metrics(String address) {
            this.metricsAddress = address;
            return this;
        }

        /** With {@link #metrics}: TLS and basic authentication of the endpoint ({@link MetricsWebConfig}). */
        public Builder metricsWebConfig(MetricsWebConfig web) {
            this.metricsWeb = web;
            return this;
        }

        /** Times one request in {@code n} for the latency histogram (default 8). */
        public Builder metricsLatencySample(int n) {
            new TargetStats(n); // refuses what it cannot sample
            this.latencySample = n;
            return this;
        }

        /**
         * Scrubs the volumes in the background: a pass {@code every} after the last ended, reading at most
         * {@code bytesPerSecond} ({@link io.pistore.server.scrub.PeriodicScrub}); default: no background scrub.
         */
        public Builder scrub(java.time.Duration every, long bytesPerSecond) {
            if (every.isNegative() || every.isZero() || bytesPerSecond <= 0) {
                throw new IllegalArgumentException("a background scrub needs a positive interval and rate");
            }
            this.scrubEvery = every;
            this.scrubBytesPerSecond = bytesPerSecond;
            return this;
        }

        /** Whether a data directory's control socket listens (default yes). */
        public Builder controlSocket(boolean on) {
            this.controlSocket = on;
            return this;
        }

        /** Where the server's lines go (connections, control requests, replication); default nowhere. */
        public Builder log(Consumer<String> log) {
            this.log = log;
            return this;
        }

        /** The server, not started; {@link IllegalArgumentException} when the parts do not fit together. */
        public PistoreServer build() {
            int sources = (dataDir != null || volumes != null ? 1 : 0) + (memoryVolumes.isEmpty() ? 0 : 1)
                    + (nbdTarget != null ? 1 : 0);
            if (sources > 1) {
                throw new IllegalArgumentException("serve a data directory or a store, memory volumes, or a remote "
                        + "target's volumes: one of them");
            }
            if (nbdTarget != null && nbdAddress == null) {
                throw new IllegalArgumentException("a remote target's volumes are exported over NBD: name its address");
            }
            if (nbdTarget != null && !listens.isEmpty()) {
                throw new IllegalArgumentException("a server that exports a remote target's volumes serves no "
                        + "transport of its own");
            }
            if (replicaId != null && dataDir == null) {
                throw new IllegalArgumentException("a replica peer keeps its replicas in a data directory: name it");
            }
            return new PistoreServer(this);
        }
    }
}
