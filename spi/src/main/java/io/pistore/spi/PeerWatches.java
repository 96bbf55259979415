package io.pistore.spi;

import java.io.IOException;
import java.util.List;

/**
 * A host's watches of the path states of every peer of its target list, for any transport: one watch
 * per peer, made by the transport's {@link Opener}, which feeds {@link #paths} with each report. A
 * watch that could not be opened, or that is gone (its connection lost, its peer frozen), makes its
 * peer unreachable in {@link #paths} and is opened again after the policy's first reconnect delay,
 * until {@link #close}. A watch whose peer does not report path states (an older pistore) stops by
 * itself without being gone: that peer stays unknown, and the queues use it as without path states.
 */
public final class PeerWatches implements AutoCloseable {
    /** One peer's watch, as a transport opens it. */
    public interface Watch {
        /** Ends the watch for good, from any thread, without calling its {@code gone}. */
        void stop();
    }

    /** How a transport opens a watch. */
    @FunctionalInterface
    public interface Opener {
        /**
         * Opens a watch of peer {@code peer} that reports to {@code paths} and runs {@code gone} once
         * when it ends other than by {@link Watch#stop} or its peer's refusal; throws with the
         * one-line reason it could not be opened.
         */
        Watch open(int peer, PeerPaths paths, Runnable gone) throws IOException;
    }

    private final PeerPaths paths;
    private final Opener opener;
    private final ReconnectPolicy policy;
    private final Watch[] watches;
    private boolean closed;

    /** Opens a watch of each of {@code peers} (named as in log lines) now. */
    public PeerWatches(List<String> peers, Opener opener, ReconnectPolicy policy) {
        this.paths = new PeerPaths(peers);
        this.opener = opener;
        this.policy = policy;
        this.watches = new Watch[peers.size()];
        for (int p = 0; p < peers.size(); p++) {
            open(p);
        }
    }

    /** What the watches have learnt so far. */
    public PeerPaths paths() {
        return paths;
    }

    private void open(int p) {
        synchronized (this) {
            if (closed) {
                return;
            }
        }
        Watch w;
        try {
            w = opener.open(p, paths, () -> gone(p));
        } catch (IOException e) {
            gone(p);
            return;
        }
        synchronized (this) {
            if (!closed) {
                watches[p] = w;
                return;
            }
        }
        w.stop();
    }

    private void gone(int p) {
        paths.unreachable(p);
        synchronized (this) {
            watches[p] = null; // ended already: not stopped again at close
            if (closed) {
                return;
            }
        }
        policy.scheduler().schedule(() -> open(p), policy.delayMillis());
    }

    /** Stops every watch; none is opened again. */
    @Override
    public void close() {
        Watch[] ws;
        synchronized (this) {
            closed = true;
            ws = watches.clone();
        }
        for (Watch w : ws) {
            if (w != null) {
                w.stop();
            }
        }
    }
}
