package io.pistore.testkit;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Waiting in tests on a condition instead of for a fixed time: the condition is asked again and
 * again until it holds, each pause half the time waited so far (at least 1 ms, at most 50 ms), so
 * a short wait asks only a few times (some conditions cost a request to every peer) and a wait ends
 * at most half its length again (or 50 ms) after its condition came to hold; a test that
 * waits longer than its patience fails with what it waited for. The patience is a hang guard, never
 * a speed figure: a condition that holds ends the wait at once.
 */
public final class Eventually {
    /** How long a test waits for something that must happen before it fails: a hang guard. */
    public static final Duration PATIENCE = Duration.ofSeconds(30);

    private static final long FIRST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final long LONGEST_PAUSE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private Eventually() {
    }

    /** A reading that takes work which may fail: a request to send, a port to bind. */
    @FunctionalInterface
    public interface Probe<T> {
        T get() throws Exception;
    }

    /** Waits until {@code done} holds, at most {@link #PATIENCE}; fails with {@code what} after that. */
    public static void await(String what, BooleanSupplier done) {
        await(what, PATIENCE, done);
    }

    /** Waits until {@code done} holds, at most {@code patience}; fails with {@code what} after that. */
    public static void await(String what, Duration patience, BooleanSupplier done) {
        Objects.requireNonNull(done, "done");
        long end = System.nanoTime() + patience.toNanos();
        long since = System.nanoTime();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("waited " + describe(patience) + " for " + what);
            }
            pause(since, what);
        }
    }

    /**
     * The first reading of {@code probe} that {@code done} accepts, asking again while it does not,
     * at most {@link #PATIENCE}; fails with {@code what} and the last reading after that. What the
     * probe or {@code done} throws ends the wait at once.
     */
    public static <T> T until(String what, Probe<T> probe, Predicate<? super T> done) throws Exception {
        return until(what, PATIENCE, probe, done);
    }

    /** As {@link #until(String, Probe, Predicate)}, at most {@code patience}. */
    public static <T> T until(String what, Duration patience, Probe<T> probe, Predicate<? super T> done)
            throws Exception {
        Objects.requireNonNull(done, "done");
        long end = System.nanoTime() + patience.toNanos();
        long since = System.nanoTime();
        while (true) {
            T now = probe.get();
            if (done.test(now)) {
                return now;
            }
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("waited " + describe(patience) + " for " + what + "; last: " + now);
            }
            pause(since, what);
        }
    }

    /**
     * Whether {@code done} comes to hold within {@code patience}: for a test that reports the
     * failure itself, with what it knows. Returns as soon as it holds.
     */
    public static boolean within(Duration patience, BooleanSupplier done) {
        long end = System.nanoTime() + patience.toNanos();
        long since = System.nanoTime();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                return false;
            }
            pause(since, "a condition");
        }
        return true;
    }

    /**
     * Runs {@code step} (work the test drives itself, such as a soft NIC's local work; it returns how
     * much it did) until {@code done} holds, at most {@link #PATIENCE}. A step that did something is
     * followed by the next question at once and restarts the pauses from the shortest, so the work
     * goes on as fast as it arrives.
     */
    public static void drive(String what, IntSupplier step, BooleanSupplier done) {
        drive(what, PATIENCE, step, done);
    }

    /** As {@link #drive(String, IntSupplier, BooleanSupplier)}, at most {@code patience}. */
    public static void drive(String what, Duration patience, IntSupplier step, BooleanSupplier done) {
        Objects.requireNonNull(step, "step");
        long end = System.nanoTime() + patience.toNanos();
        long since = System.nanoTime();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("waited " + describe(patience) + " for " + what);
            }
            if (step.getAsInt() > 0) {
                since = System.nanoTime();
            } else {
                pause(since, what);
            }
        }
    }

    /**
     * The reading of {@code probe} once it has not changed for {@code quiet} (compared with
     * {@code equals}): e.g. the counters of a thread that has gone to sleep. Fails when the
     * reading still changes after {@code patience}.
     */
    public static <T> T steady(String what, Duration quiet, Duration patience, Supplier<T> probe) {
        long end = System.nanoTime() + patience.toNanos();
        T last = probe.get();
        long since = System.nanoTime();
        while (true) {
            pause(since, what); // pauses grow while the reading stays the same
            T now = probe.get();
            long t = System.nanoTime();
            if (!Objects.equals(now, last)) {
                last = now;
                since = t;
            } else if (t - since >= quiet.toNanos()) {
                return now;
            }
            if (t - end > 0) {
                throw new AssertionError("waited " + describe(patience) + " for " + what + "; still changing: " + now);
            }
        }
    }

    /** Pauses for half the time since {@code since} (at least 1 ms, at most 50 ms). */
    private static void pause(long since, String what) {
        long waited = System.nanoTime() - since;
        LockSupport.parkNanos(Math.max(FIRST_PAUSE_NANOS, Math.min(waited / 2, LONGEST_PAUSE_NANOS)));
        if (Thread.interrupted()) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + what);
        }
    }

    private static String describe(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
    }
}
