package io.pistore.transport.tcp.internal;

import io.pistore.spi.PeerList;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.PeerChoice;
import io.pistore.spi.PeerWatches;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.tcp.TcpConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A host's connection to one target, or to one of a list of peers serving the same volumes: one TCP
 * connection per queue, each greeted on its own (and each failing over on its own, {@link TcpReconnectingQueue}).
 */
final class TcpHostConnection implements HostConnection {
    private final TcpTransport transport;
    private final TcpReconnectingQueue[] queues;
    /** The watches of the peers' path states (a list of peers, {@code tcp.pathStates}), or null. */
    private final PeerWatches watches;
    private volatile boolean closed;

    private TcpHostConnection(TcpTransport transport, TcpReconnectingQueue[] queues, PeerWatches watches) {
        this.transport = transport;
        this.queues = queues;
        this.watches = watches;
    }

    /**
     * Connects every queue to the first peer of {@code address} (one {@code host:port} or a list,
     * {@link PeerList}) whose handshakes all succeed within the connect timeout; the queues fail
     * over to the others later. Which peer, and the errors when none answers: {@link PeerChoice}
     * (with {@link ConnectOptions#volume()} named, a peer that does not list it is passed over).
     */
    static TcpHostConnection connect(TcpTransport transport, String address, ConnectOptions o) throws IOException {
        if (transport.group().inAnyLoop()) {
            // connect waits for the handshake, which needs the I/O threads: never block one.
            throw new IOException("connect must not be called from a tcp I/O thread (e.g. a completion callback)");
        }
        PeerList<InetSocketAddress> peers = PeerList.parse("tcp", address, Addresses::parse, Addresses::format);
        long session = ThreadLocalRandom.current().nextLong();
        PeerChoice.Chosen<TcpHostQueue[]> chosen = PeerChoice.choose("tcp", TcpConnection.LOG, address,
                peers.names(), o.volume(), new PeerChoice.Peers<>() {
                    @Override
                    public TcpHostQueue[] open(int p) throws IOException, InterruptedException {
                        return TcpHostConnection.open(transport, peers, p, o, session);
                    }

                    @Override
                    public boolean lists(TcpHostQueue[] qs, String volume) {
                        return qs[0].volumesByName().containsKey(volume);
                    }

                    @Override
                    public void close(TcpHostQueue[] qs) {
                        shutdown(qs);
                    }
                });
        TcpHostQueue[] qs = chosen.opened();
        TcpReconnectingQueue[] rq = new TcpReconnectingQueue[qs.length];
        for (int i = 0; i < qs.length; i++) {
            rq[i] = new TcpReconnectingQueue(transport, qs[i], peers, chosen.index(), i, o.queueDepth(), session);
        }
        PeerWatches watches = null;
        TcpConfig cfg = transport.config();
        if (peers.size() > 1 && cfg.pathStates && cfg.reconnect) {
            // every peer watched; each queue follows the optimized path ({@link io.pistore.spi.ReconnectingHostQueue#follow})
            watches = new PeerWatches(peers.names(), (p, paths, gone) -> TcpPathWatch.open(transport.group().next(),
                    transport.config(), peers.address(p), peers.name(p), p, paths, session, gone),
                    TcpReconnectingQueue.policy(transport));
            for (TcpReconnectingQueue q : rq) {
                q.follow(watches.paths());
            }
        }
        TcpHostConnection c = new TcpHostConnection(transport, rq, watches);
        transport.track(c);
        return c;
    }

    private static void shutdown(TcpHostQueue[] qs) {
        for (TcpHostQueue q : qs) {
            if (q != null) {
                q.shutdown();
            }
        }
    }

    /**
     * Opens and greets every queue on peer {@code p}; on failure (interrupted included) closes what
     * it opened.
     */
    private static TcpHostQueue[] open(TcpTransport transport, PeerList<InetSocketAddress> peers, int p, ConnectOptions o,
                                              long session) throws IOException, InterruptedException {
        TcpConfig cfg = transport.config();
        InetSocketAddress a = peers.address(p);
        TcpHostQueue[] qs = new TcpHostQueue[o.queues()];
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(cfg.connectTimeoutMillis);
        try {
            for (int i = 0; i < qs.length; i++) {
                // quiet: a failure to connect reaches the caller as this method's exception, logged once there
                qs[i] = TcpHostQueue.open(transport.group().next(), cfg, a, peers.name(p), i, o.queueDepth(),
                        session, true);
            }
            for (TcpHostQueue q : qs) {
                long left = deadline - System.nanoTime();
                q.ready.get(Math.max(0, left), TimeUnit.NANOSECONDS);
            }
            return qs;
        } catch (ExecutionException | TimeoutException | InterruptedException | IOException e) {
            shutdown(qs);
            if (e instanceof InterruptedException ie) {
                throw ie;
            }
            throw new IOException(e instanceof TimeoutException ? "no answer within " + cfg.connectTimeoutMillis + " ms"
                    : e instanceof ExecutionException ? String.valueOf(e.getCause().getMessage())
                    : String.valueOf(e.getMessage()));
        }
    }

    /** The volumes of the first queue's connection: as its peer listed them at connect or last relist. */
    @Override
    public List<VolumeInfo> volumes() {
        return queues[0].volumes();
    }

    /**
     * Every queue asks its own peer again (VOLUMES on its connection: the ids it learns are its
     * peer's); completes once all have answered, with the first queue's list.
     */
    @Override
    public java.util.concurrent.CompletableFuture<List<VolumeInfo>> relistVolumes() {
        java.util.concurrent.CompletableFuture<?>[] all = new java.util.concurrent.CompletableFuture<?>[queues.length];
        for (int i = 0; i < queues.length; i++) {
            all[i] = queues[i].relistVolumes();
        }
        return java.util.concurrent.CompletableFuture.allOf(all).thenApply(x -> volumes());
    }

    @Override
    public int queueCount() {
        return queues.length;
    }

    @Override
    public HostQueue queue(int index) {
        return queues[index];
    }

    /** What the host knows of its peers' path states, or null when it does not watch them. */
    io.pistore.spi.PeerPaths paths() {
        return watches == null ? null : watches.paths();
    }

    /** How often a queue moved to the optimized peer of its own accord. */
    long moves() {
        long n = 0;
        for (TcpReconnectingQueue q : queues) {
            n += q.moves();
        }
        return n;
    }

    /**
     * True: every queue serves {@link io.pistore.spi.BlockRequest#readMetadata}, with one READ that
     * carries the metadata alone where its target granted it, else by reading the blocks whole.
     */
    @Override
    public boolean readsMetadataOnly() {
        return true;
    }

    @Override
    public long reconnects() {
        long n = 0;
        for (TcpReconnectingQueue q : queues) {
            n += q.reconnects();
        }
        return n;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (watches != null) {
            watches.close();
        }
        for (TcpReconnectingQueue q : queues) {
            q.close();
        }
        transport.forget(this);
    }
}
