package io.pistore.spi.net;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Adaptive, polite polling before a thread blocks for its next event; one instance per polling
 * thread, used by that thread only (the counters may be read racily by others). Not part of the SPI's contract:
 * shared by the TCP transport's I/O threads and the NBD frontend's connection threads.
 *
 * <p>Blocking in {@code select()} costs a kernel wake-up when the next event arrives (tens of
 * microseconds when the CPU was idle, more across CPUs in a virtual machine); polling costs a CPU.
 * {@link #poll} polls for a <b>budget that follows the recent gaps between events</b>: an event
 * caught while polling, or soon after blocking ({@link #wokeUp}), sets the budget to twice the gap it
 * came after (at least 2 µs, at most the caller's cap); a polling round that catches nothing halves
 * it. It polls <b>politely</b>: it yields the CPU between polls, and when one round took so long
 * that the thread must have lost its CPU (other threads want it; on a small machine often the very
 * peer whose event is awaited), it probes once more, then the caller blocks, and it does not poll
 * again for a back-off (20 ms by default; a caller whose peer blocks rather than polls may choose
 * none, and may take an event found by that last probe as a sign the CPU went to the peer, and
 * skip the back-off). So an idle thread burns at most one budget after its last event, and nothing
 * after that.
 */
public final class PolitePoll {
    /** One poll of whatever the caller waits for: 0 when nothing is there yet, anything else ends polling. */
    @FunctionalInterface
    public interface Probe {
        int poll() throws IOException;
    }

    private static final long MIN_BUDGET_NANOS = 2_000;
    /** One poll round longer than this means the thread lost its CPU while polling. */
    private static final long LOST_CPU_NANOS = 30_000;
    /** How long a thread that lost its CPU while polling blocks without polling, by default. */
    public static final long DEFAULT_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

    private final boolean yield;
    private final long backoffNanos;
    private final boolean lateEventCounts;
    private long budget;
    private long backoffUntil = System.nanoTime();
    private long idleStart;
    private long cap;
    /** Probes run. */
    private volatile long polls;
    /** Events caught while polling. */
    private volatile long caught;
    /** Waits that blocked (counted by {@link #blocking}). */
    private volatile long blockingWaits;
    /** Rounds in which the thread lost its CPU while polling. */
    private volatile long lostCpu;

    /** Polls with {@code Thread.yield()} (or not) and backs off for {@link #DEFAULT_BACKOFF_NANOS}. */
    public PolitePoll(boolean yield) {
        this(yield, DEFAULT_BACKOFF_NANOS, false);
    }

    /**
     * @param yield {@code Thread.yield()} between polls (polite); false: {@code Thread.onSpinWait()}
     * @param backoffNanos how long a thread that lost its CPU while polling then blocks without
     *     polling (0: it blocks for this wait only)
     * @param lateEventCounts when the thread lost its CPU, poll once more and, if the event came
     *     meanwhile, take it and do not back off: the CPU went to whoever produced the event (the
     *     peer, when it blocks rather than polls and shares this CPU). False: always back off, as
     *     suits two polling peers, which would otherwise keep taking the CPU from each other.
     */
    public PolitePoll(boolean yield, long backoffNanos, boolean lateEventCounts) {
        if (backoffNanos < 0) {
            throw new IllegalArgumentException("backoffNanos must not be negative, not " + backoffNanos);
        }
        this.yield = yield;
        this.backoffNanos = backoffNanos;
        this.lateEventCounts = lateEventCounts;
    }

    /**
     * The thread is idle from now on: polls {@code probe} for up to the current budget (bounded by
     * {@code capNanos}; 0 never polls) and returns the first non-zero result, or 0 when nothing came
     * (the caller then blocks, counts it with {@link #blocking}, and tells {@link #wokeUp} when an
     * event ended the wait).
     */
    public int poll(Probe probe, long capNanos) throws IOException {
        cap = capNanos;
        idleStart = System.nanoTime();
        long b = idleStart - backoffUntil < 0 ? 0 : Math.min(budget, capNanos);
        if (b <= 0) {
            return 0;
        }
        long until = idleStart + b;
        long prev = idleStart;
        boolean lost = false;
        while (true) {
            int r = probe.poll();
            polls++;
            if (lost && (r == 0 || !lateEventCounts)) {
                backoffUntil = prev + backoffNanos;
            }
            if (r != 0) {
                caught++;
                adapt(System.nanoTime() - idleStart);
                return r;
            }
            if (lost || prev - until >= 0) {
                break;
            }
            if (yield) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
            long now = System.nanoTime();
            if (now - prev > LOST_CPU_NANOS) {
                // Descheduled while polling: other threads want this CPU. One more poll (the event
                // may have come meanwhile), then block, and do not poll again for a while.
                lostCpu++;
                lost = true;
            }
            prev = now;
        }
        budget = b / 2;
        return 0;
    }

    /** The caller blocks now (after {@link #poll} returned 0). */
    public void blocking() {
        blockingWaits++;
    }

    /** A blocking wait that began at the last {@link #poll} ended with an event. */
    public void wokeUp() {
        long gap = System.nanoTime() - idleStart;
        if (gap < cap) {
            adapt(gap);
        }
    }

    private void adapt(long gap) {
        budget = Math.min(cap, Math.max(2 * gap, MIN_BUDGET_NANOS));
    }

    /** The counters of one or more pollers, summed. */
    public record Counts(long polls, long caught, long blockingWaits, long lostCpu) {
        public static final Counts NONE = new Counts(0, 0, 0, 0);

        public Counts plus(PolitePoll p) {
            return p == null ? this : new Counts(polls + p.polls, caught + p.caught, blockingWaits + p.blockingWaits,
                    lostCpu + p.lostCpu);
        }
    }

    /** Probes run so far (it stops growing while the thread is blocked). */
    public long polls() {
        return polls;
    }

    /** Events caught while polling. */
    public long caught() {
        return caught;
    }

    /** Waits that blocked. */
    public long blockingWaits() {
        return blockingWaits;
    }

    /** Times the thread lost its CPU while polling. */
    public long lostCpu() {
        return lostCpu;
    }
}
