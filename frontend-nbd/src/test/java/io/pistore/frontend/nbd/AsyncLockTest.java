package io.pistore.frontend.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AsyncLockTest {
    /**
     * 200 000 waiters behind one holder, each releasing as soon as it holds the lock (what a
     * request that completes on the submitting thread does): all run, in arrival order, and the
     * stack does not grow with the number of waiters.
     */
    @Test
    void waitersThatReleaseAtOnceRunInOrderWithoutGrowingTheStack() {
        AsyncLock lock = new AsyncLock();
        assertTrue(lock.acquire().isDone(), "a free lock is taken at once");
        int n = 200_000;
        List<Integer> order = new ArrayList<>(n);
        AtomicInteger depth = new AtomicInteger();
        AtomicInteger maxDepth = new AtomicInteger();
        for (int i = 0; i < n; i++) {
            int id = i;
            CompletableFuture<Void> f = lock.acquire();
            f.thenRun(() -> {
                maxDepth.accumulateAndGet(depth.incrementAndGet(), Math::max);
                order.add(id);
                lock.release();
                depth.decrementAndGet();
            });
        }
        lock.release();
        assertEquals(n, order.size());
        for (int i = 0; i < n; i++) {
            assertEquals(i, order.get(i));
        }
        assertEquals(1, maxDepth.get(), "each waiter ran after the previous one returned");
        assertTrue(lock.acquire().isDone(), "the last release freed the lock");
    }
}
