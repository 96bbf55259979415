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
    private final String name;
    private ScheduledExecutorService thread;
    private boolean closed;

    public ReconnectScheduler() {
        this("pistore-rdma-reconnect");
    }

    /** A scheduler whose thread is named {@code name}. */
    ReconnectScheduler(String name) {
        this.name = name;
    }

    /** Runs {@code attempt} after {@code delayMillis}; false when the scheduler is closed. */
    synchronized boolean schedule(Runnable attempt, long delayMillis) {
        if (closed) {
            return false;
        }
        if (thread == null) {
            thread = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, name);
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
