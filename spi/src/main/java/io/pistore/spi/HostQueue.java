package io.pistore.spi;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * One submission queue of a host connection. Requests complete asynchronously, in any order. The
 * queue has a fixed depth: when {@link #depth()} requests are in flight, {@link #submit} completes at
 * once with {@link Status#QUEUE_FULL} (backpressure; the caller retries after a completion).
 * Safe to call from any thread.
 */
public interface HostQueue {
    /**
     * Submits a request. The {@code local} transport never runs an accepted request on the calling
     * thread through this method (only a refusal, such as {@link Status#QUEUE_FULL}, comes back
     * already completed), so a caller may chain its next request from the future's callbacks; see
     * {@link #submitMayCompleteOnCaller} for the variant that saves the thread hand-off.
     */
    CompletableFuture<Completion> submit(BlockRequest request);

    /**
     * Submits a request and calls {@code done} with its completion, exactly once, on <b>any</b>
     * thread, <b>possibly the calling thread before this method returns</b>: a transport that can
     * run the request on the submitter's thread (the in-process {@code local} transport) does, which
     * saves a thread hand-off per request. An implementation that runs requests inline must bound
     * the recursion: a request submitted through this method from inside a {@code done} that runs
     * on the caller's stack is not run on the caller's thread again, and its {@code done} is not
     * called there either (it is queued, and completed by the transport's own thread), so a caller
     * that chains its next request from {@code done} nests at most one level. A refusal
     * ({@link Status#QUEUE_FULL}, a closed connection) may be reported to {@code done} at once, on
     * the calling thread: a caller must not resubmit synchronously on a refusal. {@code done} must
     * not block.
     *
     * <p>The default runs {@link #submit} and calls {@code done} from its future: on the
     * transport's thread, or on the caller's if the request completed before the callback was
     * attached (a refusal, or a transport faster than the caller).
     */
    default void submitMayCompleteOnCaller(BlockRequest request, Consumer<Completion> done) {
        submit(request).whenComplete((c, ex) -> done.accept(ex != null
                ? Completion.failure(Status.INTERNAL_ERROR, String.valueOf(ex)) : c));
    }

    /** Most requests in flight at once. */
    int depth();

    /** Requests submitted and not yet completed. */
    int inFlight();
}
