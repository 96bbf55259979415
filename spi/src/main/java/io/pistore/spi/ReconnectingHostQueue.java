package io.pistore.spi;

import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
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
 * attempts log one line at the first, then every tenth. What a single target lists on a reconnect is
 * what it serves (a volume created, deleted or grown meanwhile; requests are checked against the new
 * list), but a volume it lists in another block format than known is refused (NO_SUCH_VOLUME, "open
 * it again") until {@link #relistVolumes} names it. With a list of peers, a peer that lists a known
 * volume in another block format is not used (a configuration mistake); volumes known to the queue
 * are those of the first connection and any {@link #relistVolumes} added.
 *
 * <p>With a list of more than one peer, a peer that answers {@link Status#NO_SUCH_VOLUME} for a
 * volume the host uses is treated as lost too (the volume may live on the other peers: a replica
 * deleted or dropped on that peer only): that request fails with {@link Status#TRANSPORT_ERROR},
 * the connection is closed, and the queue moves to the next peer, logging
 * {@code failed over from A to B ...: A has no volume v1}. A peer that no longer lists the volume is
 * passed over the same way when the queue reconnects. Bounded: once every peer of the list has been
 * found without the volume (with no answer for it from any in between), the queue stops moving for
 * it: requests of it fail with {@link Status#NO_SUCH_VOLUME}, as with one address, on a peer that
 * lists the other volumes. An answer for the volume other than that one forgets the peers found
 * without it. A list of one behaves as before: only a lost connection moves it.
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
    /** The volumes this queue knows of (the first connection's, and those a relist added). */
    private KnownVolumes known;
    /** Per volume, the peers found without it since it last answered (guarded by this). */
    private final Map<String, BitSet> missing = new HashMap<>();
    /** Whether {@link #missing} may hold anything: answers skip the lock while it does not. */
    private volatile boolean anyMissing;
    /** Why the queue closed its connection itself (a peer without a volume), for the failover line. */
    private volatile String dropReason;
    /** The path states of the target's peers, once {@link #follow} was called; null before. */
    private volatile PeerPaths paths;
    /** Whether a move to the optimized peer is scheduled or running. */
    private final java.util.concurrent.atomic.AtomicBoolean moving = new java.util.concurrent.atomic.AtomicBoolean();
    /** Requests waiting for a connection to be sent on again (only while following path states). */
    private final java.util.concurrent.ConcurrentLinkedQueue<Parked> parked = new java.util.concurrent.ConcurrentLinkedQueue<>();
    /** The connection being dropped for a missing volume: its answers count as from a lost one. */
    private volatile C leaving;
    /** Moves to the optimized peer since connect (written by the attempting thread). */
    private volatile long moves;
    /** This queue's write stream ({@link WriteFence#key}): random, never 0. */
    private final long fenceKey = fenceKey();
    /** The epoch of the last connection adopted ({@link WriteFence#epoch}), the last write's number ({@link WriteFence#seq}). */
    private final AtomicLong epochs = new AtomicLong(), seqs = new AtomicLong();

    /** A request waiting for a connection, until its deadline. */
    private record Parked(BlockRequest request, CompletableFuture<Completion> future, long deadlineNanos, String why) {
    }

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
        known = new KnownVolumes(volumesOf(first));
        adopt(first, peerIndex);
    }

    /**
     * A peer that answered but cannot be used (it holds a volume the queue uses in another format): logged
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

    /** The volumes {@code c}'s peer listed when {@code c} connected, or last relisted. */
    protected abstract List<VolumeInfo> volumesOf(C c);

    /** Asks {@code c}'s peer for its volumes again; by default {@link #volumesOf} unchanged. */
    protected CompletableFuture<List<VolumeInfo>> relist(C c) {
        return CompletableFuture.completedFuture(volumesOf(c));
    }

    /** The volumes of the connection in use (or of the lost one, while reconnecting). */
    public final List<VolumeInfo> volumes() {
        return volumesOf(current);
    }

    /**
     * Asks the peer in use for its volumes again; the queue then knows them, so that one created
     * since it connected may be used (and, with a list of peers, followed from peer to peer as those
     * of the first connection are). While reconnecting, or when the peer does not answer, the list
     * known before.
     */
    public final CompletableFuture<List<VolumeInfo>> relistVolumes() {
        C c = current;
        if (isShut(c)) {
            return CompletableFuture.completedFuture(volumesOf(c));
        }
        return relist(c).handle((list, t) -> {
            if (t != null) {
                return volumesOf(c);
            }
            if (peers.size() == 1) {
                known.replace(list);
            } else {
                known.learn(list);
            }
            return list;
        });
    }

    /**
     * Has {@code c} pass every answer of its peer to a request through {@code screen} before it
     * completes the request (only called for a list of more than one peer).
     */
    protected abstract void screenAnswers(C c, AnswerScreen screen);

    /**
     * Closes {@code c} from any thread as if it were lost, with {@code reason}: its requests in flight
     * fail with {@link Status#TRANSPORT_ERROR} and its {@link #onLost} listener is told. May return
     * before it has happened; must not block the thread completing requests. Idempotent.
     */
    protected abstract void drop(C c, String reason);

    private static long fenceKey() {
        long k;
        do {
            k = java.util.concurrent.ThreadLocalRandom.current().nextLong();
        } while (k == 0);
        return k;
    }

    /**
     * Has connection {@code c}, before it carries any request, stamp every request with {@code f}
     * ({@link WriteFence}): each connection this queue adopts gets a higher epoch than the one before.
     * By default nothing (a transport whose wire carries no fence).
     */
    protected void fence(C c, WriteFence f) {
    }

    /** The fence the connection adopted last carries. */
    public final WriteFence currentFence() {
        return new WriteFence(fenceKey, Math.max(1, epochs.get()));
    }

    private void adopt(C c, int p) {
        fence(c, new WriteFence(fenceKey, epochs.incrementAndGet()));
        if (peers.size() > 1) {
            screenAnswers(c, (volume, answer) -> screen(c, p, volume, answer));
        }
        current = c;
        onLost(c, reason -> {
            if (c == current) { // a connection left behind by a move is no loss
                lost(reason);
            }
        });
        resendParked();
    }

    /**
     * An answer of peer {@code p} (connection {@code c}) to a request of {@code volume}. NO_SUCH_VOLUME
     * marks the peer as without the volume and, unless every peer is, moves the queue on; any other
     * answer from the peer (not a transport failure) shows the volume is there, so the marks go.
     */
    private Completion screen(C c, int p, String volume, Completion answer) {
        if (answer.status() == Status.NO_SUCH_VOLUME) {
            if (!known.names().contains(volume) || !reconnectEnabled()) {
                return answer; // a name the queue never heard listed, or a queue that does not move
            }
            boolean everywhere;
            synchronized (this) {
                everywhere = markMissing(volume, p);
            }
            if (everywhere || closed) {
                return answer;
            }
            String why = peers.get(p) + " has no volume " + volume;
            if (c == current) { // a late answer on a connection already left behind changes nothing
                leaving = c;
                dropReason = why;
                drop(c, why);
            }
            return Completion.failure(Status.TRANSPORT_ERROR, why + "; moving to another peer of " + peersText());
        }
        if (anyMissing && answer.status() != Status.TRANSPORT_ERROR) {
            synchronized (this) {
                missing.remove(volume);
                anyMissing = !missing.isEmpty();
            }
        }
        return answer;
    }

    /** Marks peer {@code p} as without {@code volume}; whether every peer is now (guarded by this). */
    private boolean markMissing(String volume, int p) {
        BitSet b = missing.computeIfAbsent(volume, v -> new BitSet());
        b.set(p);
        anyMissing = true;
        return b.cardinality() >= peers.size();
    }

    private String peersText() {
        return String.join(",", peers);
    }

    /**
     * Why the queue must not use peer {@code p}, which lists {@code listed}, or null when it may. A
     * single target may: what it lists is what it serves now. With a list of peers, it may lack a
     * known volume only once every peer has been found without it (its requests then answer
     * NO_SUCH_VOLUME). Throws {@link PeerUnusable} for a peer of a list that holds a known volume in
     * another block format (a configuration mistake).
     */
    private String refusal(int p, List<VolumeInfo> listed) throws PeerUnusable {
        if (peers.size() == 1) {
            return null;
        }
        String reformatted = known.reformatted(listed);
        if (reformatted != null) {
            throw new PeerUnusable("it lists a volume this queue uses in another format (" + reformatted + "); not using it");
        }
        List<String> elsewhere = new ArrayList<>();
        synchronized (this) {
            for (String v : known.lacking(listed)) {
                if (!markMissing(v, p)) {
                    elsewhere.add(v);
                }
            }
        }
        return elsewhere.isEmpty() ? null : "it has no volume " + String.join(", ", elsewhere);
    }

    @Override
    public CompletableFuture<Completion> submit(BlockRequest original) {
        BlockRequest request = original.numbered(fenceKey, seqs::incrementAndGet); // every copy sent keeps it
        known.use(request.volume());
        if (paths != null) {
            return submitFollowing(request, System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(
                    failoverWaitMillis()));
        }
        C c = current;
        if (isShut(c) && !closed && reconnectEnabled()) {
            String why = lostReason;
            return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR,
                    "connection to " + peers.get(lostPeer) + " lost" + (why == null ? "" : " (" + why + ")")
                            + "; reconnecting"));
        }
        String stale = known.staleReason(request.volume());
        if (stale != null) {
            return CompletableFuture.completedFuture(Completion.failure(Status.NO_SUCH_VOLUME, stale));
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
        if (paths != null && usable(current)) {
            attempts = 0; // a move to the optimized peer took over since the loss
            return;
        }
        if (attempts == 0) {
            lostIndex = lostPeer;
            beforeReconnecting(current);
        }
        attempts++;
        int p = (peerIndex + 1) % peers.size(); // round robin: the first attempt goes to the peer after the one lost
        PeerPaths pp = paths;
        // the path states name where the volumes are served best now: the next in turn if it is, or
        // while nothing is known of it yet (round robin then, as without path states)
        int best = pp == null || !pp.known(p) ? -1 : pp.optimized(known.followed(), p);
        if (best >= 0) {
            p = best;
        }
        peerIndex = p;
        String peer = peers.get(p);
        C c;
        String passOver;
        try {
            c = connect(p);
            try {
                passOver = refusal(p, volumesOf(c));
            } catch (PeerUnusable e) {
                release(c);
                throw e;
            }
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
        if (passOver != null) {
            // it answered, but the volume may live on another peer of the list: try the next one
            release(c);
            log.log(System.Logger.Level.INFO, "pistore " + transport + ": passed over " + peer + " (queue " + index
                    + "): " + passOver);
            retryLater();
            return;
        }
        if (closed) {
            release(c);
            return;
        }
        String after = attempts + (attempts == 1 ? " attempt" : " attempts");
        String changes = known.changes(volumesOf(c));
        String lists = changes == null ? "" : "; it now lists: " + changes;
        if (p == lostIndex) {
            log.log(System.Logger.Level.INFO, "pistore " + transport + ": reconnected to " + peer + " (queue " + index
                    + ") after " + after + lists);
        } else {
            String why = dropReason;
            log.log(System.Logger.Level.INFO, "pistore " + transport + ": failed over from " + peers.get(lostIndex) + " to "
                    + peer + " (queue " + index + ") after " + after + (why == null ? "" : ": " + why) + lists);
        }
        if (peers.size() == 1) {
            known.reconnected(volumesOf(c));
        }
        attempts = 0;
        lostReason = null;
        dropReason = null;
        reconnects++; // one writer: the attempting thread
        adopt(c, p);
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
        PeerPaths pp = paths;
        if (pp != null) {
            pp.removeListener(pathListener);
        }
        release(current);
        failParked(true);
    }

    /** Whether {@link #close} was called (or the transport closed under an attempt). */
    protected final boolean isClosed() {
        return closed;
    }

    // ------------------------------------------------------------------ following path states

    private final Runnable pathListener = this::pathsChanged;

    /**
     * Follows the path states of the target's peers from now on (a list of more than one peer whose
     * transport watches them): the queue moves to the peer optimized for the volumes it uses when its
     * own peer is not, without waiting for a failure; a reconnect goes to the optimized peer first.
     * Requests are then never failed for a lost or left connection while another may come: one that
     * fails with {@link Status#TRANSPORT_ERROR} because its connection was lost or left behind, and
     * one submitted while the queue reconnects, wait and are sent again on the next connection, for
     * at most {@link #failoverWaitMillis} from their submission (then they fail as before). A write
     * sent twice stores the same blocks twice, and the first copy can arrive last: every connection
     * carries a higher {@link WriteFence} epoch than the one before, so a replicated target refuses
     * that stale copy once a newer one was applied ({@link Status#FENCED}), and a request refused so
     * is sent again here on the current connection.
     */
    public final void follow(PeerPaths p) {
        if (peers.size() < 2 || !reconnectEnabled()) {
            return;
        }
        paths = p;
        p.onChange(pathListener);
        pathsChanged();
    }

    /**
     * How long a request may wait for a connection while the queue follows path states: an election
     * and a reconnect with margin. By default 10 s.
     */
    protected long failoverWaitMillis() {
        return 10_000;
    }

    /** How long a connection left by a move keeps its requests in flight before they are sent again elsewhere. */
    protected long drainMillis() {
        return 2_000;
    }

    /** How often this queue moved to the optimized peer of its own accord (not after a failure). */
    public final long moves() {
        return moves;
    }

    private void pathsChanged() {
        PeerPaths pp = paths;
        if (pp == null || closed) {
            return;
        }
        C c = current;
        int best = pp.optimized(known.followed(), peerIndex);
        if (best < 0 || best == peerIndex || isShut(c)) {
            return; // staying, none optimized, or a reconnect under way (it prefers the optimized peer)
        }
        if (moving.compareAndSet(false, true) && !schedule(this::move, 0)) {
            moving.set(false);
        }
    }

    /** Moves to the optimized peer (on the transport's reconnect thread). */
    private void move() {
        try {
            PeerPaths pp = paths;
            C old = current;
            int from = peerIndex;
            int p = pp.optimized(known.followed(), from);
            if (closed || p < 0 || p == from || isShut(old)) {
                return;
            }
            C c;
            try {
                c = connect(p);
                String passOver;
                try {
                    passOver = refusal(p, volumesOf(c));
                } catch (PeerUnusable e) {
                    release(c);
                    throw e;
                }
                if (passOver != null) {
                    release(c);
                    return;
                }
            } catch (InterruptedException e) {
                return;
            } catch (IOException e) {
                log.log(System.Logger.Level.WARNING, "pistore " + transport + ": cannot move to the optimized peer "
                        + peers.get(p) + " (queue " + index + "): " + e.getMessage());
                return;
            }
            if (closed || current != old || isShut(old)) {
                release(c); // closed or lost meanwhile: the reconnect takes over
                return;
            }
            peerIndex = p;
            moves++;
            log.log(System.Logger.Level.INFO, "pistore " + transport + ": moved from " + peers.get(from) + " to "
                    + peers.get(p) + " (queue " + index + "): " + peers.get(p) + " is optimized for "
                    + String.join(", ", new java.util.TreeSet<>(known.followed())) + ", " + peers.get(from) + " "
                    + describe(pp, from));
            adopt(c, p);
            retire(old, from, System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(drainMillis()));
        } finally {
            moving.set(false);
        }
        pathsChanged(); // a change that came while moving
    }

    private String describe(PeerPaths pp, int peer) {
        if (pp.isUnreachable(peer)) {
            return "is unreachable";
        }
        java.util.Set<String> states = new java.util.TreeSet<>();
        for (String v : known.followed()) {
            PathState s = pp.state(peer, v);
            states.add(s == null ? "unknown" : s.label());
        }
        return "is " + String.join("/", states);
    }

    /**
     * A connection left by a move: its requests in flight finish there (the peer forwards), unless
     * the peer is unreachable or they outlast {@code deadline}; then it is released and they are
     * sent again on the current connection.
     */
    private void retire(C old, int peer, long deadline) {
        PeerPaths pp = paths;
        if (old.inFlight() == 0 || isShut(old) || closed || (pp != null && pp.isUnreachable(peer))
                || System.nanoTime() - deadline >= 0) {
            release(old);
            return;
        }
        if (!schedule(() -> retire(old, peer, deadline), 5)) {
            release(old);
        }
    }

    private CompletableFuture<Completion> submitFollowing(BlockRequest request, long deadline) {
        C c = current;
        if (closed) {
            return c.submit(request);
        }
        if (!usable(c)) {
            CompletableFuture<Completion> f = new CompletableFuture<>();
            park(new Parked(request, f, deadline, lostText()));
            return f;
        }
        return c.submit(request).thenCompose(answer -> {
            boolean fenced = answer.status() == Status.FENCED;
            if ((answer.status() != Status.TRANSPORT_ERROR && !fenced) || closed
                    || (!fenced && c == current && !isShut(c) && c != leaving) || System.nanoTime() - deadline >= 0) {
                return CompletableFuture.completedFuture(answer);
            }
            // its connection was lost or left behind, or a newer connection's write came first (FENCED):
            // send it again on the current one
            CompletableFuture<Completion> f = new CompletableFuture<>();
            park(new Parked(request, f, deadline, answer.message()));
            return f;
        });
    }

    /** Whether requests may go to {@code c}: up, and not being dropped. */
    private boolean usable(C c) {
        return !isShut(c) && c != leaving;
    }

    private String lostText() {
        String why = lostReason;
        return "connection to " + peers.get(lostPeer) + " lost" + (why == null ? "" : " (" + why + ")");
    }

    private void park(Parked p) {
        parked.add(p);
        if (usable(current) || closed) {
            resendParked(); // a connection came (or the queue closed) while this one parked
            return;
        }
        long left = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(p.deadlineNanos() - System.nanoTime());
        if (!schedule(() -> failParked(false), Math.max(1, left + 1))) {
            failParked(true);
        }
    }

    /** Sends the parked requests on the current connection, if it is up. */
    private void resendParked() {
        if (closed) {
            failParked(true);
            return;
        }
        if (!usable(current)) {
            return;
        }
        Parked p;
        while ((p = parked.poll()) != null) {
            Parked q = p;
            submitFollowing(q.request(), q.deadlineNanos()).whenComplete((a, t) -> {
                if (t != null) {
                    q.future().completeExceptionally(t);
                } else {
                    q.future().complete(a);
                }
            });
        }
    }

    /** Fails the parked requests whose wait is over (all of them with {@code all}). */
    private void failParked(boolean all) {
        long now = System.nanoTime();
        for (Parked p : parked) {
            if ((all || now - p.deadlineNanos() >= 0) && parked.remove(p)) {
                p.future().complete(Completion.failure(Status.TRANSPORT_ERROR, p.why() + "; no peer took the request within "
                        + failoverWaitMillis() + " ms"));
            }
        }
    }

    /** The peer this queue uses now, or tries last while reconnecting. */
    public final String peer() {
        return peers.get(peerIndex);
    }
}
