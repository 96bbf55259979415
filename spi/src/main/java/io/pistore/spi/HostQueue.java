package io.pistore.spi;

import java.util.concurrent.CompletableFuture;

/**
 * One submission queue of a host connection. Requests complete asynchronously, in any order. The
 * queue has a fixed depth: when {@link #depth()} requests are in flight, {@link #submit} completes at
 * once with {@link Status#QUEUE_FULL} (backpressure; the caller retries after a completion).
 * Safe to call from any thread.
 */
public interface HostQueue {
    CompletableFuture<Completion> submit(BlockRequest request);

    /** Most requests in flight at once. */
    int depth();

    /** Requests submitted and not yet completed. */
    int inFlight();
}
