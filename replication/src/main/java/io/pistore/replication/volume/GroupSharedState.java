package io.pistore.replication.volume;

import io.pistore.replication.rpc.CoarseTimeouts;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.raft.ApplyOutcome;
import io.pistore.replication.raft.ReplicaCommand;
import io.pistore.replication.raft.SharedStateBoard;
import io.pistore.spi.SharedVolumeState;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The shared state of a replicated volume on one of its peers ({@link SharedVolumeState}), kept in
 * the volume's Raft log: a change is a {@link ReplicaCommand.Op#SHARED_STATE} command, sent like the
 * volume's other commands (group commit, through the leader wherever this peer stands), which every
 * replica applies in log order among the writes ({@code ReplicaSharedState}); a write checked against
 * a version carries it in its fence, and every replica refuses it once the version has changed. What
 * this peer shows ({@link #current}, {@link #watch}, {@link #awaitVersion}) is its own replica's
 * {@link SharedStateBoard}, the same across leader changes and restarts of the group here.
 *
 * <p>The values handed out are shared, not copied: a reader must not change them.
 */
final class GroupSharedState implements SharedVolumeState {
    private final String name;
    private final Supplier<SharedStateBoard> find;
    /** Found on first use ({@link #find}), then kept: the peer keeps one board per volume. */
    private volatile SharedStateBoard board;
    private final CommitBatcher batcher;
    private final CommitNudge nudge;
    private final long timeoutMs;
    /** The one-line failure of a command the group did not commit (no quorum in time, a refusal). */
    private final BiFunction<String, Throwable, ReplicationException> commitFailure;
    /** Whether the volume is closed: its watchers then go at the next change. */
    private final java.util.function.BooleanSupplier closed;
    /** Waits, at most the attempt time, until every peer has committed a log index (Ratis's watch, ALL_COMMITTED). */
    private final java.util.function.LongFunction<CompletableFuture<?>> allCommitted;

    GroupSharedState(String name, Supplier<SharedStateBoard> find, CommitBatcher batcher, long timeoutMs,
            BiFunction<String, Throwable, ReplicationException> commitFailure, java.util.function.BooleanSupplier closed,
            java.util.function.LongFunction<CompletableFuture<?>> allCommitted) {
        this.closed = closed;
        this.allCommitted = allCommitted;
        this.name = name;
        this.find = find;
        this.batcher = batcher;
        this.nudge = new CommitNudge(batcher);
        this.timeoutMs = timeoutMs;
        this.commitFailure = commitFailure;
    }

    /** What tells the followers the commit index now ({@link CommitNudge}); the follower reads use it too. */
    CommitNudge nudge() {
        return nudge;
    }

    private SharedStateBoard board() {
        SharedStateBoard b = board;
        if (b == null) {
            b = find.get();
            board = b;
        }
        return b;
    }

    @Override
    public Versioned current() {
        return board().current();
    }

    /**
     * Sends the change through the log and, once the group decided it, waits until this peer's replica
     * shows the version the change left (its own, or the one that came first), all within the
     * operation timeout. A change whose first answer was lost and whose entry went into the log twice
     * is answered set (its copy carries the same nonce).
     */
    @Override
    public CompletableFuture<Boolean> compareAndSet(long expected, byte[] value) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        String what = "shared-state change from version " + expected;
        org.apache.ratis.protocol.Message m = ReplicaCommand.sharedState(expected, ThreadLocalRandom.current().nextLong() | 1,
                value); // a copy; refuses a value too large
        return decidedHere(m, what, deadline).thenApply(ApplyOutcome::sharedSet);
    }

    /**
     * Shared-state command {@code m} decided by the group, once this peer's replica shows the version
     * it left (or the failure naming {@code what}, within {@code deadline}).
     */
    private CompletableFuture<ApplyOutcome> decidedHere(org.apache.ratis.protocol.Message m, String what, long deadline) {
        SharedStateBoard b;
        try {
            b = board();
        } catch (IllegalStateException e) { // this peer holds no replica of the group now
            return CompletableFuture.failedFuture(new ReplicationException("volume " + name + ": " + what + ": "
                    + e.getMessage()));
        }
        return decided(m, what).thenCompose((ApplyOutcome o) -> here(b, o.sharedVersion(), deadline,
                "volume " + name + ": " + what + " " + o.describe()).thenApply(v -> o));
    }

    /**
     * Waits until this peer's replica shows {@code version}, decided by the group; a follower that has
     * not applied it yet nudges the leader to tell it the commit index ({@link CommitNudge}).
     */
    private CompletableFuture<Versioned> here(SharedStateBoard b, long version, long deadline, String what) {
        if (b.current().version() < version) {
            nudge.run();
        }
        return b.await(version, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()), what);
    }

    /** The outcome of shared-state command {@code m} once the group decided it, or the failure naming {@code what}. */
    private CompletableFuture<ApplyOutcome> decided(org.apache.ratis.protocol.Message m, String what) {
        return CoarseTimeouts.shared().within(batcher.submit(m), timeoutMs).handle((o, t) -> {
            if (t != null) {
                throw new CompletionException(commitFailure.apply(what, t));
            }
            if (!o.isShared()) {
                throw new CompletionException(o.failure("volume " + name + ": " + what + " " + o.describe()));
            }
            return o;
        });
    }

    /** A check through the log ({@link ReplicaCommand#sharedStateCheck}), then this peer's replica up to the version it found. */
    @Override
    public CompletableFuture<Versioned> sync() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        return decidedHere(ReplicaCommand.sharedStateCheck(), "shared-state check", deadline).thenApply(o -> current());
    }

    /**
     * A version is the log index of the change that set it: once every peer has committed that index
     * (the leader hears it in their answers to its next appends, which a nudge sends now), each
     * applies it right away. A peer that does not answer is waited for at most the attempt time.
     */
    @Override
    public CompletableFuture<Void> awaitEverywhere(long version) {
        nudge.run();
        return allCommitted.apply(version).handle((r, t) -> null);
    }

    @Override
    public CompletableFuture<Versioned> awaitVersion(long version) {
        String what = "volume " + name + ": waiting for shared-state version " + version;
        try {
            return board().await(version, timeoutMs, what);
        } catch (IllegalStateException e) {
            return CompletableFuture.failedFuture(new ReplicationException(what + ": " + e.getMessage()));
        }
    }

    /** On this peer's board, until the volume is closed (the peer keeps its board while it holds the replica). */
    @Override
    public void watch(Consumer<Versioned> watcher) {
        java.util.Objects.requireNonNull(watcher, "watcher");
        SharedStateBoard b = board();
        b.watch(new Consumer<Versioned>() {
            @Override
            public void accept(Versioned v) {
                if (closed.getAsBoolean()) {
                    b.unwatch(this);
                } else {
                    watcher.accept(v);
                }
            }
        });
    }
}
