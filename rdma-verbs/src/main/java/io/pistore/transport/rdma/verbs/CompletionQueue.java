package io.pistore.transport.rdma.verbs;

/** A completion queue ({@code ib_cq}). */
public interface CompletionQueue extends AutoCloseable {
    /** Moves up to {@code out.length} completions into {@code out}; returns how many (non-blocking). */
    int poll(WorkCompletion[] out);

    /**
     * Waits until a completion is ready or {@code timeoutNanos} pass ({@code ib_req_notify_cq} plus
     * the completion channel); true when one is ready.
     */
    boolean await(long timeoutNanos) throws InterruptedException;

    /** Wakes a thread blocked in {@link #await} (for shutdown). */
    void wakeup();

    @Override
    void close();
}
