package io.pistore.spi;

/**
 * How a host connects: number of queues and queue depth, and optionally the volume it will use (so
 * that a host given a list of peers connects to one that has it).
 */
public final class ConnectOptions {
    private final int queues;
    private final int queueDepth;
    private final String volume;

    public ConnectOptions(int queues, int queueDepth) {
        this(queues, queueDepth, null);
    }

    private ConnectOptions(int queues, int queueDepth, String volume) {
        if (queues < 1 || queues > 256) {
            throw new IllegalArgumentException("queues must be 1 to 256, not " + queues);
        }
        if (queueDepth < 1 || queueDepth > 4096) {
            throw new IllegalArgumentException("queue depth must be 1 to 4096, not " + queueDepth);
        }
        this.queues = queues;
        this.queueDepth = queueDepth;
        this.volume = volume;
    }

    /**
     * The same options, naming the volume the host will use. Where the address is a list of peers, a
     * peer that does not list it is passed over at connect for the next one that does; when none
     * lists it, the host connects to the first peer that answered, as without a name (and finds no
     * such volume there). A single address is connected to as without a name.
     */
    public ConnectOptions volume(String name) {
        return new ConnectOptions(queues, queueDepth, name);
    }

    /** The volume named with {@link #volume(String)}, or null. */
    public String volume() {
        return volume;
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
