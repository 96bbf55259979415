package io.pistore.frontend.nbd;

import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

/**
 * A mutual-exclusion lock whose acquisition is a future, so that no thread ever blocks on it: a
 * transport's completion thread can take it and the holder's completion releases it. Waiters are
 * served in arrival order; the next waiter's continuation runs on the releasing thread.
 *
 * <p>A continuation that completes synchronously releases the lock again from inside the first
 * release (requests run on the submitting thread with the {@code local} transport). Such a nested
 * release does not run its next waiter on the spot: it leaves it to the outermost release on the
 * same thread, which runs the waiters one after the other (a trampoline). So however many waiters
 * queued up behind a slow holder, the stack grows by one level, not one per waiter.
 */
final class AsyncLock {
    private static final CompletableFuture<Void> TAKEN = CompletableFuture.completedFuture(null);

    /** Waiters of any lock handed the lock by a release further up this thread's stack, to run next. */
    private static final ThreadLocal<ArrayDeque<CompletableFuture<Void>>> HANDED = ThreadLocal.withInitial(ArrayDeque::new);
    /** Whether a release on this thread is running handed waiters (the outermost one). */
    private static final ThreadLocal<boolean[]> RUNNING = ThreadLocal.withInitial(() -> new boolean[1]);

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
        if (next == null) {
            return;
        }
        ArrayDeque<CompletableFuture<Void>> handed = HANDED.get();
        handed.add(next);
        boolean[] running = RUNNING.get();
        if (running[0]) {
            return; // the outermost release on this thread runs it
        }
        running[0] = true;
        try {
            CompletableFuture<Void> f;
            while ((f = handed.poll()) != null) {
                f.complete(null);
            }
        } finally {
            running[0] = false;
        }
    }
}
