package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.replication.raft.ApplyOutcome;
import io.pistore.replication.raft.ReplicaCommand;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.StateMachineException;
import org.junit.jupiter.api.Test;

/** Group commit: what leaves as one entry, what each command is answered, what a refused batch becomes. */
class CommitBatcherTest {
    /** The entries sent, each with the future its reply completes. */
    private final List<Message> sent = new ArrayList<>();
    private final List<CompletableFuture<RaftClientReply>> replies = new ArrayList<>();

    private CompletableFuture<RaftClientReply> send(Message m) {
        CompletableFuture<RaftClientReply> f = new CompletableFuture<>();
        synchronized (this) {
            sent.add(m);
            replies.add(f);
        }
        return f;
    }

    private static RaftClientReply ok(Message m) {
        return RaftClientReply.newBuilder().setClientId(ClientId.randomId()).setServerId(RaftPeerId.valueOf("n1"))
                .setGroupId(RaftGroupId.randomId()).setCallId(1).setSuccess().setMessage(m).build();
    }

    private static RaftClientReply refused(String why) {
        return RaftClientReply.newBuilder().setClientId(ClientId.randomId()).setServerId(RaftPeerId.valueOf("n1"))
                .setGroupId(RaftGroupId.randomId()).setCallId(1).setException(new StateMachineException(why)).build();
    }

    private static Message write(long lba) {
        return ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, lba, 1, false);
    }

    @Test
    void commandsArrivingWhileAnEntryIsInFlightLeaveTogetherInOrderEachWithItsOwnOutcome() throws Exception {
        CommitBatcher b = new CommitBatcher(this::send, 1, 1 << 20, 256);
        CompletableFuture<ApplyOutcome> first = b.submit(write(0));
        assertEquals(1, sent.size(), "nothing in flight: the first command leaves at once, alone");
        List<CompletableFuture<ApplyOutcome>> waiting = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            waiting.add(b.submit(write(i)));
        }
        assertEquals(1, sent.size(), "the others wait for the entry in flight");
        replies.get(0).complete(ok(ApplyOutcome.done().encode()));
        assertTrue(first.get().isDone());
        assertEquals(2, sent.size(), "then leave as one entry");
        List<ReplicaCommand> batch = ReplicaCommand.decodeAll(sent.get(1).getContent());
        assertEquals(5, batch.size());
        for (int i = 0; i < 5; i++) {
            assertEquals(i + 1, batch.get(i).lba, "in the order they came");
        }
        List<ApplyOutcome> outcomes = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            outcomes.add(i == 2 ? ApplyOutcome.failed("replica n1: no space") : ApplyOutcome.done());
        }
        replies.get(1).complete(ok(ApplyOutcome.encodeAll(outcomes)));
        for (int i = 0; i < 5; i++) {
            assertEquals(i != 2, waiting.get(i).get().isDone(), "command " + i + " gets its own outcome");
        }
    }

    @Test
    void aBatchTheLeaderRefusedIsSentAgainOneCommandPerEntry() throws Exception {
        CommitBatcher b = new CommitBatcher(this::send, 1, 1 << 20, 256);
        b.submit(write(0));
        CompletableFuture<ApplyOutcome> good = b.submit(write(1));
        CompletableFuture<ApplyOutcome> bad = b.submit(write(2));
        replies.get(0).complete(ok(ApplyOutcome.done().encode()));
        assertEquals(2, ReplicaCommand.decodeAll(sent.get(1).getContent()).size());
        replies.get(1).complete(refused("leader n1: WRITE lba=2 refused"));
        assertEquals(4, sent.size(), "each command of the refused batch alone");
        assertEquals(1, ReplicaCommand.decodeAll(sent.get(2).getContent()).get(0).lba);
        assertEquals(2, ReplicaCommand.decodeAll(sent.get(3).getContent()).get(0).lba);
        replies.get(2).complete(ok(ApplyOutcome.done().encode()));
        replies.get(3).complete(refused("leader n1: WRITE lba=2 refused"));
        assertTrue(good.get().isDone(), "the good command is committed");
        ExecutionException e = assertThrows(ExecutionException.class, bad::get);
        assertTrue(e.getCause().getMessage().contains("lba=2 refused"), e.getCause().getMessage());
    }

    @Test
    void aBatchStopsAtItsByteLimitAndALargerCommandGoesAlone() {
        Message big = ReplicaCommand.plain(ReplicaCommand.Op.FLUSH, 0, 0, false);
        int one = big.getContent().size();
        CommitBatcher b = new CommitBatcher(this::send, 1, 2L * one, 256);
        b.submit(write(0));
        for (int i = 1; i <= 5; i++) {
            b.submit(write(i));
        }
        replies.get(0).complete(ok(ApplyOutcome.done().encode()));
        assertEquals(2, ReplicaCommand.decodeAll(sent.get(1).getContent()).size(), "two commands fit the limit");
        assertFalse(replies.get(1).isDone());
    }

    @Test
    void aFailureReachesEveryCommandOfTheEntry() {
        CommitBatcher b = new CommitBatcher(this::send, 2, 1 << 20, 256);
        CompletableFuture<ApplyOutcome> a = b.submit(write(0));
        CompletableFuture<ApplyOutcome> c = b.submit(write(1));
        assertEquals(2, sent.size(), "two entries may be in flight");
        replies.get(0).completeExceptionally(new java.io.IOException("no quorum"));
        replies.get(1).complete(ok(ApplyOutcome.done().encode()));
        assertTrue(a.isCompletedExceptionally());
        assertFalse(c.isCompletedExceptionally());
    }

    /** A timer driven by hand: what was scheduled, after how long, and whether it was cancelled. */
    private static final class HandTimer implements CommitBatcher.Delay {
        final List<Long> delays = new ArrayList<>();
        final List<Runnable> tasks = new ArrayList<>();
        final List<Boolean> cancelled = new ArrayList<>();

        @Override
        public Runnable schedule(long nanos, Runnable task) {
            int i = tasks.size();
            delays.add(nanos);
            tasks.add(task);
            cancelled.add(false);
            return () -> cancelled.set(i, true);
        }
    }

    private final AtomicLong now = new AtomicLong(1_000_000);

    private CommitBatcher lingering(HandTimer timer, int batchCommands) {
        return new CommitBatcher(this::send, 1, 1 << 20, batchCommands, 2_000_000, timer, now::get);
    }

    /**
     * A lingering batcher whose first entry (one write, lba 0) came back {@code commitNanos} after it
     * left, with writes 1 to {@code queued} queued behind it meanwhile.
     */
    private CommitBatcher firstEntryAnswered(HandTimer timer, int batchCommands, int queued, long commitNanos) {
        CommitBatcher b = lingering(timer, batchCommands);
        b.submit(write(0));
        for (int i = 1; i <= queued; i++) {
            b.submit(write(i));
        }
        answerEntry(0, 1, commitNanos);
        return b;
    }

    /** Answers entry {@code entry} of {@code commands} commands, each done, {@code commitNanos} after it left. */
    private void answerEntry(int entry, int commands, long commitNanos) {
        now.addAndGet(commitNanos);
        List<ApplyOutcome> outcomes = new ArrayList<>();
        for (int i = 0; i < commands; i++) {
            outcomes.add(ApplyOutcome.done());
        }
        Message reply = commands == 1 ? ApplyOutcome.done().encode() : ApplyOutcome.encodeAll(outcomes);
        replies.get(entry).complete(ok(reply));
    }

    @Test
    void afterAnEntryComesBackTheNextWaitsForTheAnsweredWritersNextCommandsAndTakesThemAll() {
        HandTimer timer = new HandTimer();
        CommitBatcher b = firstEntryAnswered(timer, 256, 3, 500_000);
        // queued 3 + answered 1: the batch waits for a fourth command, not sent with 3
        assertEquals(1, sent.size(), "lingering for the answered writer's next command");
        assertEquals(1, timer.tasks.size(), "a timer ends the lingering if the command does not come");
        assertTrue(timer.delays.get(0) <= 500_000, "at most as long as the entry before took: " + timer.delays.get(0));
        b.submit(write(4));
        assertEquals(2, sent.size(), "the answered writer's command came: all four leave as one entry");
        assertEquals(4, ReplicaCommand.decodeAll(sent.get(1).getContent()).size());
        assertTrue(timer.cancelled.get(0), "the timer is cancelled");
        timer.tasks.get(0).run(); // fired as it was cancelled: ends nothing
        assertEquals(2, sent.size());
    }

    @Test
    void aWriterThatStopsIsNotWaitedForPastTheTimer() {
        HandTimer timer = new HandTimer();
        CommitBatcher b = firstEntryAnswered(timer, 256, 2, 300_000);
        assertEquals(1, sent.size(), "waits for the answered writer");
        timer.tasks.get(0).run(); // its command never came
        assertEquals(2, sent.size(), "the timer sends what is queued");
        assertEquals(2, ReplicaCommand.decodeAll(sent.get(1).getContent()).size());
        // the lingering is over: later commands queue behind the entry in flight as usual
        b.submit(write(3));
        assertEquals(2, sent.size());
    }

    @Test
    void aWriterWithOneCommandAtATimeNeverWaits() {
        HandTimer timer = new HandTimer();
        CommitBatcher b = lingering(timer, 256);
        for (int i = 0; i < 5; i++) {
            b.submit(write(i));
            assertEquals(i + 1, sent.size(), "command " + i + " leaves at once");
            answerEntry(i, 1, 100_000);
        }
        assertEquals(0, timer.tasks.size(), "no timer was needed");
    }

    @Test
    void aFullBatchLeavesWithoutWaiting() {
        HandTimer timer = new HandTimer();
        CommitBatcher b = firstEntryAnswered(timer, 3, 2, 100_000);
        assertEquals(1, sent.size(), "two queued, three awaited");
        b.submit(write(3));
        assertEquals(2, sent.size(), "three queued: a full batch leaves");
        assertEquals(3, ReplicaCommand.decodeAll(sent.get(1).getContent()).size());
    }

    @Test
    void aCommandArrivingAfterTheLingerEndedLeavesAtOnce() {
        HandTimer timer = new HandTimer();
        CommitBatcher b = firstEntryAnswered(timer, 256, 3, 100_000);
        timer.tasks.get(0).run(); // the answered writer did not come back in time
        assertEquals(3, ReplicaCommand.decodeAll(sent.get(1).getContent()).size());
        answerEntry(1, 3, 100_000); // three answered: the next entry waits up to 100 us for three
        now.addAndGet(150_000);
        b.submit(write(4));
        assertEquals(3, sent.size(), "one of three came, after the lingering ended: it leaves at once");
        assertEquals(1, timer.tasks.size(), "no second timer");
    }
}
