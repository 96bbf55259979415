package io.pistore.transport.rdma.internal;

import io.pistore.spi.PeerList;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.PeerChoice;
import io.pistore.spi.PeerPaths;
import io.pistore.spi.PeerWatches;
import io.pistore.spi.ReconnectPolicy;
import io.pistore.spi.VolumeInfo;
import io.pistore.spi.wire.VolumeListCodec;
import io.pistore.transport.rdma.RdmaOptions;
import io.pistore.transport.rdma.verbs.SignatureMapping;
import io.pistore.transport.rdma.verbs.Capability;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A host's connection over rdma: one QP per queue, volumes discovered on queue 0. The address may
 * be a list of peers serving the same volumes ({@link PeerList}): every queue connects to the first
 * peer that answers, and each reconnects on its own, to the next peer, when its connection is lost
 * ({@link RdmaReconnectingQueue}).
 */
public final class RdmaHostConnection implements HostConnection {
    private static final System.Logger LOG = System.getLogger("io.pistore.transport.rdma");
    /** Path decisions already logged in this JVM (one line per provider, format and path). */
    private static final Map<String, Boolean> LOGGED = new ConcurrentHashMap<>();

    private final String providerName;
    private final VerbsDevice device;
    private final RdmaOptions options;
    private final ProtectionDomain pd;
    private final RdmaReconnectingQueue[] queues;
    /** The watches of the peers' path states (a list of peers, {@code rdma.pathStates}), or null. */
    private PeerWatches watches;
    /** The thread the watches connect and end on, or null. */
    private ReconnectScheduler watchThread;
    private final ReconnectScheduler scheduler;
    /** Whether {@link #scheduler} is this connection's own (made without a transport), closed with it. */
    private final boolean ownScheduler;
    private final boolean integrity;
    private final int depth;
    /** The target's volumes by name, as queue 0 last heard them (replaced whole: read from any thread). */
    private volatile Map<String, VolumeInfo> volumes = Map.of();
    private final Map<String, byte[]> names = new ConcurrentHashMap<>();
    private final Map<String, String> paths = new ConcurrentHashMap<>();
    private final AtomicLong offloaded = new AtomicLong();
    private final AtomicLong software = new AtomicLong();
    /** Per volume: data requests through integrity MRs [0] and through software PI [1]. */
    private final Map<String, AtomicLong[]> perVolume = new ConcurrentHashMap<>();

    /** A connection that reconnects on a thread of its own (tests; the transport shares one). */
    public RdmaHostConnection(String providerName, VerbsDevice device, RdmaOptions options, String address,
                              ConnectOptions o) throws IOException {
        this(providerName, device, options, address, o, new ReconnectScheduler(), true);
    }

    /** A connection whose queues reconnect on {@code scheduler}'s thread. */
    public RdmaHostConnection(String providerName, VerbsDevice device, RdmaOptions options, String address,
                              ConnectOptions o, ReconnectScheduler scheduler) throws IOException {
        this(providerName, device, options, address, o, scheduler, false);
    }

    private RdmaHostConnection(String providerName, VerbsDevice device, RdmaOptions options, String address,
                               ConnectOptions o, ReconnectScheduler scheduler, boolean ownScheduler) throws IOException {
        this.providerName = providerName;
        this.device = device;
        this.options = options;
        this.scheduler = scheduler;
        this.ownScheduler = ownScheduler;
        this.depth = o.queueDepth();
        PeerList<String> peers;
        try {
            peers = PeerList.parse("rdma", address, RdmaHostConnection::hostPort, p -> p);
        } catch (IOException e) {
            closeScheduler();
            throw e;
        }
        this.integrity = device.caps().has(Capability.INTEGRITY_MR) && options.pi() != RdmaOptions.PiMode.CPU;
        if (options.pi() == RdmaOptions.PiMode.OFFLOAD && !integrity) {
            closeScheduler();
            throw new IOException("rdma.pi=offload, but verbs provider " + providerName + " has no integrity MR");
        }
        try {
            this.pd = device.allocPd();
        } catch (VerbsException e) {
            closeScheduler();
            throw new IOException("rdma connect to " + address + ": " + e.getMessage(), e);
        }
        this.queues = new RdmaReconnectingQueue[o.queues()];
        PeerChoice.Chosen<Opened> chosen;
        try {
            chosen = PeerChoice.choose("rdma", LOG, address, peers.names(), o.volume(), new PeerChoice.Peers<>() {
                @Override
                public Opened open(int p) throws IOException, InterruptedException {
                    return openPeer(peers.name(p), queues.length);
                }

                @Override
                public boolean lists(Opened peer, String volume) {
                    return peer.listed().stream().anyMatch(v -> v.name().equals(volume));
                }

                @Override
                public void close(Opened peer) {
                    closeAll(peer.queues());
                }
            });
        } catch (IOException e) {
            close();
            throw e;
        }
        List<VolumeInfo> listed = chosen.opened().listed();
        RdmaHostQueue[] qs = chosen.opened().queues();
        heard(listed);
        for (RdmaHostQueue q : qs) {
            q.listed = listed;
        }
        ReconnectPolicy policy = RdmaReconnectingQueue.policy(options, scheduler);
        for (int i = 0; i < qs.length; i++) {
            queues[i] = new RdmaReconnectingQueue(this, policy, peers, chosen.index(), i, qs[i]);
        }
        if (peers.size() > 1 && options.pathStates() && options.reconnect()) {
            // every peer watched; each queue follows the optimized path ({@link io.pistore.spi.ReconnectingHostQueue#follow})
            watchThread = new ReconnectScheduler("pistore-rdma-path-watch");
            ReconnectPolicy watching = new ReconnectPolicy(true, options.reconnectDelayMillis(),
                    options.reconnectMaxDelayMillis(), watchThread::schedule);
            watches = new PeerWatches(peers.names(), (p, paths, gone) -> RdmaPathWatch.open(this, peers.name(p), p, paths,
                    gone, watching.scheduler()), watching);
            for (RdmaReconnectingQueue q : queues) {
                q.follow(watches.paths());
            }
        }
    }

    /** What the watches of the peers' path states know, or null when they are not watched. */
    public PeerPaths peerPaths() {
        return watches == null ? null : watches.paths();
    }

    /** How often the queues moved to the optimized peer of their own accord. */
    public long moves() {
        long n = 0;
        for (RdmaReconnectingQueue q : queues) {
            if (q != null) {
                n += q.moves();
            }
        }
        return n;
    }

    /** A queue pair of depth 1 to {@code address} for a watch of its path states (no integrity MRs). */
    RdmaHostQueue openWatchQueue(String address) throws IOException {
        try {
            return new RdmaHostQueue(this, device, pd, address, -1, 1, false);
        } catch (VerbsException | RuntimeException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /** One peer's queues, connected, and the volumes it listed on queue 0. */
    private record Opened(RdmaHostQueue[] queues, List<VolumeInfo> listed) {
    }

    /**
     * Connects {@code count} queues to {@code address} and asks it for its volumes; on failure
     * (interrupted included) closes what it opened.
     */
    private Opened openPeer(String address, int count) throws IOException, InterruptedException {
        RdmaHostQueue[] qs = new RdmaHostQueue[count];
        try {
            for (int i = 0; i < qs.length; i++) {
                qs[i] = new RdmaHostQueue(this, device, pd, address, i, depth, integrity);
            }
            return new Opened(qs, VolumeList.decode(qs[0].discover()));
        } catch (VerbsException | InterruptedException | RuntimeException | VolumeListCodec.MalformedListException e) {
            closeAll(qs);
            if (e instanceof InterruptedException ie) {
                throw ie;
            }
            throw new IOException(e.getMessage(), e);
        }
    }

    /**
     * One peer of an rdma target: {@code HOST:PORT} as given (the verbs provider resolves it), a port
     * 0 to 65535.
     */
    static String hostPort(String p) throws IOException {
        int colon = p.lastIndexOf(':');
        if (colon <= 0 || !p.substring(colon + 1).matches("[0-9]{1,5}")
                || Integer.parseInt(p.substring(colon + 1)) > 65535) {
            throw new IOException("an rdma address is HOST:PORT, not '" + p + "'");
        }
        return p;
    }

    private static void closeAll(RdmaHostQueue[] qs) {
        for (RdmaHostQueue q : qs) {
            if (q != null) {
                q.shutdown();
            }
        }
    }

    /** How long a queue waits for a response before it treats its connection as lost ({@code rdma.requestTimeoutMs}). */
    long requestTimeoutMillis() {
        return options.requestTimeoutMillis();
    }

    /**
     * A new queue {@code index} to {@code address}, with the volumes that target lists now (its
     * {@link RdmaReconnectingQueue} decides whether to use it). For a reconnect; closes what it opened
     * when it fails.
     */
    RdmaHostQueue openQueue(String address, int index) throws IOException {
        RdmaHostQueue q = null;
        try {
            q = new RdmaHostQueue(this, device, pd, address, index, depth, integrity);
            q.listed = VolumeList.decode(q.discover());
            return q;
        } catch (VerbsException | RuntimeException | VolumeListCodec.MalformedListException e) {
            if (q != null) {
                q.shutdown();
            }
            throw new IOException(e.getMessage(), e);
        } catch (InterruptedException e) {
            q.shutdown();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } catch (IOException e) {
            q.shutdown();
            throw e;
        }
    }

    /** How often a queue of this connection was connected again after losing its connection. */
    @Override
    public long reconnects() {
        long n = 0;
        for (RdmaReconnectingQueue q : queues) {
            if (q != null) {
                n += q.reconnects();
            }
        }
        return n;
    }

    /** The peer queue {@code index} uses now, or tries last while reconnecting (tests). */
    public String peerOf(int index) {
        return queues[index].peer();
    }

    private void closeScheduler() {
        if (ownScheduler) {
            scheduler.close();
        }
    }

    @Override
    public List<VolumeInfo> volumes() {
        return List.copyOf(volumes.values());
    }

    private void heard(List<VolumeInfo> listed) {
        Map<String, VolumeInfo> m = new LinkedHashMap<>();
        for (VolumeInfo v : listed) {
            m.put(v.name(), v);
        }
        volumes = java.util.Collections.unmodifiableMap(m);
    }

    /** Every queue asks its peer again (DISCOVER); the connection's list becomes queue 0's answer. */
    @Override
    public java.util.concurrent.CompletableFuture<List<VolumeInfo>> relistVolumes() {
        java.util.concurrent.CompletableFuture<List<VolumeInfo>> first = queues[0].relistVolumes();
        java.util.concurrent.CompletableFuture<?>[] all = new java.util.concurrent.CompletableFuture<?>[queues.length];
        all[0] = first;
        for (int i = 1; i < queues.length; i++) {
            all[i] = queues[i].relistVolumes();
        }
        return java.util.concurrent.CompletableFuture.allOf(all).thenApply(x -> {
            heard(first.join());
            return volumes();
        });
    }

    /**
     * True: every queue serves {@link io.pistore.spi.BlockRequest#readMetadata}, as one READ of the
     * metadata where the target serves it, else by reading the blocks whole ({@link RdmaReconnectingQueue#submit}).
     */
    @Override
    public boolean readsMetadataOnly() {
        return true;
    }

    @Override
    public int queueCount() {
        return queues.length;
    }

    @Override
    public HostQueue queue(int index) {
        return queues[index];
    }

    VolumeInfo volume(String name) {
        return volumes.get(name);
    }

    byte[] nameBytes(String name) {
        return names.computeIfAbsent(name, n -> n.getBytes(StandardCharsets.UTF_8));
    }

    /** Whether READ/WRITE of this volume go through integrity MRs; logs the choice once per volume. */
    boolean offloads(VolumeInfo v) {
        String path = paths.get(v.name());
        if (path == null) {
            String refusal = options.pi() == RdmaOptions.PiMode.CPU ? "rdma.pi=cpu"
                    : SignatureMapping.offloadRefusal(v.format(), device.caps());
            path = refusal == null ? "offload" : "software: " + refusal;
            perVolume.putIfAbsent(v.name(), new AtomicLong[] {new AtomicLong(), new AtomicLong()});
            if (paths.putIfAbsent(v.name(), path) == null
                    && LOGGED.putIfAbsent(providerName + " " + v.format() + " " + path, Boolean.TRUE) == null) {
                LOG.log(System.Logger.Level.INFO, "rdma(" + providerName + "): " + v.format() + " (volume " + v.name()
                        + "): " + (refusal == null ? "PI checked by the NIC's signature engine, one integrity MR per request"
                        : "PI in software on the CPU, because " + refusal));
            }
        }
        return path.equals("offload");
    }

    /** Counts a data request of volume {@code v} on its path (allocation-free: the counters exist once {@link #offloads} ran). */
    void notePath(VolumeInfo v, boolean offload) {
        (offload ? offloaded : software).incrementAndGet();
        AtomicLong[] c = perVolume.get(v.name());
        if (c != null) {
            c[offload ? 0 : 1].incrementAndGet();
        }
    }

    /** {@code offload} or {@code software: <reason>} for a volume used so far, else null. */
    public String pathOf(String volume) {
        return paths.get(volume);
    }

    /** Requests that went through integrity MRs. */
    public long offloadedRequests() {
        return offloaded.get();
    }

    /** Data requests that went through the software-PI path. */
    public long softwareRequests() {
        return software.get();
    }

    /** Data requests of {@code volume} that went through integrity MRs. */
    public long offloadedRequests(String volume) {
        AtomicLong[] c = perVolume.get(volume);
        return c == null ? 0 : c[0].get();
    }

    /** Data requests of {@code volume} that went through the software-PI path. */
    public long softwareRequests(String volume) {
        AtomicLong[] c = perVolume.get(volume);
        return c == null ? 0 : c[1].get();
    }

    public Map<String, String> paths() {
        return Collections.unmodifiableMap(paths);
    }

    @Override
    public void close() {
        if (watches != null) {
            watches.close();
            watchThread.close();
        }
        closeScheduler();
        for (RdmaReconnectingQueue q : queues) {
            if (q != null) {
                q.close();
            }
        }
        pd.close();
    }
}
