package io.pistore.replication.raft;

import io.pistore.replication.ReplicationException;
import io.pistore.spi.SharedVolumeState.Versioned;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * What a peer shows of its replica's shared state ({@link ReplicaSharedState}): the newest version it
 * applied, its watchers and the waits for a version. One per volume on a peer, kept across restarts of
 * the volume's group there (a restart begins again from the last snapshot and applies the log after
 * it: the versions it passes again are not shown twice), so the watchers a volume registered once stay.
 * Only moves forward. Shown by the applier thread; read from any thread.
 */
public final class SharedStateBoard {
    private static final Versioned NEVER_SET = new Versioned(0, new byte[0]);
    /** Completes the waits, so that what a waiter runs next never runs on the applier thread. */
    private static final Executor WAKER = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "pistore-shared-state");
        t.setDaemon(true);
        return t;
    });

    private volatile Versioned current = NEVER_SET;
    private final CopyOnWriteArrayList<Consumer<Versioned>> watchers = new CopyOnWriteArrayList<>();
    private final Queue<Waiter> waiters = new ConcurrentLinkedQueue<>();
    private final Consumer<String> log;

    private record Waiter(long version, CompletableFuture<Versioned> done) {
    }

    public SharedStateBoard() {
        this(line -> { });
    }

    /** {@code log} hears a watcher that threw. */
    public SharedStateBoard(Consumer<String> log) {
        this.log = log;
    }

    /** The newest version this peer applied (version 0, empty: never set). A volatile read. */
    public Versioned current() {
        return current;
    }

    /** Calls {@code watcher} on the applier thread with each version shown from now on, in order. */
    public void watch(Consumer<Versioned> watcher) {
        watchers.add(java.util.Objects.requireNonNull(watcher, "watcher"));
    }

    /** Stops calling {@code watcher}. */
    public void unwatch(Consumer<Versioned> watcher) {
        watchers.remove(watcher);
    }

    /**
     * Completes (off the applier thread) once a version of at least {@code version} is shown, at once
     * if it is; with a {@link ReplicationException} naming {@code what} after {@code timeoutMs}.
     */
    public CompletableFuture<Versioned> await(long version, long timeoutMs, String what) {
        Versioned now = current;
        if (now.version() >= version) {
            return CompletableFuture.completedFuture(now);
        }
        Waiter w = new Waiter(version, new CompletableFuture<>());
        waiters.add(w);
        // Added before this second look, and shown before the board looks at the waits: one of them sees it.
        now = current;
        if (now.version() >= version && waiters.remove(w)) {
            w.done.complete(now);
            return w.done;
        }
        CompletableFuture.delayedExecutor(Math.max(0, timeoutMs), TimeUnit.MILLISECONDS, WAKER).execute(() -> {
            if (waiters.remove(w)) {
                w.done.completeExceptionally(new ReplicationException(what + ": this peer applied shared-state version "
                        + current.version() + ", not " + version + ", within " + timeoutMs + " ms"));
            }
        });
        return w.done;
    }

    /**
     * Shows {@code v} when it is newer than the version shown (an older one, passed again after a
     * restart of the group, is not): the watchers hear it, then the waits it satisfies complete.
     * Called on the applier thread (or at a restore, before anything is applied).
     */
    void show(Versioned v) {
        if (v.version() <= current.version()) {
            return;
        }
        current = v;
        for (Consumer<Versioned> w : watchers) {
            try {
                w.accept(v);
            } catch (RuntimeException e) {
                log.accept("a watcher of shared-state version " + v.version() + " failed: " + e);
            }
        }
        if (!waiters.isEmpty()) {
            for (Waiter w : waiters) {
                if (w.version <= v.version() && waiters.remove(w)) {
                    WAKER.execute(() -> w.done.complete(v));
                }
            }
        }
    }
}
