package io.pistore.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
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
}
