package io.pistore.spi;

import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What a host knows of the path states of every peer of its target list (the host half of the ANA
 * model), fed by the transport's watch of each peer, read by the host's queues
 * ({@link ReconnectingHostQueue#follow}) to send I/O down the optimized path.
 *
 * <p>A peer is unknown until its first report, and unreachable once its watch lost it (every volume
 * inaccessible there) until it reports again. The optimized peer for a set of volumes is one whose
 * last report says optimized for each: the host's current peer when it is one (no move without a
 * reason), else the one whose report changed last (during a leadership change the old leader may
 * still say optimized for a moment, or, frozen, say nothing new: the newer news wins). Listeners
 * run after each change, on the thread that reported it; they must not block. Thread-safe.
 */
public final class PeerPaths {
    private final List<String> peers;
    private final PathReport[] reports;
    private final boolean[] unreachable;
    /** When each peer's report last changed, in the order of changes (0: never). */
    private final long[] changed;
    private long changes;
    private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

    public PeerPaths(List<String> peers) {
        this.peers = List.copyOf(peers);
        this.reports = new PathReport[peers.size()];
        this.unreachable = new boolean[peers.size()];
        this.changed = new long[peers.size()];
    }

    /** The peers, as named in log lines, in the target's order. */
    public List<String> peers() {
        return peers;
    }

    /** Peer {@code peer} reported {@code r}. */
    public void report(int peer, PathReport r) {
        synchronized (this) {
            if (!unreachable[peer] && r.equals(reports[peer])) {
                return;
            }
            reports[peer] = r;
            unreachable[peer] = false;
            changed[peer] = ++changes;
        }
        tell();
    }

    /** Peer {@code peer}'s watch lost it: nothing is served there until it reports again. */
    public void unreachable(int peer) {
        synchronized (this) {
            if (unreachable[peer]) {
                return;
            }
            unreachable[peer] = true;
            changed[peer] = ++changes;
        }
        tell();
    }

    /** Peer {@code peer}'s state for {@code volume}: null while unknown, inaccessible while unreachable. */
    public synchronized PathState state(int peer, String volume) {
        if (unreachable[peer]) {
            return PathState.INACCESSIBLE;
        }
        PathReport r = reports[peer];
        return r == null ? null : r.state(volume);
    }

    /** Whether anything is known of peer {@code peer}: a report, or its watch lost it. */
    public synchronized boolean known(int peer) {
        return reports[peer] != null || unreachable[peer];
    }

    /** Whether peer {@code peer}'s watch has lost it. */
    public synchronized boolean isUnreachable(int peer) {
        return unreachable[peer];
    }

    /**
     * The peer optimized for every one of {@code volumes}: {@code current} if it is, else the one
     * whose report changed last; -1 when none is (or none has reported yet).
     */
    public synchronized int optimized(Collection<String> volumes, int current) {
        if (optimizedFor(current, volumes)) {
            return current;
        }
        int best = -1;
        for (int p = 0; p < reports.length; p++) {
            if (optimizedFor(p, volumes) && (best < 0 || changed[p] > changed[best])) {
                best = p;
            }
        }
        return best;
    }

    private boolean optimizedFor(int p, Collection<String> volumes) {
        if (p < 0 || p >= reports.length || unreachable[p] || reports[p] == null || volumes.isEmpty()) {
            return false;
        }
        for (String v : volumes) {
            if (reports[p].state(v) != PathState.OPTIMIZED) {
                return false;
            }
        }
        return true;
    }

    /** Runs {@code listener} after every change from now on. */
    public void onChange(Runnable listener) {
        listeners.add(listener);
    }

    /** Stops running {@code listener}. */
    public void removeListener(Runnable listener) {
        listeners.remove(listener);
    }

    private void tell() {
        for (Runnable l : listeners) {
            l.run();
        }
    }

    @Override
    public synchronized String toString() {
        StringBuilder b = new StringBuilder();
        for (int p = 0; p < reports.length; p++) {
            b.append(p == 0 ? "" : ", ").append(peers.get(p)).append('=')
                    .append(unreachable[p] ? "unreachable" : reports[p] == null ? "unknown" : reports[p].states());
        }
        return b.toString();
    }
}
