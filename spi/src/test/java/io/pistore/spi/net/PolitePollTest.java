package io.pistore.spi.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PolitePollTest {
    private static final long CAP = TimeUnit.SECONDS.toNanos(1);

    /** A probe that finds its event at the {@code hitAt}-th poll (0: never). */
    private static final class CountingProbe implements PolitePoll.Probe {
        final int hitAt;
        int calls;

        CountingProbe(int hitAt) {
            this.hitAt = hitAt;
        }

        @Override
        public int poll() {
            calls++;
            return calls == hitAt ? 7 : 0;
        }
    }

    /** A first wait (no budget yet: it blocks) woken by an event at once: the budget becomes a few µs. */
    private static void blockAndWake(PolitePoll p) throws IOException {
        assertEquals(0, p.poll(() -> 1, CAP));
        p.blocking();
        p.wokeUp();
    }

    @Test
    void theFirstWaitDoesNotPoll() throws IOException {
        PolitePoll p = new PolitePoll(true);
        CountingProbe probe = new CountingProbe(1);
        assertEquals(0, p.poll(probe, CAP));
        assertEquals(0, probe.calls, "no gap seen yet: no budget");
        assertEquals(0, p.polls());
    }

    @Test
    void anEventSoonAfterBlockingMakesTheNextWaitPoll() throws IOException {
        PolitePoll p = new PolitePoll(true, 0, true);
        blockAndWake(p);
        CountingProbe probe = new CountingProbe(1);
        assertEquals(7, p.poll(probe, CAP), "the probe's result is returned");
        assertEquals(1, probe.calls);
        assertEquals(1, p.caught());
        assertEquals(1, p.blockingWaits());
    }

    @Test
    void anIdleThreadStopsPolling() throws IOException {
        PolitePoll p = new PolitePoll(true, 0, true);
        blockAndWake(p);
        CountingProbe nothing = new CountingProbe(0);
        // Every wait that catches nothing halves the budget; a budget of at most CAP is gone after 64 waits.
        for (int i = 0; i < 64; i++) {
            assertEquals(0, p.poll(nothing, CAP));
        }
        assertTrue(nothing.calls > 0, "the first idle wait polled");
        long polls = p.polls();
        for (int i = 0; i < 100; i++) {
            assertEquals(0, p.poll(nothing, CAP));
        }
        assertEquals(polls, p.polls(), "an idle thread polls no more");
        assertEquals(0, p.caught());
    }

    @Test
    void aZeroCapNeverPolls() throws IOException {
        PolitePoll p = new PolitePoll(true);
        for (int i = 0; i < 10; i++) {
            assertEquals(0, p.poll(() -> 1, 0));
            p.blocking();
            p.wokeUp();
        }
        assertEquals(0, p.polls());
        assertEquals(10, p.blockingWaits());
    }

    @Test
    void aWaitLongerThanTheCapDoesNotGrowTheBudget() throws IOException, InterruptedException {
        PolitePoll p = new PolitePoll(true);
        assertEquals(0, p.poll(() -> 1, TimeUnit.MICROSECONDS.toNanos(1)));
        // not a synchronisation: the gap longer than the cap is the subject
        Thread.sleep(2);
        p.wokeUp();
        CountingProbe probe = new CountingProbe(1);
        assertEquals(0, p.poll(probe, TimeUnit.MICROSECONDS.toNanos(1)));
        assertEquals(0, probe.calls, "a gap longer than the cap leaves the budget at zero");
    }

    @Test
    void aNegativeBackoffIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new PolitePoll(true, -1, true));
        assertTrue(e.getMessage().contains("backoffNanos"), e.getMessage());
    }
}
