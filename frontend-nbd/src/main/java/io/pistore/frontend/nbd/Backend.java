package io.pistore.frontend.nbd;

import io.pistore.engine.BlockDevice;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.Status;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/**
 * Submits block requests for the frontend without ever blocking the caller: a request whose queue
 * is full ({@link Status#QUEUE_FULL}) is resubmitted a little later from one timer thread, so a
 * transport's completion thread that chains the next request (read-modify-write, zeroing in chunks)
 * never waits for a slot it would itself free.
 *
 * <p>A request that failed with {@link Status#TRANSPORT_ERROR} (its connection to the target was
 * lost while it was in flight, or the queue is reconnecting) is sent again every
 * {@value #RESEND_MILLIS} ms until it succeeds or fails otherwise, or until the resend deadline
 * after its first failure has passed; only then does the client see the error (EIO). The host
 * queue reconnects meanwhile, to the same target or the next peer of its list, so the client
 * rides over a failover. This is safe because every request the frontend sends is idempotent at
 * block level (docs/NBD.md): a write sent again writes the same data at the same blocks, a read
 * reads again, a trim or write-zeroes zeroes again. A flush is sent again only where the target
 * says so ({@code resendFlushes}: the peers of a replicated volume, which acknowledge a write only
 * once a quorum's log holds it, so a flush on the next peer covers every write replied before): a
 * single target that restarted may have lost writes replied before it died and not yet flushed,
 * and a flush that then succeeded would claim them durable; its client gets EIO, which says so.
 * For the same reason, with one remote target the first flush of a volume after the host
 * connection reconnected fails with EIO when a write (or zeroing) of that volume was replied before
 * the reconnect and no flush has covered it since ({@link UnflushedWrites}); the next flush goes to
 * the target. It lives here, not in
 * the transport's host queue, so a host queue keeps failing what was in flight (the bench and other
 * programs decide themselves whether to send again).
 *
 * <p>Requests go through {@link BlockDevice#submitMayCompleteOnCaller}: on the in-process
 * {@code local} transport the request runs on the submitting thread (the NBD connection's), and the
 * returned future is already complete when this returns. The frontend never chains a request from a
 * completion without end (read-modify-write chains three, zeroing a fixed number of chunks), and the
 * transport queues a request submitted from inside an inline completion, so the nesting is bounded.
 */
final class Backend implements AutoCloseable {
    private static final long RETRY_NANOS = 50_000;
    /** Pause between resends of a request that failed with a transport error (the reconnect's first delay). */
    static final long RESEND_MILLIS = 100;

    private final ScheduledExecutorService timer;
    private final long resendDeadlineNanos;
    private final boolean resendFlushes;
    /** Per volume, writes replied and not yet flushed, with the connection's reconnect count then; null unless one remote target. */
    private final UnflushedWrites unflushed;
    private final LongAdder queueFull = new LongAdder();
    private final LongAdder resends = new LongAdder();
    private final LongAdder resendsGivenUp = new LongAdder();
    /** Requests waiting on the timer for a resend, failed at {@link #close} instead of dropped. */
    private final Set<CompletableFuture<Completion>> waiting = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    /** A backend that never resends after a transport error (the client sees EIO at once). */
    Backend() {
        this(0, false, false);
    }

    /**
     * A backend that resends a request failing with a transport error for up to
     * {@code resendDeadlineMillis}, flushes only with {@code resendFlushes}; with
     * {@code unflushedAfterReconnect} (one remote target) it fails the first flush after a reconnect
     * that follows unflushed writes.
     */
    Backend(long resendDeadlineMillis, boolean resendFlushes, boolean unflushedAfterReconnect) {
        this.resendFlushes = resendFlushes;
        this.unflushed = unflushedAfterReconnect ? new UnflushedWrites() : null;
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, "pistore-nbd-retry");
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
        this.resendDeadlineNanos = TimeUnit.MILLISECONDS.toNanos(resendDeadlineMillis);
    }

    /** Submits {@code request} on {@code device}; the future may be complete when this returns. */
    CompletableFuture<Completion> submit(BlockDevice device, BlockRequest request) {
        CompletableFuture<Completion> result = new CompletableFuture<>();
        Object covered = null;
        if (unflushed != null && request.op() == Operation.FLUSH) {
            Completion lost = unflushed.lostBefore(request.volume(), device.connection().reconnects());
            if (lost != null) {
                return CompletableFuture.completedFuture(lost);
            }
            covered = unflushed.marker(request.volume());
        }
        attempt(device, request, result, 0, covered);
        return result;
    }

    /**
     * {@code failedSince}: when the request first failed with a transport error (0: it has not);
     * {@code covered}: what a flush covers of {@link #unflushed} (null: nothing, or not a flush).
     */
    private void attempt(BlockDevice device, BlockRequest request, CompletableFuture<Completion> result,
                         long failedSince, Object covered) {
        try {
            device.submitMayCompleteOnCaller(request, c -> {
                if (c.status() == Status.QUEUE_FULL) {
                    queueFull.increment();
                    later(() -> attempt(device, request, result, failedSince, covered), RETRY_NANOS, result, c);
                } else if (c.status() == Status.TRANSPORT_ERROR && resendDeadlineNanos > 0 && !closed
                        && (resendFlushes || request.op() != Operation.FLUSH)) {
                    long now = System.nanoTime();
                    long since = failedSince == 0 ? now : failedSince;
                    if (now - since >= resendDeadlineNanos) {
                        resendsGivenUp.increment();
                        result.complete(c);
                        return;
                    }
                    resends.increment();
                    later(() -> attempt(device, request, result, since, covered), TimeUnit.MILLISECONDS.toNanos(RESEND_MILLIS),
                            result, c);
                } else {
                    if (unflushed != null && c.isSuccess()) {
                        // recorded before the reply leaves: a flush the client sends after it sees this one's
                        if (request.op() == Operation.FLUSH) {
                            unflushed.flushed(request.volume(), covered);
                        } else if (request.op() != Operation.READ && !request.fua()) {
                            unflushed.replied(request.volume(), device.connection().reconnects());
                        }
                    }
                    result.complete(c);
                }
            });
        } catch (RuntimeException e) {
            result.complete(Completion.failure(Status.INTERNAL_ERROR, String.valueOf(e)));
        }
    }

    /** Runs {@code again} after {@code nanos} on the timer; when the server is stopping, ends the request now. */
    private void later(Runnable again, long nanos, CompletableFuture<Completion> result, Completion last) {
        waiting.add(result);
        try {
            timer.schedule(() -> {
                if (waiting.remove(result)) {
                    again.run();
                }
            }, nanos, TimeUnit.NANOSECONDS);
        } catch (RuntimeException rejected) {
            waiting.remove(result);
            result.complete(last.status() == Status.TRANSPORT_ERROR ? last
                    : Completion.failure(Status.TRANSPORT_ERROR, "server stopping"));
            return;
        }
        if (closed && waiting.remove(result)) { // close() ran between the add and the schedule
            result.complete(Completion.failure(Status.TRANSPORT_ERROR, "server stopping"));
        }
    }

    /** Requests refused with a full queue, and resubmitted. */
    long queueFullRetries() {
        return queueFull.sum();
    }

    /** Requests sent again after a transport error. */
    long resends() {
        return resends.sum();
    }

    /** Requests whose transport errors outlasted the resend deadline (answered with EIO). */
    long resendsGivenUp() {
        return resendsGivenUp.sum();
    }

    @Override
    public void close() {
        closed = true;
        timer.shutdownNow();
        for (CompletableFuture<Completion> f : waiting) {
            if (waiting.remove(f)) {
                f.complete(Completion.failure(Status.TRANSPORT_ERROR, "server stopping"));
            }
        }
    }
}
