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
 * <p><b>Waiting.</b> Blocking in {@code select()} costs a kernel wake-up (tens of microseconds)
 * whenever the next event arrives; polling with {@code selectNow()} costs a core. The loop polls
 * only while an event is likely soon, in two cases, and blocks otherwise:
 * <ul>
 *   <li><b>completion polling</b>: while a host connection of this loop has requests in flight, a
 *       response is due; the loop polls for up to {@code pollNanos} after its last event (as blk-mq
 *       polls for an outstanding request), then blocks;
 *   <li><b>idle spin</b>: after any event, it polls for {@code spinNanos} more (the next request of
 *       a busy host usually follows within a few microseconds), then blocks.
 * </ul>
 * An idle loop therefore burns at most {@code max(spinNanos, pollNanos)} of CPU after its last
 * event, and nothing after that.
 */
final class EventLoop implements Runnable {
    private static final long TIMER_NANOS = TimeUnit.SECONDS.toNanos(1);

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
    private long lastActivity;
    private long nextTimer;
    // counters for tests and notes (loop thread writes, others may read racy values)
    volatile long blockingWaits;
    volatile long polledEvents;

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
        lastActivity = System.nanoTime();
        nextTimer = lastActivity + TIMER_NANOS;
        try {
            while (running) {
                boolean work = runTasks();
                flushDirty();
                int n = waitForEvents();
                if (n > 0) {
                    processKeys();
                    work = true;
                }
                long now = System.nanoTime();
                if (work) {
                    lastActivity = now;
                }
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

    private int waitForEvents() throws IOException {
        long spinUntil = lastActivity + (awaiting > 0 ? Math.max(spinNanos, pollNanos) : spinNanos);
        if (System.nanoTime() - spinUntil < 0) {
            do {
                int n = selector.selectNow();
                if (n > 0) {
                    polledEvents++;
                    return n;
                }
                if (!tasks.isEmpty() || !running) {
                    return 0;
                }
                Thread.onSpinWait();
            } while (System.nanoTime() - spinUntil < 0);
        }
        blocking = true;
        try {
            if (!tasks.isEmpty() || !running) {
                return selector.selectNow();
            }
            blockingWaits++;
            long waitMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextTimer - System.nanoTime()));
            return selector.select(waitMs);
        } finally {
            blocking = false;
        }
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
