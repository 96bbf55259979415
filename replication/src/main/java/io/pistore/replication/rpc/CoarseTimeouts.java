package io.pistore.replication.rpc;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * Timeouts of many short calls at a coarse grain: a call's future fails with a {@link
 * TimeoutException} at most about one tick after its time is up, as {@link CompletableFuture#orTimeout}
 * would fail it on time. {@code orTimeout} puts a task on the JDK's one timer thread per call and takes
 * it off when the call ends; between a log entry's calls that timer's queue is empty, and the first
 * call of the next entry wakes the timer thread to wait for it: a thread switch per entry, on every
 * peer. Here one daemon thread looks over the pending calls once a tick while there are any (and
 * for a while after the last), and sleeps without ticking once the calls stop.
 *
 * <p>Any thread may add a call; one thread looks them over. A call's future is failed by that thread.
 */
public final class CoarseTimeouts {
    /** How often the pending calls are looked over while there are any. */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    /** Ticks go on this long after the last pending call ended, so a steady load never has to wake the thread. */
    static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private static final class Shared {
        static final CoarseTimeouts INSTANCE = new CoarseTimeouts("pistore-timeouts");
    }

    private record Call(CompletableFuture<?> future, long deadlineNanos) {
    }

    /** Calls added since the last look; any thread offers, the looking thread takes. */
    private final ConcurrentLinkedQueue<Call> added = new ConcurrentLinkedQueue<>();
    /** The calls pending at the last look; the looking thread's alone. */
    private final List<Call> pending = new ArrayList<>();
    private final Thread thread;
    /** The looking thread sleeps until a call is added (it saw none pending for {@link #IDLE_NANOS}). */
    private volatile boolean sleeping;

    CoarseTimeouts(String name) {
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** The timeouts of this process's calls: one thread for all. */
    public static CoarseTimeouts shared() {
        return Shared.INSTANCE;
    }

    /**
     * Fails {@code f} with a {@link TimeoutException} unless it completes within {@code timeoutMs}
     * (late by at most about a tick); returns {@code f}.
     */
    public <T> CompletableFuture<T> within(CompletableFuture<T> f, long timeoutMs) {
        if (f.isDone()) {
            return f;
        }
        added.offer(new Call(f, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(0, timeoutMs))));
        if (sleeping) { // read after the offer: a thread about to sleep looks at the queue after it says so
            LockSupport.unpark(thread);
        }
        return f;
    }

    /** Whether the looking thread sleeps until a call is added (tests). */
    boolean sleepingNow() {
        return sleeping && thread.getState() == Thread.State.WAITING;
    }

    private void run() {
        long idleSince = System.nanoTime();
        for (;;) {
            look();
            long now = System.nanoTime();
            if (!pending.isEmpty()) {
                idleSince = now;
            } else if (now - idleSince >= IDLE_NANOS) {
                sleeping = true;
                if (added.isEmpty()) {
                    LockSupport.park(this);
                }
                sleeping = false;
                idleSince = System.nanoTime();
                continue;
            }
            LockSupport.parkNanos(this, TICK_NANOS);
        }
    }

    /** Takes in the calls added, drops those that ended, and fails those whose time is up. */
    private void look() {
        for (Call c; (c = added.poll()) != null; ) {
            pending.add(c);
        }
        long now = System.nanoTime();
        int kept = 0;
        for (int i = 0; i < pending.size(); i++) {
            Call c = pending.get(i);
            if (c.future.isDone()) {
                continue;
            }
            if (now - c.deadlineNanos >= 0) {
                c.future.completeExceptionally(new TimeoutException());
                continue;
            }
            pending.set(kept++, c);
        }
        pending.subList(kept, pending.size()).clear();
    }
}
