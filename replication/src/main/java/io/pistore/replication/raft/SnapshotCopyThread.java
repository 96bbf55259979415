package io.pistore.replication.raft;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * The one snapshot copy of a replica under way at a time, each on a thread of its own: the copy a
 * snapshot takes, or the copy an on-demand snapshot gets when it is shipped. A stop, a restore, a
 * removal or a growth cancels it ({@link #end}) by interrupting its thread, which deletes its part
 * copy. The caller decides under its own lock whether a copy may start.
 */
final class SnapshotCopyThread {
    private Thread copying; // guarded by this

    /** Whether a copy is under way. */
    synchronized boolean busy() {
        return copying != null && copying.isAlive();
    }

    /** Starts {@code copy} on a thread named {@code name}; what it makes or throws goes to the future. */
    synchronized <T> CompletableFuture<T> start(String name, Callable<T> copy) {
        CompletableFuture<T> done = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                done.complete(copy.call());
            } catch (Exception | Error e) {
                done.completeExceptionally(e);
            }
        }, name);
        t.setDaemon(true);
        copying = t;
        t.start();
        return done;
    }

    /**
     * What {@code done} made; a failure, or an interrupt of the waiting thread, as {@link
     * IllegalStateException} whose message starts with {@code failure}.
     */
    static <T> T await(CompletableFuture<T> done, String failure) {
        try {
            return done.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(failure + ": interrupted while waiting for it", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(failure + ": " + e.getCause(), e.getCause());
        }
    }

    /** Waits for the copy under way, if any, to end; {@code cancel} interrupts it first. */
    void end(boolean cancel) {
        Thread t;
        synchronized (this) {
            t = copying;
            copying = null;
        }
        if (t == null) {
            return;
        }
        if (cancel) {
            t.interrupt();
        }
        boolean interrupted = false;
        while (t.isAlive()) {
            try {
                t.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
