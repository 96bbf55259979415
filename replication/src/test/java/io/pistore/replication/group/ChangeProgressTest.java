package io.pistore.replication.group;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A membership change waits as long as its new peers make progress and gives up only after the
 * membership timeout without any, or after the most its volume's copy may take: a large volume takes
 * longer to copy than any fixed bound.
 */
class ChangeProgressTest {
    @Test
    void aWaitGoesOnWhileProgressMovesAndEndsOnceItStops() {
        assertTimeoutPreemptively(java.time.Duration.ofSeconds(60), this::waits, "a wait that never ends");
    }

    private void waits() throws Exception {
        AtomicInteger looks = new AtomicInteger();
        // Moves at each of its first 6 looks, then stays: the wait ends only a full window after the last move.
        assertNull(GroupMembership.awaitWhileProgressing(new CompletableFuture<String>(), 100,
                () -> Math.min(looks.incrementAndGet(), 6), 60_000));
        assertTrue(looks.get() > 6, "looked again after the last move: " + looks.get());

        AtomicInteger still = new AtomicInteger();
        assertNull(GroupMembership.awaitWhileProgressing(new CompletableFuture<String>(), 50, () -> {
            still.incrementAndGet();
            return 7;
        }, 60_000), "no progress: no answer");

        // Moving without end (a group that goes on writing to a peer whose change never ends): bounded in all.
        AtomicInteger forever = new AtomicInteger();
        assertNull(GroupMembership.awaitWhileProgressing(new CompletableFuture<String>(), 100,
                forever::incrementAndGet, 400), "no answer within the most it may take");
        assertTrue(forever.get() >= 2, "looked while it moved: " + forever.get());

        CompletableFuture<String> later = new CompletableFuture<>();
        AtomicInteger moving = new AtomicInteger();
        assertEquals("done", GroupMembership.awaitWhileProgressing(later, 100, () -> {
            if (moving.incrementAndGet() == 8) {
                later.complete("done"); // answered after several windows' worth of waiting
            }
            return moving.get();
        }, 60_000));

        CompletableFuture<String> failed = CompletableFuture.failedFuture(new IllegalStateException("refused"));
        ExecutionException e = assertThrows(ExecutionException.class,
                () -> GroupMembership.awaitWhileProgressing(failed, 100, () -> 0, 60_000));
        assertEquals("refused", e.getCause().getMessage());
    }
}
