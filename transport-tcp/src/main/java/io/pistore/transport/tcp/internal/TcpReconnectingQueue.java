package io.pistore.transport.tcp.internal;

import io.pistore.spi.PeerList;
import io.pistore.spi.ReconnectPolicy;
import io.pistore.spi.ReconnectingHostQueue;
import io.pistore.spi.ReconnectingPeerQueue;
import io.pistore.transport.tcp.TcpConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One tcp host queue that outlives its TCP connection ({@link ReconnectingHostQueue}: requests in
 * flight on a lost connection fail, new ones fail at once while the queue reconnects in the
 * background with backoff, round robin over the target's {@link PeerList}).
 *
 * <p>A single target's new connection is used with what it lists now; a volume it lists in another
 * block format than known is refused until the host asks for the list again. With a list of peers, a
 * peer that has no volume the host uses is passed over, and one that holds such a volume in another
 * format is not used ({@link ReconnectingHostQueue}).
 */
final class TcpReconnectingQueue extends ReconnectingPeerQueue<TcpHostQueue> {
    private final TcpTransport transport;
    private final EventLoop loop;
    private final PeerList<InetSocketAddress> peers;
    private final int requestedDepth;
    private final long session;

    TcpReconnectingQueue(TcpTransport transport, TcpHostQueue first, PeerList<InetSocketAddress> peers, int peerIndex,
                      int index, int requestedDepth, long session) {
        super("tcp", TcpConnection.LOG, peers.names(), peerIndex, index, policy(transport));
        this.transport = transport;
        this.loop = first.loop;
        this.peers = peers;
        this.requestedDepth = requestedDepth;
        this.session = session;
        start(first);
    }

    /** How a tcp host reconnects: {@code tcp.reconnect*}, on the transport's reconnect thread. */
    static ReconnectPolicy policy(TcpTransport transport) {
        TcpConfig cfg = transport.config();
        return new ReconnectPolicy(cfg.reconnect, cfg.reconnectDelayMillis, cfg.reconnectMaxDelayMillis,
                transport::scheduleReconnect);
    }

    @Override
    protected TcpHostQueue connect(int p) throws IOException, InterruptedException {
        TcpConfig cfg = transport.config();
        String peer = peers.name(p);
        TcpHostQueue c = TcpHostQueue.open(loop, cfg, peers.address(p), peer, index, requestedDepth,
                session, true);
        try {
            c.ready.get(cfg.connectTimeoutMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            c.shutdown();
            throw new IOException("no answer within " + cfg.connectTimeoutMillis + " ms");
        } catch (ExecutionException e) {
            c.shutdown();
            Throwable why = e.getCause();
            throw why instanceof IOException ? (IOException) why : new IOException(String.valueOf(why.getMessage()), why);
        }
        return c;
    }

    @Override
    public String toString() {
        return "tcp queue " + index + " to " + peer();
    }
}
