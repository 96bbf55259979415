package io.pistore.spi;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A host queue that outlives its connection, for transports to build on: the reconnect and failover
 * behaviour every host transport shares, with the connection itself left to the transport.
 *
 * <p>While the connection is up, requests go straight to it. When it is lost, the requests then in
 * flight fail as the connection fails them ({@link Status#TRANSPORT_ERROR}: a write among them may
 * or may not have been stored, the caller decides whether to send it again), new requests fail at
 * once with the same status and a message saying a reconnect is under way, and the queue reconnects
 * in the background: first after {@link #reconnectDelayMillis}, then twice as long each time up to
 * {@link #reconnectMaxDelayMillis}, for as long as it is not closed. Each attempt goes to the next
 * peer of the target's list, round robin from the one lost (a list of one reconnects to the same
 * address), so a queue whose peer died fails over to another peer serving the same volumes.
 * Adopting a peer logs one line: {@code reconnected to B} or {@code failed over from A to B}; failed
 * attempts log one line at the first, then every tenth.
 *
 * <p>Thread-safe: {@link #submit} from any thread; attempts run one at a time, on the thread the
 * transport's {@link #schedule} runs them on.
 *
 * @param <C> the transport's connection of one queue
 */
public abstract class ReconnectingHostQueue<C extends HostQueue> implements HostQueue {
    private final String transport;
    private final System.Logger log;
    private final List<String> peers;
    /** This queue's number in its host connection (for log lines). */
    protected final int index;
    /** Index in {@link #peers} of the current connection's peer, or of the last attempt's. */
    private volatile int peerIndex;
    /** The peer lost, as the attempting thread saw it at the first attempt after the loss (that thread only). */
    private int lostIndex;
    /** Index of the peer whose connection was lost (written by the thread that noticed the loss). */
    private volatile int lostPeer;
    private volatile String lostReason;
    private volatile C current;
    private volatile boolean closed;
    /** Attempts since the connection was lost (attempting thread only). */
    private int attempts;
    /** Successful reconnects since connect (written by the attempting thread). */
    private volatile long reconnects;

    /**
     * {@code peers}: the target's peers as named in log lines; {@code first}: the connection to peer
     * {@code peerIndex}, already up. Subclasses call {@link #start} once their own fields are set.
     */
    protected ReconnectingHostQueue(String transport, System.Logger log, List<String> peers, int peerIndex, int index) {
        this.transport = transport;
        this.log = log;
        this.peers = List.copyOf(peers);
        this.peerIndex = peerIndex;
        this.lostIndex = peerIndex;
        this.index = index;
    }

    /** Takes up the first connection. */
    protected final void start(C first) {
        adopt(first);
    }

    /**
     * A peer that answered but cannot be used (it serves other volumes than at connect time): logged
     * at every attempt that finds it, since it is a configuration mistake, not an outage.
     */
    protected static final class PeerUnusable extends IOException {
        private static final long serialVersionUID = 1L;

        public PeerUnusable(String reason) {
            super(reason);
        }
    }

    /**
     * Connects a new connection of this queue to peer {@code peer}; throws with the one-line reason it
     * could not ({@link PeerUnusable} for a peer that answered but must not be used).
     */
    protected abstract C connect(int peer) throws IOException, InterruptedException;

    /** Whether {@code c} is down (lost or closed). */
    protected abstract boolean isShut(C c);

    /** Has {@code c} call {@code lost} with a reason once, when it is lost (not when it is closed here). */
    protected abstract void onLost(C c, Consumer<String> lost);

    /** Closes {@code c} and releases what it holds; requests still in it fail. Idempotent. */
    protected abstract void release(C c);

    /** Runs {@code attempt} after {@code delayMillis}; false when the transport is closing. */
    protected abstract boolean schedule(Runnable attempt, long delayMillis);

    /** Whether lost connections are reconnected at all. */
    protected abstract boolean reconnectEnabled();

    protected abstract long reconnectDelayMillis();

    protected abstract long reconnectMaxDelayMillis();

    /** Called before the first attempt after a loss, with the lost connection: a transport may release it then. */
    protected void beforeReconnecting(C lost) {
    }

    private void adopt(C c) {
        current = c;
        onLost(c, this::lost);
    }

    @Override
    public CompletableFuture<Completion> submit(BlockRequest request) {
        C c = current;
        if (isShut(c) && !closed && reconnectEnabled()) {
            String why = lostReason;
            return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR,
                    "connection to " + peers.get(lostPeer) + " lost" + (why == null ? "" : " (" + why + ")")
                            + "; reconnecting"));
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

    /** The connection in use now (or the lost one, while reconnecting). */
    protected final C current() {
        return current;
    }

    private void lost(String reason) {
        lostReason = reason;
        lostPeer = peerIndex;
        if (closed || !reconnectEnabled()) {
            return;
        }
        scheduleAttempt(reconnectDelayMillis());
    }

    private void scheduleAttempt(long delayMillis) {
        if (!schedule(this::attempt, delayMillis)) {
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
            beforeReconnecting(current);
        }
        attempts++;
        int p = (peerIndex + 1) % peers.size(); // round robin: the first attempt goes to the peer after the one lost
        peerIndex = p;
        String peer = peers.get(p);
        C c;
        try {
            c = connect(p);
        } catch (InterruptedException e) {
            return; // the transport is closing
        } catch (PeerUnusable e) {
            log.log(System.Logger.Level.WARNING, "pistore " + transport + ": reconnected to " + peer + " (queue " + index
                    + ") but " + e.getMessage());
            retryLater();
            return;
        } catch (IOException e) {
            if (attempts == 1 || attempts % 10 == 0) {
                // one line when reconnecting starts failing, then every tenth attempt: not one per attempt
                log.log(System.Logger.Level.WARNING, "pistore " + transport + ": cannot reconnect to " + peer + " (queue "
                        + index + "), attempt " + attempts + ": " + e.getMessage());
            }
            retryLater();
            return;
        }
        if (closed) {
            release(c);
            return;
        }
        String after = attempts + (attempts == 1 ? " attempt" : " attempts");
        if (p == lostIndex) {
            log.log(System.Logger.Level.INFO, "pistore " + transport + ": reconnected to " + peer + " (queue " + index
                    + ") after " + after);
        } else {
            log.log(System.Logger.Level.INFO, "pistore " + transport + ": failed over from " + peers.get(lostIndex) + " to "
                    + peer + " (queue " + index + ") after " + after);
        }
        attempts = 0;
        lostReason = null;
        reconnects++; // one writer: the attempting thread
        adopt(c);
        if (closed) { // close() raced with the adoption: it may have released the old connection only
            release(c);
        }
    }

    private void retryLater() {
        long delay = reconnectDelayMillis();
        long max = reconnectMaxDelayMillis();
        for (int i = 1; i < attempts && delay < max; i++) {
            delay *= 2;
        }
        scheduleAttempt(Math.min(delay, max));
    }

    /** How often this queue was connected again after losing its connection. */
    public final long reconnects() {
        return reconnects;
    }

    /** Stops reconnecting and releases the connection; outstanding requests fail. */
    public void close() {
        closed = true;
        release(current);
    }

    /** Whether {@link #close} was called (or the transport closed under an attempt). */
    protected final boolean isClosed() {
        return closed;
    }

    /** The peer this queue uses now, or tries last while reconnecting. */
    public final String peer() {
        return peers.get(peerIndex);
    }
}
