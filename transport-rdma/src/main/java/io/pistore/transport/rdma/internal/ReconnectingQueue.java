package io.pistore.transport.rdma.internal;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Status;
import io.pistore.transport.rdma.RdmaOptions;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * One rdma host queue that outlives its QP, with the tcp host's semantics: while the connection is
 * up, requests go straight to it. When it is lost (the target closed it, its process died, or the
 * QP went to the error state after its retries), the requests then in flight fail with
 * {@link Status#TRANSPORT_ERROR} (a write among them may or may not have been stored: the caller
 * decides whether to send it again), new requests fail at once with the same status and a message
 * saying a reconnect is under way, and the queue reconnects in the background: first after
 * {@code rdma.reconnectDelayMs}, then twice as long each time up to {@code rdma.reconnectMaxDelayMs},
 * for as long as the host connection stays open.
 *
 * <p>Each attempt first releases the dead connection's resources (its QP, CQ, command buffers,
 * staging buffers and integrity MRs, all registered in the connection's PD), then connects a new
 * queue to the next peer of the {@link PeerList}, round robin from the one lost (a list of one is a
 * reconnect to the same address). The new queue is used only if the target lists the same volumes
 * as at connect time. Adopting a peer other than the one lost logs one line naming both.
 */
final class ReconnectingQueue implements HostQueue {
    private static final System.Logger LOG = System.getLogger("io.pistore.transport.rdma");

    private final RdmaHostConnection owner;
    private final ReconnectScheduler scheduler;
    private final RdmaOptions options;
    private final PeerList peers;
    private final int index;
    /** Index in {@link #peers} of the current queue's peer, or of the last attempt's. */
    private volatile int peerIndex;
    /** The peer lost, as the reconnect thread saw it at the first attempt after the loss (that thread only). */
    private int lostIndex;
    /** Index of the peer whose connection was lost (written by the poller thread when it is lost). */
    private volatile int lostPeer;
    private volatile String lostReason;
    private volatile RdmaHostQueue current;
    private volatile boolean closed;
    /** Attempts since the connection was lost (reconnect thread only). */
    private int attempts;
    private volatile long reconnects;

    ReconnectingQueue(RdmaHostConnection owner, ReconnectScheduler scheduler, RdmaOptions options, PeerList peers,
                      int peerIndex, int index, RdmaHostQueue first) {
        this.owner = owner;
        this.scheduler = scheduler;
        this.options = options;
        this.peers = peers;
        this.peerIndex = peerIndex;
        this.lostIndex = peerIndex;
        this.index = index;
        adopt(first);
    }

    private void adopt(RdmaHostQueue q) {
        current = q;
        q.onLost(this::lost);
    }

    @Override
    public CompletableFuture<Completion> submit(BlockRequest request) {
        RdmaHostQueue q = current;
        if (q.isShut() && !closed && options.reconnect()) {
            String why = lostReason;
            return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR,
                    "connection to " + peers.name(lostPeer) + " lost" + (why == null ? "" : " (" + why + ")")
                            + "; reconnecting"));
        }
        return q.submit(request);
    }

    @Override
    public int depth() {
        return current.depth();
    }

    @Override
    public int inFlight() {
        return current.inFlight();
    }

    /** Called on the lost queue's poller thread once its requests have failed. */
    private void lost(String reason) {
        lostReason = reason;
        lostPeer = peerIndex;
        if (closed || !options.reconnect()) {
            return;
        }
        schedule(options.reconnectDelayMillis());
    }

    private void schedule(long delayMillis) {
        if (!scheduler.schedule(this::attempt, delayMillis)) {
            closed = true; // the transport is closing
        }
    }

    /** One reconnect attempt (on the scheduler's thread). */
    private void attempt() {
        if (closed) {
            return;
        }
        if (attempts == 0) {
            lostIndex = lostPeer;
            current.close(); // release the dead QP and its MRs before making new ones (idempotent)
        }
        attempts++;
        int p = peers.next(peerIndex); // round robin: the first attempt goes to the peer after the one lost
        peerIndex = p;
        String peer = peers.name(p);
        RdmaHostQueue q;
        try {
            q = owner.openQueue(peer, index);
        } catch (IOException e) {
            if (attempts == 1 || attempts % 10 == 0) {
                // one line when reconnecting starts failing, then every tenth attempt: not one per attempt
                LOG.log(System.Logger.Level.WARNING, "pistore rdma: cannot reconnect to " + peer + " (queue " + index
                        + "), attempt " + attempts + ": " + e.getMessage());
            }
            retryLater();
            return;
        }
        if (closed) {
            q.close();
            return;
        }
        String after = attempts + (attempts == 1 ? " attempt" : " attempts");
        if (p == lostIndex) {
            LOG.log(System.Logger.Level.INFO, "pistore rdma: reconnected to " + peer + " (queue " + index + ") after "
                    + after);
        } else {
            LOG.log(System.Logger.Level.INFO, "pistore rdma: failed over from " + peers.name(lostIndex) + " to " + peer
                    + " (queue " + index + ") after " + after);
        }
        attempts = 0;
        lostReason = null;
        reconnects++; // one writer: the reconnect thread
        adopt(q);
        if (closed) { // close() raced with the adoption: it may have closed the old queue only
            q.close();
        }
    }

    private void retryLater() {
        long delay = options.reconnectDelayMillis();
        long max = options.reconnectMaxDelayMillis();
        for (int i = 1; i < attempts && delay < max; i++) {
            delay *= 2;
        }
        schedule(Math.min(delay, max));
    }

    long reconnects() {
        return reconnects;
    }

    /** The peer this queue uses now, or tries last while reconnecting (tests). */
    String peer() {
        return peers.name(peerIndex);
    }

    /** Stops reconnecting and closes the queue; outstanding requests fail. */
    void close() {
        closed = true;
        current.close();
    }

    @Override
    public String toString() {
        return "rdma queue " + index + " to " + peer();
    }
}
