package io.pistore.spi.net;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What {@link PolitePoll} does when the polling thread lost its CPU: one more probe, then the caller
 * blocks, and later waits do not poll for the back-off. The lost CPU is made certain, not raced: the
 * first probe sleeps for a millisecond, and one round of at least that long is always over the
 * 30 µs that mean "descheduled". The back-offs are an hour (certainly not over while the test runs)
 * or zero.
 */
class PolitePollBackoffTest {
    private static final long CAP = TimeUnit.SECONDS.toNanos(1);
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);

    /** Sleeps on its first call and answers nothing; answers {@code second} on its second call. */
    private static final class SlowFirstProbe implements PolitePoll.Probe {
        final int second;
        int calls;

        SlowFirstProbe(int second) {
            this.second = second;
        }

        @Override
        public int poll() throws IOException {
            calls++;
            if (calls == 1) {
                try {
                    // not a synchronisation: the round that lost its CPU is the subject
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException(e);
                }
                return 0;
            }
            return calls == 2 ? second : 0;
        }
    }

    /** Finds an event at its first call, and counts calls. */
    private static final class ReadyProbe implements PolitePoll.Probe {
        int calls;

        @Override
        public int poll() {
            calls++;
            return 9;
        }
    }

    /** A first wait (no budget: it blocks) woken by an event: the next wait polls. */
    private static void blockAndWake(PolitePoll p) throws IOException {
        assertEquals(0, p.poll(() -> 1, CAP));
        p.blocking();
        p.wokeUp();
    }

    @Test
    void aThreadThatLostItsCpuProbesOnceMoreThenBacksOff() throws IOException {
        PolitePoll p = new PolitePoll(true, HOUR, false);
        blockAndWake(p);
        SlowFirstProbe slow = new SlowFirstProbe(0);
        assertEquals(0, p.poll(slow, CAP));
        assertEquals(2, slow.calls, "the slow round, then one more probe");
        assertEquals(2, p.polls());
        assertEquals(1, p.lostCpu());
        assertEquals(0, p.caught());
        // backing off: no probe, even after an event woke the blocked thread
        p.blocking();
        p.wokeUp();
        ReadyProbe ready = new ReadyProbe();
        assertEquals(0, p.poll(ready, CAP));
        assertEquals(0, ready.calls);
        assertEquals(2, p.polls());
    }

    @Test
    void anEventFoundByTheLastProbeIsTakenAndStillBacksOffBetweenPollingPeers() throws IOException {
        PolitePoll p = new PolitePoll(false, HOUR, false);
        blockAndWake(p);
        assertEquals(7, p.poll(new SlowFirstProbe(7), CAP));
        assertEquals(1, p.caught());
        assertEquals(1, p.lostCpu());
        ReadyProbe ready = new ReadyProbe();
        assertEquals(0, p.poll(ready, CAP));
        assertEquals(0, ready.calls, "two polling peers would keep taking the CPU from each other");
    }

    @Test
    void aLateEventMeansTheCpuWentToThePeerAndNoBackOff() throws IOException {
        PolitePoll p = new PolitePoll(true, HOUR, true);
        blockAndWake(p);
        assertEquals(7, p.poll(new SlowFirstProbe(7), CAP));
        assertEquals(1, p.caught());
        assertEquals(1, p.lostCpu());
        // the event came after a gap of at least the sleep: the budget covers the next wait's first probe
        ReadyProbe ready = new ReadyProbe();
        assertEquals(9, p.poll(ready, CAP));
        assertEquals(1, ready.calls);
        assertEquals(2, p.caught());
    }

    @Test
    void withoutALateEventTheLateEventRuleStillBacksOff() throws IOException {
        PolitePoll p = new PolitePoll(true, HOUR, true);
        blockAndWake(p);
        assertEquals(0, p.poll(new SlowFirstProbe(0), CAP));
        p.blocking();
        p.wokeUp();
        ReadyProbe ready = new ReadyProbe();
        assertEquals(0, p.poll(ready, CAP));
        assertEquals(0, ready.calls);
    }

    @Test
    void aZeroBackOffBlocksForThisWaitOnly() throws IOException {
        PolitePoll p = new PolitePoll(true, 0, false);
        blockAndWake(p);
        assertEquals(0, p.poll(new SlowFirstProbe(0), CAP));
        assertEquals(1, p.lostCpu());
        p.blocking();
        p.wokeUp();
        ReadyProbe ready = new ReadyProbe();
        assertEquals(9, p.poll(ready, CAP));
        assertEquals(1, ready.calls);
        assertEquals(2, p.blockingWaits());
    }
}
