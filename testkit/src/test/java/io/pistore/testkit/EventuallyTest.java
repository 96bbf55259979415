package io.pistore.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class EventuallyTest {
    @Test
    void aConditionThatHoldsEndsTheWaitAfterAsManyQuestionsAsItTook() {
        AtomicInteger asked = new AtomicInteger();
        Eventually.await("the third question", () -> asked.incrementAndGet() == 3);
        assertEquals(3, asked.get());
    }

    @Test
    void aConditionThatNeverHoldsFailsWithWhatWasAwaited() {
        AssertionError e = assertThrows(AssertionError.class,
                () -> Eventually.await("a thing that never happens", Duration.ofMillis(30), () -> false));
        assertEquals("waited 30 ms for a thing that never happens", e.getMessage());
    }

    @Test
    void aReadingThatStopsChangingIsReturnedOnceItStayedTheSame() {
        AtomicInteger asked = new AtomicInteger();
        int v = Eventually.steady("a counter to stop", Duration.ofMillis(20), Duration.ofSeconds(30),
                () -> Math.min(asked.incrementAndGet(), 5));
        assertEquals(5, v);
        assertTrue(asked.get() > 5, "asked again after it stopped: " + asked.get());
    }

    @Test
    void aReadingThatKeepsChangingFailsWithItsLastValue() {
        AtomicInteger asked = new AtomicInteger();
        AssertionError e = assertThrows(AssertionError.class, () -> Eventually.steady("a counter to stop",
                Duration.ofSeconds(10), Duration.ofMillis(30), asked::incrementAndGet));
        assertTrue(e.getMessage().startsWith("waited 30 ms for a counter to stop; still changing: "), e.getMessage());
    }

    @Test
    void anInterruptedWaitFailsAndKeepsTheInterrupt() {
        Thread.currentThread().interrupt();
        AssertionError e = assertThrows(AssertionError.class, () -> Eventually.await("nothing", () -> false));
        assertEquals("interrupted waiting for nothing", e.getMessage());
        assertTrue(Thread.interrupted(), "the interrupt is kept");
    }

    @Test
    void untilReturnsTheFirstReadingThatIsAcceptedAndAsksNoMore() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        List<Integer> refused = new ArrayList<>();
        int v = Eventually.until("a reading of 4", asked::incrementAndGet, n -> {
            if (n < 4) {
                refused.add(n);
            }
            return n >= 4;
        });
        assertEquals(4, v);
        assertEquals(4, asked.get());
        assertEquals(List.of(1, 2, 3), refused);
    }

    @Test
    void untilFailsWithTheLastReading() {
        AtomicInteger asked = new AtomicInteger();
        AssertionError e = assertThrows(AssertionError.class, () -> Eventually.until("a negative reading",
                Duration.ofMillis(30), asked::incrementAndGet, n -> n < 0));
        assertEquals("waited 30 ms for a negative reading; last: " + asked.get(), e.getMessage());
    }

    @Test
    void whatTheProbeThrowsEndsTheWaitAtOnce() {
        AtomicInteger asked = new AtomicInteger();
        IOException thrown = new IOException("refused");
        IOException e = assertThrows(IOException.class, () -> Eventually.until("a reading", () -> {
            if (asked.incrementAndGet() == 2) {
                throw thrown;
            }
            return asked.get();
        }, n -> false));
        assertSame(thrown, e);
        assertEquals(2, asked.get());
    }

    @Test
    void withinSaysWhetherTheConditionCameToHold() {
        AtomicInteger asked = new AtomicInteger();
        assertTrue(Eventually.within(Duration.ofSeconds(30), () -> asked.incrementAndGet() == 3));
        assertEquals(3, asked.get());
        assertFalse(Eventually.within(Duration.ofMillis(30), () -> false));
    }

    @Test
    void driveRunsTheStepUntilTheConditionHolds() {
        AtomicInteger work = new AtomicInteger(5);
        AtomicInteger steps = new AtomicInteger();
        Eventually.drive("the work to be done", () -> {
            steps.incrementAndGet();
            if (work.get() == 0) {
                return 0;
            }
            work.decrementAndGet();
            return 1;
        }, () -> work.get() == 0);
        assertEquals(0, work.get());
        assertEquals(5, steps.get(), "no step after the condition held");
    }

    @Test
    void driveWithoutProgressFailsWithWhatWasAwaited() {
        AssertionError e = assertThrows(AssertionError.class, () -> Eventually.drive("work that never comes",
                Duration.ofMillis(30), () -> 0, () -> false));
        assertEquals("waited 30 ms for work that never comes", e.getMessage());
    }
}
