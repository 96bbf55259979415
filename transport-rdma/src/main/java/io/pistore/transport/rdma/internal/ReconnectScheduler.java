package io.pistore.transport.rdma.internal;

import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The one thread on which an rdma transport's host queues reconnect: made on first use, so attempts
 * never run concurrently nor on a queue's poller thread (which must end before its queue's
 * resources are released, and which an attempt's connect and discovery would otherwise block).
 */
public final class ReconnectScheduler implements AutoCloseable {
    private ScheduledExecutorService thread;
    private boolean closed;

    /** Runs {@code attempt} after {@code delayMillis}; false when the scheduler is closed. */
    synchronized boolean schedule(Runnable attempt, long delayMillis) {
        if (closed) {
            return false;
        }
        if (thread == null) {
            thread = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "pistore-rdma-reconnect");
                t.setDaemon(true);
                return t;
            });
        }
        thread.schedule(attempt, delayMillis, TimeUnit.MILLISECONDS);
        return true;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (thread != null) {
            thread.shutdownNow();
        }
    }
}
