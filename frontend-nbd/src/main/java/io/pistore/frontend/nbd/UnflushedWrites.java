package io.pistore.frontend.nbd;

import io.pistore.spi.Completion;
import io.pistore.spi.Status;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per volume, whether writes were replied to and not yet covered by a flush, and the host
 * connection's reconnect count when the first of them was: a single target that restarted since
 * may have lost them, so the next flush must not report them durable. Each reply replaces the
 * volume's record (a new object), so a flush clears only the record it saw when it started: a write
 * replied while the flush ran keeps the volume marked. Thread-safe.
 */
final class UnflushedWrites {
    private record Unflushed(long reconnects) {
    }

    private final ConcurrentHashMap<String, Unflushed> byVolume = new ConcurrentHashMap<>();

    /** A write, zeroing or deallocation of {@code volume} was replied to while the connection had reconnected {@code reconnects} times. */
    void replied(String volume, long reconnects) {
        byVolume.merge(volume, new Unflushed(reconnects), (old, now) -> new Unflushed(Math.min(old.reconnects, now.reconnects)));
    }

    /**
     * The failure a flush of {@code volume} gets now that the connection reconnected {@code reconnects}
     * times, or null: writes replied before a reconnect and not flushed since. Reported once: the
     * record goes, so the next flush reaches the target.
     */
    Completion lostBefore(String volume, long reconnects) {
        Unflushed u = byVolume.get(volume);
        if (u == null || u.reconnects >= reconnects || !byVolume.remove(volume, u)) {
            return null;
        }
        return Completion.failure(Status.TRANSPORT_ERROR, "writes to " + volume + " replied before the connection to the "
                + "target was lost were not flushed; the target may have lost them");
    }

    /** What a flush of {@code volume} starting now covers (null: nothing unflushed). */
    Object marker(String volume) {
        return byVolume.get(volume);
    }

    /** A flush that started when {@link #marker} was {@code covered} succeeded. */
    void flushed(String volume, Object covered) {
        if (covered != null) {
            byVolume.remove(volume, covered);
        }
    }
}
