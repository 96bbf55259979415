package io.pistore.transport.tcp.internal;

import io.pistore.spi.PeerList;
import io.pistore.spi.PeerPaths;
import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * The watches of every peer of a host connection's target list ({@link TcpPathWatch}): one each,
 * opened again after {@code tcp.reconnectDelayMs} whenever one is lost, until {@link #close}. What
 * they learn is in {@link #paths}, which the connection's queues follow.
 */
final class TcpPathWatches implements AutoCloseable {
    private final TcpTransport transport;
    private final PeerList<InetSocketAddress> peers;
    private final PeerPaths paths;
    private final long session;
    private final TcpPathWatch[] watches;
    private volatile boolean closed;

    TcpPathWatches(TcpTransport transport, PeerList<InetSocketAddress> peers, long session) {
        this.transport = transport;
        this.peers = peers;
        this.paths = new PeerPaths(peers.names());
        this.session = session;
        this.watches = new TcpPathWatch[peers.size()];
        for (int p = 0; p < peers.size(); p++) {
            open(p);
        }
    }

    PeerPaths paths() {
        return paths;
    }

    private void open(int p) {
        if (closed) {
            return;
        }
        try {
            TcpPathWatch w = TcpPathWatch.open(transport.group().next(), transport.config(), peers.address(p),
                    peers.name(p), p, paths, session, () -> reopenLater(p));
            synchronized (this) {
                if (closed) {
                    w.stop();
                    return;
                }
                watches[p] = w;
            }
        } catch (IOException e) {
            paths.unreachable(p);
            reopenLater(p);
        }
    }

    private void reopenLater(int p) {
        if (!closed) {
            transport.scheduleReconnect(() -> open(p), transport.config().reconnectDelayMillis);
        }
    }

    @Override
    public void close() {
        TcpPathWatch[] ws;
        synchronized (this) {
            closed = true;
            ws = watches.clone();
        }
        for (TcpPathWatch w : ws) {
            if (w != null) {
                w.stop();
            }
        }
    }
}
