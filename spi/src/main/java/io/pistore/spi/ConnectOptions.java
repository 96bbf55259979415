package io.pistore.spi;

/** How a host connects: number of queues and queue depth. */
public final class ConnectOptions {
    private final int queues;
    private final int queueDepth;

    public ConnectOptions(int queues, int queueDepth) {
        if (queues < 1 || queues > 256) {
            throw new IllegalArgumentException("queues must be 1 to 256, not " + queues);
        }
        if (queueDepth < 1 || queueDepth > 4096) {
            throw new IllegalArgumentException("queue depth must be 1 to 4096, not " + queueDepth);
        }
        this.queues = queues;
        this.queueDepth = queueDepth;
    }

    public static ConnectOptions defaults() {
        return new ConnectOptions(1, 32);
    }

    public int queues() {
        return queues;
    }

    public int queueDepth() {
        return queueDepth;
    }
}
