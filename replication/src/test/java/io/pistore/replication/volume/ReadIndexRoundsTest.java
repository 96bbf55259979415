package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** A follower's read-index requests shared by its reads, and what a read does when its leader is lost. */
class ReadIndexRoundsTest {
    /** The requests sent, in order: to whom, and the future the test answers. */
    private record Sent(String leader, CompletableFuture<Long> answer) {
    }

    private final List<Sent> sent = new ArrayList<>();
    private final AtomicReference<String> leaderNow = new AtomicReference<>("n1");
    private final ReadIndexRounds<Long, String> rounds = new ReadIndexRounds<>(leader -> {
        CompletableFuture<Long> f = new CompletableFuture<>();
        sent.add(new Sent(leader, f));
        return f;
    }, leaderNow::get);

    @Test
    void readsThatComeWhileARequestIsOutShareTheNextNeverTheOneOut() {
        CompletableFuture<Long> first = rounds.ask("n1");
        CompletableFuture<Long> second = rounds.ask("n1");
        CompletableFuture<Long> third = rounds.ask("n1");
        assertEquals(1, sent.size(), "one request out at a time to one leader");
        assertNotSame(first, second, "a read that came after the request was sent waits for the next");
        assertSame(second, third, "reads that came meanwhile share the next request");
        sent.get(0).answer.complete(10L);
        assertEquals(10L, first.join());
        assertFalse(second.isDone(), "the answer of a request sent before a read came is not that read's");
        assertEquals(2, sent.size(), "the next request leaves once the first is answered");
        sent.get(1).answer.complete(11L);
        assertEquals(11L, second.join());
        assertEquals(2, sent.size(), "nobody waiting: nothing more sent");
        CompletableFuture<Long> later = rounds.ask("n1");
        assertEquals(3, sent.size(), "with nothing out, a read sends at once");
        sent.get(2).answer.completeExceptionally(new java.io.IOException("refused"));
        assertTrue(later.isCompletedExceptionally());
    }

    /**
     * The stall this guards against: a request to a leader that died or froze may never be answered
     * (not before the attempt time), and reads that joined the next round behind it waited as long.
     */
    @Test
    void aReadForANewLeaderGoesAtOnceWithTheReadsWaitingAndTheOldAnswerSendsNothing() {
        CompletableFuture<Long> toDead = rounds.ask("n1");
        CompletableFuture<Long> behind = rounds.ask("n1");
        leaderNow.set("n3");
        CompletableFuture<Long> toNew = rounds.ask("n3");
        assertEquals(2, sent.size());
        assertEquals("n3", sent.get(1).leader, "sent to the new leader without waiting for the old request");
        assertSame(behind, toNew, "the reads that waited behind the old request go with it");
        sent.get(1).answer.complete(20L);
        assertEquals(20L, toNew.join());
        assertFalse(toDead.isDone());
        sent.get(0).answer.completeExceptionally(new java.io.IOException("deadline exceeded"));
        assertTrue(toDead.isCompletedExceptionally(), "the late answer completes the reads it was sent for");
        CompletableFuture<Long> after = rounds.ask("n3");
        assertEquals(3, sent.size(), "nothing out any more: a read sends at once");
        assertEquals("n3", sent.get(2).leader);
        sent.get(2).answer.complete(21L);
        assertEquals(21L, after.join());
    }

    @Test
    void aNextRoundGoesToTheLeaderKnownWhenTheLastIsAnswered() {
        CompletableFuture<Long> first = rounds.ask("n1");
        CompletableFuture<Long> next = rounds.ask("n1");
        leaderNow.set("n2");
        sent.get(0).answer.complete(1L);
        assertEquals(1L, first.join());
        assertEquals("n2", sent.get(1).leader);
        leaderNow.set(null);
        CompletableFuture<Long> again = rounds.ask("n2");
        sent.get(1).answer.complete(2L);
        assertEquals(2L, next.join());
        assertEquals("n2", sent.get(2).leader, "no leader known now: the one asked before");
        assertFalse(again.isDone());
    }

    @Test
    void aReadStopsWaitingOnceThisPeerKnowsAnotherLeaderOrNone() throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        CompletableFuture<Long> never = new CompletableFuture<>();
        leaderNow.set("n3");
        assertNull(rounds.awaitWhileLeading(never, "n1", end), "another leader: read through the group");
        leaderNow.set(null);
        assertNull(rounds.awaitWhileLeading(never, "n1", end), "no leader known: read through the group");
        leaderNow.set("n1");
        assertThrows(TimeoutException.class,
                () -> rounds.awaitWhileLeading(never, "n1", System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50)),
                "the leader asked still leads: the read waits until its time is up");
        assertEquals(5L, rounds.awaitWhileLeading(CompletableFuture.completedFuture(5L), "n1", end));
    }
}
