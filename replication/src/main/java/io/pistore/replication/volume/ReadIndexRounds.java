package io.pistore.replication.volume;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Read-index requests of a follower to its leader, shared by concurrent reads: one request out at a
 * time to one leader, and reads that come while it is out share the next (sent when it is answered),
 * so concurrent reads cost one round trip between them, never an answer to a request sent before
 * they came (which could predate a write acknowledged before they started). Thread-safe.
 *
 * <p>A read for another leader than the one the request out went to (this peer learned of a new
 * leader: the one asked died, froze or stepped down) does not wait for that request, whose answer may
 * never come: the reads waiting go at once to the leader now known, and the old request's late answer
 * completes only the reads it was sent for.
 *
 * @param <R> the answer of one request
 * @param <P> a leader's identity
 */
final class ReadIndexRounds<R, P> {
    /** How often a read waiting for its answer looks whether the leader it asked still leads. */
    static final long LEADER_LOOK_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final Function<P, CompletableFuture<R>> send;
    private final Supplier<P> leaderNow;
    /** The reads waiting for the next request, or null (guarded by this). */
    private CompletableFuture<R> next;
    /** The leader the latest request went to while it is out, else null (guarded by this). */
    private P asked;
    /** Requests sent; the latest one's answer sends the next (guarded by this). */
    private long sent;

    /**
     * {@code send} sends one request to a leader (it may fail the future, never throw);
     * {@code leaderNow} is the leader this peer knows now, or null.
     */
    ReadIndexRounds(Function<P, CompletableFuture<R>> send, Supplier<P> leaderNow) {
        this.send = send;
        this.leaderNow = leaderNow;
    }

    /** The answer of a request to {@code leader} sent after this call. */
    CompletableFuture<R> ask(P leader) {
        CompletableFuture<R> mine;
        long seq = 0;
        synchronized (this) {
            if (next == null) {
                next = new CompletableFuture<>();
            }
            mine = next;
            if (asked == null || !asked.equals(leader)) {
                asked = leader;
                next = null;
                seq = ++sent;
            }
        }
        if (seq != 0) {
            sendFor(leader, mine, seq);
        }
        return mine;
    }

    /** Sends request number {@code seq} for {@code waiting}; once answered, if still the latest, the next for the reads that came meanwhile. */
    private void sendFor(P leader, CompletableFuture<R> waiting, long seq) {
        CompletableFuture<R> f;
        try {
            f = send.apply(leader);
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        f.whenComplete((r, t) -> {
            if (t != null) {
                waiting.completeExceptionally(t);
            } else {
                waiting.complete(r);
            }
            CompletableFuture<R> more = null;
            P to = null;
            long nextSeq = 0;
            synchronized (this) {
                if (seq == sent) {
                    more = next;
                    next = null;
                    if (more != null) {
                        P now = leaderNow.get();
                        to = now != null ? now : leader;
                        nextSeq = ++sent;
                    }
                    asked = to;
                }
            }
            if (more != null) {
                sendFor(to, more, nextSeq);
            }
        });
    }

    /**
     * The answer of {@code f}, asked of {@code leader}, waited for until {@code endNanos} (then a
     * {@link TimeoutException}); null as soon as this peer knows another leader or none, since the
     * leader asked died, froze or stepped down and its answer may never come: the caller reads
     * through the group, which asks whoever leads.
     */
    R awaitWhileLeading(CompletableFuture<R> f, P leader, long endNanos)
            throws ExecutionException, InterruptedException, TimeoutException {
        while (true) {
            long left = endNanos - System.nanoTime();
            if (left <= 0) {
                throw new TimeoutException();
            }
            try {
                return f.get(Math.min(left, LEADER_LOOK_NANOS), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                if (!leader.equals(leaderNow.get())) {
                    return null;
                }
            }
        }
    }
}
