package io.pistore.frontend.nbd;

import io.pistore.engine.BlockDevice;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Status;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Submits block requests for the frontend without ever blocking the caller: a request whose queue
 * is full ({@link Status#QUEUE_FULL}) is resubmitted a little later from one timer thread, so a
 * transport's completion thread that chains the next request (read-modify-write, zeroing in chunks)
 * never waits for a slot it would itself free.
 *
 * <p>Requests go through {@link BlockDevice#submitMayCompleteOnCaller}: on the in-process
 * {@code local} transport the request runs on the submitting thread (the NBD connection's), and the
 * returned future is already complete when this returns. The frontend never chains a request from a
 * completion without end (read-modify-write chains three, zeroing a fixed number of chunks), and the
 * transport queues a request submitted from inside an inline completion, so the nesting is bounded.
 */
final class Backend implements AutoCloseable {
    private static final long RETRY_NANOS = 50_000;

    private final ScheduledExecutorService timer;
    private final java.util.concurrent.atomic.LongAdder queueFull = new java.util.concurrent.atomic.LongAdder();

    Backend() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, "pistore-nbd-retry");
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
    }

    /** Submits {@code request} on {@code device}; the future may be complete when this returns. */
    CompletableFuture<Completion> submit(BlockDevice device, BlockRequest request) {
        CompletableFuture<Completion> result = new CompletableFuture<>();
        attempt(device, request, result);
        return result;
    }

    private void attempt(BlockDevice device, BlockRequest request, CompletableFuture<Completion> result) {
        try {
            device.submitMayCompleteOnCaller(request, c -> {
                if (c.status() == Status.QUEUE_FULL) {
                    queueFull.increment();
                    try {
                        timer.schedule(() -> attempt(device, request, result), RETRY_NANOS, TimeUnit.NANOSECONDS);
                    } catch (RuntimeException rejected) {
                        result.complete(Completion.failure(Status.TRANSPORT_ERROR, "server stopping"));
                    }
                } else {
                    result.complete(c);
                }
            });
        } catch (RuntimeException e) {
            result.complete(Completion.failure(Status.INTERNAL_ERROR, String.valueOf(e)));
        }
    }

    /** Requests refused with a full queue, and resubmitted. */
    long queueFullRetries() {
        return queueFull.sum();
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
