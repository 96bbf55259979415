package io.pistore.transport.tcp.internal;

import io.pistore.spi.net.PolitePoll;
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
 * <p><b>Waiting: adaptive polite polling</b> ({@link PolitePoll}). Before it blocks in
 * {@code select()}, the loop polls with {@code selectNow()} for a budget that follows the recent
 * gaps between events, yielding between polls and giving up for 20 ms when it loses its CPU. The
 * budget is capped by {@code pollNanos} while host requests are in flight on this loop (a response
 * is due, as blk-mq polls for an outstanding request) and by {@code spinNanos} otherwise (the next
 * request of a busy host usually follows within microseconds). Idle, a loop burns at most one
 * budget (at most {@code max(spinNanos, pollNanos)}) after its last event, and nothing after that.
 */
final class EventLoop implements Runnable {
    private static final long TIMER_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Selector selector;
    private final Thread thread;
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final List<TcpConnection> dirty = new ArrayList<>();
    private final long spinNanos;
    private final long pollNanos;
    private volatile boolean blocking;
    private volatile boolean running = true;
    private volatile boolean terminated;
    /** Host requests in flight on connections of this loop (loop thread only). */
    private int awaiting;
    /** How long the next wait polls before it blocks (adapted, see waitForEvents). */
    private final PolitePoll poll;
    private final PolitePoll.Probe pollOnce = this::pollOnce;
    private long nextTimer;

    EventLoop(String name, long spinNanos, long pollNanos, boolean spinYield) {
        try {
            this.selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a selector", e);
        }
        this.spinNanos = spinNanos;
        this.pollNanos = pollNanos;
        this.poll = new PolitePoll(spinYield);
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
    void addDirty(TcpConnection c) {
        dirty.add(c);
    }

    /** How this loop waited (counters for notes and tests). */
    PolitePoll waiting() {
        return poll;
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
            TcpConnection.LOG.log(System.Logger.Level.ERROR, "pistore tcp: I/O thread " + thread.getName() + " failed", t);
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
                TcpConnection.LOG.log(System.Logger.Level.ERROR, "pistore tcp: task failed on " + thread.getName(), e);
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
     * Waits for the next event: first by polling (selectNow, politely, see {@link PolitePoll}) for
     * up to the adapted budget, then by blocking. The budget's cap is {@code pollNanos} while host
     * requests are in flight on this loop (a response is due) and {@code spinNanos} otherwise.
     */
    private int waitForEvents() throws IOException {
        long cap = awaiting > 0 ? Math.max(spinNanos, pollNanos) : spinNanos;
        int r = poll.poll(pollOnce, cap);
        if (r != 0) {
            return Math.max(r, 0);
        }
        int n;
        blocking = true;
        try {
            if (!tasks.isEmpty() || !running) {
                n = selector.selectNow();
            } else {
                poll.blocking();
                long waitMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextTimer - System.nanoTime()));
                n = selector.select(waitMs);
            }
        } finally {
            blocking = false;
        }
        if (n > 0 || !tasks.isEmpty()) {
            poll.wokeUp();
        }
        return n;
    }

    /** One poll: the number of ready keys, -1 for tasks or a stop with no key ready, 0 for nothing. */
    private int pollOnce() throws IOException {
        int n = selector.selectNow();
        return n > 0 ? n : !tasks.isEmpty() || !running ? -1 : 0;
    }

    private void processKeys() {
        Iterator<SelectionKey> it = selector.selectedKeys().iterator();
        while (it.hasNext()) {
            SelectionKey k = it.next();
            it.remove();
            if (k.isValid()) {
                Selectable s = (Selectable) k.attachment();
                try {
                    s.onSelect(k);
                } catch (RuntimeException | InternalError e) {
                    closeAfterFailure(s, k, e);
                }
            }
        }
    }

    /**
     * A channel whose handling failed unexpectedly (a bug, or a fault in mapped memory, which the
     * JVM reports as an InternalError) is closed alone, with one line: the loop's other channels, a
     * listener among them, go on. Other errors (out of memory) still end the loop.
     */
    private void closeAfterFailure(Selectable s, SelectionKey k, Throwable e) {
        TcpConnection.LOG.log(System.Logger.Level.ERROR, "pistore tcp: " + thread.getName()
                + " closes a channel whose handling failed: " + e, e);
        try {
            s.onLoopClose("its handling failed: " + e);
        } catch (RuntimeException again) {
            // closed as far as it goes
        }
        k.cancel();
        try {
            k.channel().close();
        } catch (IOException ignored) {
            // closed anyway
        }
    }
}
