package io.pistore.transport.tcp.internal;

import java.util.concurrent.atomic.AtomicInteger;

/** A small, fixed set of I/O threads; channels are spread over them round robin. */
final class EventLoopGroup {
    private static final AtomicInteger GROUPS = new AtomicInteger();

    private final EventLoop[] loops;
    private final AtomicInteger next = new AtomicInteger();

    EventLoopGroup(int threads, long spinNanos, long pollNanos, boolean spinYield) {
        int g = GROUPS.incrementAndGet();
        loops = new EventLoop[threads];
        for (int i = 0; i < threads; i++) {
            loops[i] = new EventLoop("pistore-tcp-" + g + "-io-" + i, spinNanos, pollNanos, spinYield);
        }
    }

    EventLoop next() {
        return loops[Math.floorMod(next.getAndIncrement(), loops.length)];
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

    EventLoop[] loops() {
        return loops;
    }

    void shutdown() {
        for (EventLoop l : loops) {
            l.shutdown();
        }
    }
}
