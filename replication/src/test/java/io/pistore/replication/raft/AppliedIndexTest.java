package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The applied index that reads wait on, and its hold while a restored copy is not whole yet. */
class AppliedIndexTest {

    @Test
    void advancesOnlyForwardAndWakesAWaiter() throws Exception {
        AppliedIndex a = new AppliedIndex();
        a.advance(5);
        a.advance(3);
        assertEquals(5, a.get());
        assertTrue(a.await(5, 0));
        assertFalse(a.await(6, 10), "nothing applied index 6");
        CompletableFuture<Boolean> waiter = waiter(a, 7);
        a.advance(7);
        assertTrue(waiter.get(30, TimeUnit.SECONDS));
    }

    @Test
    void aHeldIndexShowsNothingBelowTheSettledIndexThenJumpsToIt() throws Exception {
        AppliedIndex a = new AppliedIndex();
        a.advance(10);
        a.holdUntil(20); // restored from a copy whole at 20
        assertTrue(a.settling());
        a.advance(15);
        a.advance(19);
        assertEquals(10, a.get(), "entries before the settled index are not shown");
        assertFalse(a.await(15, 10), "a read waiting for index 15 waits on while the files are not whole");
        CompletableFuture<Boolean> waiter = waiter(a, 12);
        a.advance(20);
        assertTrue(waiter.get(30, TimeUnit.SECONDS));
        assertEquals(20, a.get());
        assertFalse(a.settling());
        a.advance(21);
        assertEquals(21, a.get());
    }

    @Test
    void aHoldAtOrBelowWhatIsShownHoldsNothing() {
        AppliedIndex a = new AppliedIndex();
        a.advance(30);
        a.holdUntil(30);
        assertFalse(a.settling());
        a.advance(31);
        assertEquals(31, a.get());
    }

    /** A read waiting (on another thread) for {@code a} to reach {@code index}; true once it did. */
    private static CompletableFuture<Boolean> waiter(AppliedIndex a, long index) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return a.await(index, 30_000);
            } catch (InterruptedException e) {
                return false;
            }
        });
    }
}
