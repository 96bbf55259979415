package io.pistore.engine.nbd;

import io.pistore.spi.Completion;
import io.pistore.spi.Status;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Submits block requests for the frontend without ever blocking the caller: a request whose queue
 * is full ({@link Status#QUEUE_FULL}) is resubmitted a little later from one timer thread, so a
 * transport's completion thread that chains the next request (read-modify-write, zeroing in chunks)
 * never waits for a slot it would itself free.
 */
final class Backend implements AutoCloseable {
    private static final long RETRY_NANOS = 50_000;

    private final ScheduledExecutorService timer;

    Backend() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, "pistore-nbd-retry");
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
    }

    CompletableFuture<Completion> submit(Supplier<CompletableFuture<Completion>> request) {
        CompletableFuture<Completion> result = new CompletableFuture<>();
        attempt(request, result);
        return result;
    }

    private void attempt(Supplier<CompletableFuture<Completion>> request, CompletableFuture<Completion> result) {
        CompletableFuture<Completion> f;
        try {
            f = request.get();
        } catch (RuntimeException e) {
            result.complete(Completion.failure(Status.INTERNAL_ERROR, String.valueOf(e)));
            return;
        }
        f.whenComplete((c, ex) -> {
            if (ex != null) {
                result.complete(Completion.failure(Status.INTERNAL_ERROR, String.valueOf(ex)));
            } else if (c.status() == Status.QUEUE_FULL) {
                try {
                    timer.schedule(() -> attempt(request, result), RETRY_NANOS, TimeUnit.NANOSECONDS);
                } catch (RuntimeException rejected) {
                    result.complete(Completion.failure(Status.TRANSPORT_ERROR, "server stopping"));
                }
            } else {
                result.complete(c);
            }
        });
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
