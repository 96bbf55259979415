package io.pistore.spi;

/**
 * How a transport's host reconnects what it lost (its queues' connections, its path watches): whether
 * at all, after how long (doubling after each failed attempt up to the longest delay), and on which
 * thread the attempts run.
 *
 * @param enabled        whether lost connections are made again at all
 * @param delayMillis    the first delay after a loss
 * @param maxDelayMillis the longest delay
 * @param scheduler      runs the attempts, one at a time
 */
public record ReconnectPolicy(boolean enabled, long delayMillis, long maxDelayMillis, Scheduler scheduler) {
    public ReconnectPolicy {
        if (delayMillis < 1 || maxDelayMillis < 1) {
            throw new IllegalArgumentException("reconnect delays of " + delayMillis + " and " + maxDelayMillis + " ms");
        }
    }

    /** The thread a transport reconnects on. */
    @FunctionalInterface
    public interface Scheduler {
        /** Runs {@code task} after {@code delayMillis}; false when the transport is closing (it will not run). */
        boolean schedule(Runnable task, long delayMillis);
    }

    /** The delay before attempt {@code attempt} (1 is the first after a loss): doubled each time, at most the longest. */
    public long delayBefore(int attempt) {
        long delay = delayMillis;
        for (int i = 1; i < attempt && delay < maxDelayMillis; i++) {
            delay *= 2;
        }
        return Math.min(delay, maxDelayMillis);
    }
}
