package io.pistore.engine.nbd;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * A mutual-exclusion lock whose acquisition is a future, so that no thread ever blocks on it: a
 * transport's completion thread can take it and the holder's completion releases it. Waiters are
 * served in arrival order; the next waiter's continuation runs on the releasing thread.
 */
final class AsyncLock {
    private static final CompletableFuture<Void> TAKEN = CompletableFuture.completedFuture(null);

    private final ArrayDeque<CompletableFuture<Void>> waiters = new ArrayDeque<>();
    private boolean held;

    synchronized CompletableFuture<Void> acquire() {
        if (!held) {
            held = true;
            return TAKEN;
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        waiters.add(f);
        return f;
    }

    void release() {
        CompletableFuture<Void> next;
        synchronized (this) {
            next = waiters.poll();
            if (next == null) {
                held = false;
            }
        }
        if (next != null) {
            next.complete(null);
        }
    }
}
