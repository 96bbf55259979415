package io.pistore.transport.tcp.internal;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Status;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.tcp.TcpConfig;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.io.IOException;

/**
 * One host queue that outlives its TCP connection. While the connection is up, requests go straight
 * to it. When it is lost (the target closed it, crashed, or stopped answering), the requests then in
 * flight fail with {@link Status#TRANSPORT_ERROR} (a write among them may or may not have been stored:
 * the caller decides whether to retry), new requests fail at once with the same status and a message
 * saying a reconnect is under way, and the queue reconnects in the background: first after
 * {@code reconnectDelayMillis}, then after twice as long each time, up to
 * {@code reconnectMaxDelayMillis} between attempts, for as long as the host connection stays open.
 *
 * <p>With a list of peers ({@link PeerList}: the peers of a replicated volume, any of which serves
 * it) each attempt goes to the next peer of the list, round robin from the one lost, with the same
 * backoff, so a queue whose peer died fails over to another; a list of one is today's reconnect to
 * the same address. Adopting a peer other than the one lost logs one line naming both.
 *
 * <p>A new connection is used only if the target lists the same volumes (names, formats, sizes) as
 * at connect time: the application's buffers were sized for them. Otherwise it is closed with a
 * one-line warning and the queue keeps trying (the right target may come back).
 *
 * <p>Thread-safe: {@link #submit} from any thread; reconnect attempts are serialized by the
 * transport's reconnect scheduler.
 */
final class ReconnectingQueue implements HostQueue {
    private static final System.Logger LOG = Connection.LOG;

    private final TcpTransport transport;
    private final EventLoop loop;
    private final PeerList peers;
    /** Index in {@link #peers} of the current connection's peer, or of the last attempt's (scheduler thread writes). */
    private volatile int peerIndex;
    /** The peer lost, as the scheduler thread saw it at the first attempt after the loss (scheduler thread only). */
    private int lostIndex;
    private final int index;
    private final int requestedDepth;
    private final long session;
    private final List<VolumeInfo> volumes;
    private volatile HostQueueConnection current;
    private volatile boolean closed;
    private volatile String lostReason;
    /** Index of the peer whose connection was lost (written by the loop thread when it is lost). */
    private volatile int lostPeer;
    /** Attempts since the connection was lost (scheduler thread only). */
    private int attempts;
    /** Successful reconnects since connect (written by the scheduler thread, read by counters). */
    private volatile long reconnects;

    ReconnectingQueue(TcpTransport transport, HostQueueConnection first, PeerList peers, int peerIndex,
                      int index, int requestedDepth, long session) {
        this.transport = transport;
        this.loop = first.loop;
        this.peers = peers;
        this.peerIndex = peerIndex;
        this.lostIndex = peerIndex;
        this.index = index;
        this.requestedDepth = requestedDepth;
        this.session = session;
        this.volumes = first.volumes;
        adopt(first);
    }

    private void adopt(HostQueueConnection c) {
        current = c;
        c.onLost(this::lost);
    }

    @Override
    public CompletableFuture<Completion> submit(BlockRequest request) {
        HostQueueConnection c = current;
        if (c.isShut() && !closed && transport.config().reconnect) {
            String why = lostReason;
            return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR,
                    "connection to " + peers.name(lostPeer) + " lost" + (why == null ? "" : " (" + why + ")") + "; reconnecting"));
        }
        return c.submit(request);
    }

    @Override
    public int depth() {
        return current.depth();
    }

    @Override
    public int inFlight() {
        return current.inFlight();
    }

    /** The connection in use now (tests). */
    HostQueueConnection connection() {
        return current;
    }

    /** Called on the loop thread when the current connection closes for any reason but {@link #close}. */
    private void lost(String reason) {
        lostReason = reason;
        lostPeer = peerIndex;
        if (closed || !transport.config().reconnect) {
            return;
        }
        schedule(transport.config().reconnectDelayMillis);
    }

    private void schedule(long delayMillis) {
        if (!transport.scheduleReconnect(this::attempt, delayMillis)) {
            closed = true; // the transport is closing
        }
    }

    /** One reconnect attempt (on the transport's reconnect thread). */
    private void attempt() {
        if (closed) {
            return;
        }
        if (attempts == 0) {
            lostIndex = lostPeer;
        }
        attempts++;
        int p = peers.next(peerIndex); // round robin: the first attempt goes to the peer after the one lost
        peerIndex = p;
        String peer = peers.name(p);
        TcpConfig cfg = transport.config();
        HostQueueConnection c;
        try {
            c = HostQueueConnection.open(loop, cfg, peers.address(p), peer, index, requestedDepth, session, true);
            try {
                c.ready.get(cfg.connectTimeoutMillis, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                c.shutdown();
                throw new IOException("no answer within " + cfg.connectTimeoutMillis + " ms");
            }
        } catch (InterruptedException e) {
            return; // the transport is closing
        } catch (ExecutionException | IOException e) {
            Throwable why = e instanceof ExecutionException ? e.getCause() : e;
            if (attempts == 1 || attempts % 10 == 0) {
                // one line when reconnecting starts failing, then every tenth attempt: not one per attempt
                LOG.log(System.Logger.Level.WARNING, "pistore tcp: cannot reconnect to " + peer + " (queue " + index
                        + "), attempt " + attempts + ": " + why.getMessage());
            }
            retryLater();
            return;
        }
        if (!c.volumes.equals(volumes)) {
            LOG.log(System.Logger.Level.WARNING, "pistore tcp: reconnected to " + peer + " (queue " + index
                    + ") but it now lists other volumes than at connect (" + c.volumes + " instead of " + volumes
                    + "); not using it");
            c.shutdown();
            retryLater();
            return;
        }
        if (closed) {
            c.shutdown();
            return;
        }
        String after = attempts + (attempts == 1 ? " attempt" : " attempts");
        if (p == lostIndex) {
            LOG.log(System.Logger.Level.INFO, "pistore tcp: reconnected to " + peer + " (queue " + index + ") after "
                    + after);
        } else {
            LOG.log(System.Logger.Level.INFO, "pistore tcp: failed over from " + peers.name(lostIndex) + " to " + peer
                    + " (queue " + index + ") after " + after);
        }
        attempts = 0;
        lostReason = null;
        reconnects++; // one writer: the reconnect thread
        adopt(c);
        if (closed) { // close() raced with the adoption: it may have shut the old connection only
            c.shutdown();
        }
    }

    private void retryLater() {
        TcpConfig cfg = transport.config();
        long delay = cfg.reconnectDelayMillis;
        for (int i = 1; i < attempts && delay < cfg.reconnectMaxDelayMillis; i++) {
            delay *= 2;
        }
        schedule(Math.min(delay, cfg.reconnectMaxDelayMillis));
    }

    /** How often this queue was connected again after losing its connection. */
    long reconnects() {
        return reconnects;
    }

    /** Stops reconnecting and closes the connection; outstanding requests fail. */
    void close() {
        closed = true;
        current.shutdown();
    }

    /** The peer this queue uses now, or tries last while reconnecting (tests). */
    String peer() {
        return peers.name(peerIndex);
    }

    @Override
    public String toString() {
        return "tcp queue " + index + " to " + peer();
    }
}
