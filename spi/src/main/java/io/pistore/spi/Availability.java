package io.pistore.spi;

import java.util.Objects;

/**
 * Whether a transport can run here, and if not, why, in one line (the way Netty's
 * {@code Epoll.unavailabilityCause()} explains a missing native transport).
 */
public final class Availability {
    private static final Availability AVAILABLE = new Availability(null);

    private final String cause;

    private Availability(String cause) {
        this.cause = cause;
    }

    public static Availability available() {
        return AVAILABLE;
    }

    /** Unavailable, with a one-line reason such as "no RDMA device found (/sys/class/infiniband is empty)". */
    public static Availability unavailable(String cause) {
        Objects.requireNonNull(cause, "cause");
        return new Availability(cause.replace('\n', ' ').trim());
    }

    public boolean isAvailable() {
        return cause == null;
    }

    /** The one-line reason, or null when available. */
    public String cause() {
        return cause;
    }

    @Override
    public String toString() {
        return cause == null ? "available" : "unavailable: " + cause;
    }
}
