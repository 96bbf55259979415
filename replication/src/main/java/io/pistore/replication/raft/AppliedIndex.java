package io.pistore.replication.raft;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The index of the last log entry a replica has applied, and a wait for it to reach a given index: a
 * leader-local read waits here until everything committed before it started is in the replica. The
 * state machine's applier thread advances it after each entry; waking waiters costs a lock only while
 * someone waits, so the write path pays nothing when no read is waiting.
 */
public final class AppliedIndex {
    private final Object monitor = new Object();
    private final AtomicInteger waiters = new AtomicInteger();
    private volatile long applied = -1;
    /** While at least 0: the index below which nothing is shown, the replica's files not yet whole. */
    private volatile long settlesAt = -1;

    /** The index shown: the last one applied, unless the replica is {@link #settling}. */
    public long get() {
        return applied;
    }

    /**
     * Holds the index shown where it is until the replica has applied {@code index}: its files were
     * restored from a snapshot copied while the entries up to it were applied, so blocks they wrote
     * may be torn until each is applied again. Called at a restore, before any read.
     */
    void holdUntil(long index) {
        if (index > applied) {
            settlesAt = index;
        }
    }

    /** Whether the replica's files may still hold blocks of a restored copy torn between two entries. */
    public boolean settling() {
        return settlesAt >= 0;
    }

    /** Called by the one applier thread, in log order (or at a restore, before any read). */
    void advance(long index) {
        if (index <= applied || index < settlesAt) {
            return;
        }
        settlesAt = -1;
        applied = index;
        // A waiter registers before it reads {@code applied}, so it either sees this index or is counted here.
        if (waiters.get() > 0) {
            synchronized (monitor) {
                monitor.notifyAll();
            }
        }
    }

    /** Waits until the applied index is at least {@code index}; false if {@code timeoutMs} passed first. */
    public boolean await(long index, long timeoutMs) throws InterruptedException {
        if (applied >= index) {
            return true;
        }
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        synchronized (monitor) {
            waiters.incrementAndGet();
            try {
                while (applied < index) {
                    long left = end - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    TimeUnit.NANOSECONDS.timedWait(monitor, left);
                }
                return true;
            } finally {
                waiters.decrementAndGet();
            }
        }
    }
}
