package io.pistore.transport.tcp.internal;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The I/O threads of one transport instance; each channel is served by one of them. With a fixed
 * size, all start at once and channels are spread over them round robin. With a ceiling instead
 * ({@code tcp.ioThreads=0}: the number of CPUs), a thread starts for each new channel until the
 * ceiling is reached, and channels are spread round robin after that: one connection per queue and
 * one queue per core (the NVMe-oF convention) then get a thread each, and a single queue does not
 * pay for idle threads.
 */
final class EventLoopGroup {
    private static final AtomicInteger GROUPS = new AtomicInteger();

    private final String namePrefix;
    private final int ceiling;
    private final long spinNanos;
    private final long pollNanos;
    private final boolean spinYield;
    /** Grows under {@code this}; readers take the current array without locking. */
    private volatile EventLoop[] loops = new EventLoop[0];
    private int next;

    /**
     * {@code threads} loops started now, or, with {@code growOnDemand}, up to {@code threads}
     * started one per {@link #next()} call.
     */
    EventLoopGroup(int threads, boolean growOnDemand, long spinNanos, long pollNanos, boolean spinYield) {
        if (threads < 1) {
            throw new IllegalArgumentException("an event loop group needs at least one thread, not " + threads);
        }
        this.namePrefix = "pistore-tcp-" + GROUPS.incrementAndGet() + "-io-";
        this.ceiling = threads;
        this.spinNanos = spinNanos;
        this.pollNanos = pollNanos;
        this.spinYield = spinYield;
        if (!growOnDemand) {
            synchronized (this) {
                while (loops.length < threads) {
                    start();
                }
            }
        }
    }

    private EventLoop start() {
        EventLoop l = new EventLoop(namePrefix + loops.length, spinNanos, pollNanos, spinYield);
        EventLoop[] grown = Arrays.copyOf(loops, loops.length + 1);
        grown[grown.length - 1] = l;
        loops = grown;
        return l;
    }

    /** The loop for a new channel: a new thread while under the ceiling, else the next in turn. */
    synchronized EventLoop next() {
        if (loops.length < ceiling) {
            return start();
        }
        EventLoop l = loops[next];
        next = (next + 1) % loops.length;
        return l;
    }

    /** Whether the calling thread is one of this group's I/O threads. */
    boolean inAnyLoop() {
        for (EventLoop l : loops) {
            if (l.inLoop()) {
                return true;
            }
        }
        return false;
    }

    /** The loops started so far. */
    EventLoop[] loops() {
        return loops;
    }

    synchronized void shutdown() {
        for (EventLoop l : loops) {
            l.shutdown();
        }
    }
}
