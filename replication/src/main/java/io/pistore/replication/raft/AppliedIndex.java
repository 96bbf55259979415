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

    public long get() {
        return applied;
    }

    /** Called by the one applier thread, in log order (or at a restore, before any read). */
    void advance(long index) {
        if (index <= applied) {
            return;
        }
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
