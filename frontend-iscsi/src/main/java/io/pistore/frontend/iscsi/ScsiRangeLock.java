package io.pistore.frontend.iscsi;

import java.util.ArrayList;
import java.util.List;

/**
 * Block ranges of one logical unit held by the commands that change them: writes share a range,
 * COMPARE AND WRITE holds its range alone, so no write lands between its read and its write.
 * Requests are served in arrival order where they overlap: a write that overlaps an older waiting
 * COMPARE AND WRITE waits behind it, so a stream of writes cannot starve it.
 */
final class ScsiRangeLock {
    /** One request: blocks [{@code from}, {@code to}), exclusive or shared. */
    static final class Range {
        final long from;
        final long to;
        final boolean exclusive;

        Range(long from, long to, boolean exclusive) {
            this.from = from;
            this.to = to;
            this.exclusive = exclusive;
        }

        boolean clashes(Range o) {
            return from < o.to && o.from < to && (exclusive || o.exclusive);
        }
    }

    /** Granted and waiting requests, oldest first. */
    private final List<Range> queue = new ArrayList<>();

    /**
     * Runs {@code step} holding {@code [from, from + blocks)} (shared with other writes unless
     * {@code exclusive}); interrupted while waiting, it answers ABORTED COMMAND without running it.
     */
    ScsiResult holding(long from, long blocks, boolean exclusive, java.util.function.Supplier<ScsiResult> step) {
        Range r;
        try {
            r = lock(from, blocks, exclusive);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ScsiResult.check(ScsiResult.ABORTED_COMMAND, 0x00, 0x00);
        }
        try {
            return step.get();
        } finally {
            unlock(r);
        }
    }

    /** Waits until the range is this caller's (shared with other writes unless {@code exclusive}). */
    synchronized Range lock(long from, long blocks, boolean exclusive) throws InterruptedException {
        Range r = new Range(from, from + blocks, exclusive);
        queue.add(r);
        try {
            while (blocked(r)) {
                wait();
            }
        } catch (InterruptedException e) {
            queue.remove(r);
            notifyAll();
            throw e;
        }
        return r;
    }

    /**
     * Takes the range shared for a write at once, or returns null without waiting when any older
     * request (granted or waiting) that clashes with it is there.
     */
    synchronized Range tryLock(long from, long blocks) {
        Range r = new Range(from, from + blocks, false);
        for (Range o : queue) {
            if (o.clashes(r)) {
                return null;
            }
        }
        queue.add(r);
        return r;
    }

    private boolean blocked(Range r) {
        for (Range o : queue) {
            if (o == r) {
                return false;
            }
            if (o.clashes(r)) {
                return true;
            }
        }
        return false;
    }

    synchronized void unlock(Range r) {
        queue.remove(r);
        notifyAll();
    }

    /** Requests granted or waiting now. */
    synchronized int size() {
        return queue.size();
    }
}
