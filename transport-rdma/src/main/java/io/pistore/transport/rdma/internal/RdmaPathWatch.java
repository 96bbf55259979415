package io.pistore.transport.rdma.internal;

import io.pistore.spi.Completion;
import io.pistore.spi.PathReport;
import io.pistore.spi.PeerPaths;
import io.pistore.spi.PeerWatches;
import io.pistore.spi.ReconnectPolicy;
import io.pistore.spi.Status;
import io.pistore.spi.wire.VolumeListCodec;
import io.pistore.spi.wire.PathReportCodec;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A host's watch of one peer's path states over rdma: a queue pair of its own (depth 1, no integrity
 * MRs), connected on the watches' own thread (a frozen peer's connect waits out its timeout there,
 * not on the queues' reconnect thread), on which one PATH_STATES query is always outstanding, held by the peer until its change
 * counter moves or {@link #WAIT_MS} pass; each answer goes to the host's {@link PeerPaths}. A peer
 * that does not answer a query within {@link #WAIT_MS} and {@link #MARGIN_MS} (frozen, or cut off)
 * is disconnected and, like one whose queue pair is lost, gone ({@link PeerWatches}: unreachable,
 * watched again later). A peer that answers the query as an unknown opcode (an older pistore, or
 * {@code rdma.pathStates=false} there) is left unwatched: the host's queues use it as before.
 */
final class RdmaPathWatch implements PeerWatches.Watch {
    /** How long a peer may hold one query (as tcp's watch). */
    static final int WAIT_MS = 1_000;
    /** How much later than that its answer may come before the peer counts as unreachable. */
    static final long MARGIN_MS = 1_000;

    private volatile RdmaHostQueue queue;
    private final int peer;
    private final PeerPaths paths;
    private final Runnable gone;
    private final ReconnectPolicy.Scheduler scheduler;
    private final AtomicBoolean ended = new AtomicBoolean();
    private volatile boolean stopped;
    /** The counter of the last report (the poller thread's, one query at a time). */
    private long known;

    private RdmaPathWatch(int peer, PeerPaths paths, Runnable gone, ReconnectPolicy.Scheduler scheduler) {
        this.peer = peer;
        this.paths = paths;
        this.gone = gone;
        this.scheduler = scheduler;
    }

    /**
     * A watch of peer {@code peer} at {@code address}: its queue pair is connected, and its first query
     * sent, on {@code scheduler}'s thread (the watches' own), which also releases it when it ends.
     */
    static RdmaPathWatch open(RdmaHostConnection owner, String address, int peer, PeerPaths paths, Runnable gone,
                              ReconnectPolicy.Scheduler scheduler) throws IOException {
        RdmaPathWatch w = new RdmaPathWatch(peer, paths, gone, scheduler);
        if (!scheduler.schedule(() -> w.connect(owner, address), 0)) {
            throw new IOException("the transport is closing");
        }
        return w;
    }

    private void connect(RdmaHostConnection owner, String address) {
        RdmaHostQueue q;
        try {
            q = owner.openWatchQueue(address);
        } catch (IOException e) {
            if (ended.compareAndSet(false, true) && !stopped) {
                gone.run();
            }
            return;
        }
        queue = q;
        if (stopped || ended.get()) {
            q.shutdown(); // stopped while connecting
            return;
        }
        ask();
    }

    private void ask() {
        if (stopped) {
            return;
        }
        CompletableFuture<Completion> f;
        try {
            f = queue.pathStates(known, WAIT_MS);
        } catch (VerbsException | RuntimeException e) {
            end(true);
            return;
        }
        f.orTimeout(WAIT_MS + MARGIN_MS, TimeUnit.MILLISECONDS).whenComplete((c, t) -> answered(c, t));
    }

    private void answered(Completion c, Throwable t) {
        if (stopped) {
            return;
        }
        if (t != null || c.status() == Status.TRANSPORT_ERROR) {
            end(true); // lost, or no answer in time: the peer is frozen or cut off
            return;
        }
        if (c.status() == Status.INVALID_FIELD) {
            end(false); // an older peer: nothing to watch there
            return;
        }
        PathReport r;
        try {
            if (!c.isSuccess()) {
                throw new VolumeListCodec.MalformedListException("PATH_STATES answered " + c);
            }
            r = PathReportCodec.decode(ByteBuffer.wrap(queue.pathReport()));
        } catch (VolumeListCodec.MalformedListException e) {
            end(true);
            return;
        }
        known = r.counter();
        paths.report(peer, r);
        ask();
    }

    /**
     * Ends the watch once: its queue pair disconnected at once (the thread here may be its poller,
     * which must not wait for itself), released on the reconnect thread, and then, if {@code lost},
     * its peer gone.
     */
    private void end(boolean lost) {
        if (!ended.compareAndSet(false, true)) {
            return;
        }
        queue.drop("path state watch ended");
        if (!scheduler.schedule(() -> {
            queue.shutdown();
            if (lost && !stopped) {
                gone.run();
            }
        }, 0)) {
            stopped = true; // the transport is closing: it releases the device
        }
    }

    /** Ends the watch for good, from any thread but its queue's poller. */
    @Override
    public void stop() {
        stopped = true;
        RdmaHostQueue q = queue;
        if (q != null && ended.compareAndSet(false, true)) {
            q.shutdown();
        }
    }
}
