package io.pistore.replication.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.testkit.Eventually;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class CoarseTimeoutsTest {
    private static Throwable failure(CompletableFuture<?> f) throws Exception {
        try {
            f.get(10, TimeUnit.SECONDS);
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @Test
    void aCallThatDoesNotEndInTimeFailsWithATimeoutNotBefore() throws Exception {
        CoarseTimeouts t = new CoarseTimeouts("test-timeouts");
        CompletableFuture<String> f = new CompletableFuture<>();
        long start = System.nanoTime();
        assertSame(f, t.within(f, 200));
        assertInstanceOf(TimeoutException.class, failure(f));
        assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(200), "failed before its time");
    }

    @Test
    void callsThatEndInTimeKeepTheirOutcomeAndTheLateOnesFailEachAlone() throws Exception {
        CoarseTimeouts t = new CoarseTimeouts("test-timeouts");
        List<CompletableFuture<Integer>> calls = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            calls.add(t.within(new CompletableFuture<>(), i % 2 == 0 ? 60_000 : 50));
        }
        for (int i = 0; i < 200; i += 2) {
            calls.get(i).complete(i);
        }
        for (int i = 0; i < 200; i++) {
            if (i % 2 == 0) {
                assertEquals(i, calls.get(i).get(10, TimeUnit.SECONDS));
            } else {
                assertInstanceOf(TimeoutException.class, failure(calls.get(i)));
            }
        }
    }

    /** The thread sleeps without ticking once calls stop; a call added then still times out. */
    @Test
    void aCallAddedAfterTheThreadWentToSleepStillTimesOut() throws Exception {
        CoarseTimeouts t = new CoarseTimeouts("test-timeouts");
        t.within(new CompletableFuture<>(), 1).handle((v, x) -> null).get(10, TimeUnit.SECONDS);
        Eventually.await("the thread asleep after its idle second", t::sleepingNow);
        assertTrue(t.sleepingNow(), "the thread never went to sleep");
        CompletableFuture<String> f = t.within(new CompletableFuture<>(), 20);
        assertInstanceOf(TimeoutException.class, failure(f));
        assertFalse(f.isCancelled());
    }
}
