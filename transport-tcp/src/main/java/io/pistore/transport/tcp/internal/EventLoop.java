package io.pistore.transport.tcp.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * One I/O thread: a selector, a task queue any thread may post to, and the connections whose output
 * must be flushed before the thread waits again.
 *
 * <p><b>Waiting: adaptive polite polling.</b> Blocking in {@code select()} costs a kernel wake-up
 * whenever the next event arrives (tens of microseconds when the CPU was idle); polling with
 * {@code selectNow()} costs a CPU. Before it blocks, the loop polls for a budget that follows the
 * recent gaps between events: an event that arrives while polling, or soon after blocking, sets the
 * budget to twice the gap it came after; a poll that catches nothing halves it. The budget is capped
 * by {@code pollNanos} while host requests are in flight on this loop (a response is due, as blk-mq
 * polls for an outstanding request) and by {@code spinNanos} otherwise (the next request of a busy
 * host usually follows within microseconds).
 *
 * <p>The loop polls <i>politely</i>: it yields the CPU between polls, and if one round of polling
 * took so long that the thread must have lost its CPU, other threads want that CPU (on a small
 * machine, often the peer's I/O thread that would produce the very event being polled for), so the
 * loop stops polling and blocks for the next 20 ms. Idle, a loop burns at most one budget (at most
 * {@code max(spinNanos, pollNanos)}) after its last event, and nothing after that.
 */
final class EventLoop implements Runnable {
    private static final long TIMER_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long MIN_SPIN_NANOS = 2_000;
    /** One poll round longer than this means the thread lost its CPU while polling. */
    private static final long CONTENDED_NANOS = 30_000;
    /** How long a loop that lost its CPU while polling blocks without polling. */
    private static final long BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    private static final boolean YIELD = Boolean.parseBoolean(System.getProperty("pistore.tcp.spinYield", "true"));

    private final Selector selector;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final List<Connection> dirty = new ArrayList<>();
    private final long spinNanos;
    private final long pollNanos;
    private volatile boolean blocking;
    private volatile boolean running = true;
    private volatile boolean terminated;
    /** Host requests in flight on connections of this loop (loop thread only). */
    private int awaiting;
    /** How long the next wait polls before it blocks (adapted, see waitForEvents). */
    private long spinBudget;
    private long backoffUntil = System.nanoTime();
    private long nextTimer;
    // counters for tests and notes (loop thread writes, others may read racy values)
    volatile long blockingWaits;
    volatile long polledEvents;
    volatile long contendedSpins;

    EventLoop(String name, long spinNanos, long pollNanos) {
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a selector", e);
        }
        this.spinNanos = spinNanos;
        this.pollNanos = pollNanos;
        this.thread = new Thread(this, name);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /**
     * Runs {@code task} on the loop thread. Returns false when the loop has stopped (the task then
     * never runs).
     */
    boolean execute(Runnable task) {
        if (terminated) {
            return false;
        }
        tasks.offer(task);
        if (blocking) {
            selector.wakeup();
        }
        if (terminated && tasks.remove(task)) {
            return false;
        }
        return true;
    }

    /** Registers a channel (loop thread only). */
    SelectionKey register(SelectableChannel ch, int ops, Selectable handler) throws IOException {
        return ch.register(selector, ops, handler);
    }

    /** Flushes {@code c} before the loop next waits (loop thread only). */
    void addDirty(Connection c) {
        dirty.add(c);
    }

    void awaitingChanged(int delta) {
        awaiting += delta;
    }

    void shutdown() {
        running = false;
        selector.wakeup();
        if (!inLoop()) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void run() {
        nextTimer = System.nanoTime() + TIMER_NANOS;
        try {
            while (running) {
                runTasks();
                flushDirty();
                if (waitForEvents() > 0) {
                    processKeys();
                }
                long now = System.nanoTime();
                if (now - nextTimer >= 0) {
                    nextTimer = now + TIMER_NANOS;
                    for (SelectionKey k : selector.keys()) {
                        if (k.isValid() && k.attachment() instanceof Selectable) {
                            ((Selectable) k.attachment()).onTimer(now);
                        }
                    }
                }
            }
        } catch (Throwable t) {
            Connection.LOG.log(System.Logger.Level.ERROR, "pistore tcp: I/O thread " + thread.getName() + " failed", t);
        } finally {
            for (SelectionKey k : selector.keys()) {
                Object a = k.attachment();
                if (a instanceof Selectable) {
                    try {
                        ((Selectable) a).onLoopClose("transport closed");
                    } catch (RuntimeException e) {
                        // keep closing the others
                    }
                }
            }
            terminated = true;
            runTasks();
            try {
                selector.close();
            } catch (IOException e) {
                // nothing left to do
            }
        }
    }

    private boolean runTasks() {
        boolean any = false;
        Runnable r;
        while ((r = tasks.poll()) != null) {
            any = true;
            try {
                r.run();
            } catch (RuntimeException e) {
                Connection.LOG.log(System.Logger.Level.ERROR, "pistore tcp: task failed on " + thread.getName(), e);
            }
        }
        return any;
    }

    private void flushDirty() {
        for (int i = 0; i < dirty.size(); i++) {
            dirty.get(i).flush();
        }
        dirty.clear();
    }

    /**
     * Waits for the next event: first by polling (selectNow, yielding the CPU between polls) for up
     * to the current spin budget, then by blocking. The budget adapts: an event caught while polling
     * or soon after blocking sets it to twice the gap that event came after (bounded by the cap), a
     * poll that catches nothing halves it. The cap is {@code pollNanos} while host requests are in
     * flight on this loop (a response is due) and {@code spinNanos} otherwise.
     */
    private int waitForEvents() throws IOException {
        long cap = awaiting > 0 ? Math.max(spinNanos, pollNanos) : spinNanos;
        long idleStart = System.nanoTime();
        long budget = idleStart - backoffUntil < 0 ? 0 : Math.min(spinBudget, cap);
        if (budget > 0) {
            long spinUntil = idleStart + budget;
            long prev = idleStart;
            do {
                int n = selector.selectNow();
                if (n > 0 || !tasks.isEmpty() || !running) {
                    if (n > 0) {
                        polledEvents++;
                    }
                    adapt(System.nanoTime() - idleStart, cap);
                    return n;
                }
                if (YIELD) {
                    Thread.yield();
                } else {
                    Thread.onSpinWait();
                }
                long now = System.nanoTime();
                if (now - prev > CONTENDED_NANOS) {
                    // Descheduled while polling: other threads want this CPU (the peer's I/O thread, maybe).
                    // Polling would only delay them; block instead for a while.
                    contendedSpins++;
                    backoffUntil = now + BACKOFF_NANOS;
                    break;
                }
                prev = now;
            } while (prev - spinUntil < 0);
            spinBudget = budget / 2;
        }
        int n;
        blocking = true;
        try {
            if (!tasks.isEmpty() || !running) {
                n = selector.selectNow();
            } else {
                blockingWaits++;
                long waitMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextTimer - System.nanoTime()));
                n = selector.select(waitMs);
            }
        } finally {
            blocking = false;
        }
        if (n > 0 || !tasks.isEmpty()) {
            long gap = System.nanoTime() - idleStart;
            if (gap < cap) {
                adapt(gap, cap);
            }
        }
        return n;
    }

    private void adapt(long gap, long cap) {
        spinBudget = Math.min(cap, Math.max(2 * gap, MIN_SPIN_NANOS));
    }

    private void processKeys() {
        Iterator<SelectionKey> it = selector.selectedKeys().iterator();
        while (it.hasNext()) {
            SelectionKey k = it.next();
            it.remove();
            if (k.isValid()) {
                ((Selectable) k.attachment()).onSelect(k);
            }
        }
    }
}
