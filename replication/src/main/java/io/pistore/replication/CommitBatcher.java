package io.pistore.replication;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * Group commit of one volume's log commands: at most {@code entriesInFlight} log entries are on their
 * way to a quorum at once; commands that arrive meanwhile wait and leave together, as one batch entry,
 * when one comes back. Every log entry costs each peer the same work whatever it carries (a round
 * through the client and the leader, an append on each follower, an apply), so with many writes in
 * flight a few large entries cost far less than many small ones; with one write at a time nothing
 * waits. Commands keep their order (the group's client keeps the entries' order).
 *
 * <p>Each command is answered by its own outcome. An entry the leader refused whole (one command in it
 * failed its check on entry) is sent again one command per entry, so every command gets its own answer
 * and a refused one takes no other down with it.
 */
final class CommitBatcher {
    private final Function<Message, CompletableFuture<RaftClientReply>> sender;
    private final int entriesInFlight;
    private final long batchBytes;
    private final int batchCommands;
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private int inFlight;

    private static final class Pending {
        final ByteString command;
        final CompletableFuture<ApplyOutcome> done = new CompletableFuture<>();

        Pending(ByteString command) {
            this.command = command;
        }
    }

    /**
     * {@code sender} puts one entry into the log and completes with its reply; a batch carries at most
     * {@code batchBytes} (a larger command goes alone) and {@code batchCommands} commands.
     */
    CommitBatcher(Function<Message, CompletableFuture<RaftClientReply>> sender, int entriesInFlight, long batchBytes,
            int batchCommands) {
        if (entriesInFlight < 1 || batchCommands < 1) {
            throw new IllegalArgumentException("entries in flight and commands per batch must be at least 1");
        }
        this.sender = sender;
        this.entriesInFlight = entriesInFlight;
        this.batchBytes = batchBytes;
        this.batchCommands = batchCommands;
    }

    /**
     * Commits {@code command} (one encoded command): completes with what applying it did on the leader,
     * or exceptionally with the group's failure (the leader refused it, no quorum, ...).
     */
    CompletableFuture<ApplyOutcome> submit(Message command) {
        Pending p = new Pending(command.getContent());
        List<Pending> batch;
        synchronized (this) {
            queue.add(p);
            batch = takeBatch();
        }
        if (batch != null) {
            send(batch);
        }
        return p.done;
    }

    /** The next entry's commands, if one may leave now; counts it in flight. */
    private List<Pending> takeBatch() {
        if (inFlight >= entriesInFlight || queue.isEmpty()) {
            return null;
        }
        List<Pending> b = new ArrayList<>();
        long bytes = 0;
        while (!queue.isEmpty() && b.size() < batchCommands) {
            long next = queue.peek().command.size();
            if (!b.isEmpty() && bytes + next > batchBytes) {
                break;
            }
            b.add(queue.poll());
            bytes += next;
        }
        inFlight++;
        return b;
    }

    private void send(List<Pending> batch) {
        while (batch != null) {
            List<Pending> b = batch;
            CompletableFuture<RaftClientReply> f;
            try {
                f = sender.apply(b.size() == 1 ? Message.valueOf(b.get(0).command)
                        : ReplicaCommand.batch(b.stream().map(x -> x.command).toList()));
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            if (!f.isDone()) {
                f.whenComplete((r, t) -> {
                    List<Pending> next;
                    synchronized (this) {
                        inFlight--;
                        next = takeBatch();
                    }
                    answer(b, r, t);
                    send(next);
                });
                return;
            }
            // Completed at once (a failure before sending): go on here rather than recursing.
            synchronized (this) {
                inFlight--;
                batch = takeBatch();
            }
            answer(b, f.getNow(null), f.isCompletedExceptionally() ? failure(f) : null);
        }
    }

    private static Throwable failure(CompletableFuture<?> f) {
        try {
            f.join();
            return null;
        } catch (RuntimeException e) {
            return e.getCause() == null ? e : e.getCause();
        }
    }

    private void answer(List<Pending> batch, RaftClientReply r, Throwable t) {
        if (t != null) {
            batch.forEach(p -> p.done.completeExceptionally(t));
            return;
        }
        if (!r.isSuccess()) {
            if (batch.size() == 1) {
                batch.get(0).done.completeExceptionally(r.getException());
                return;
            }
            for (Pending p : batch) { // each alone, for its own answer
                CompletableFuture<RaftClientReply> f = sender.apply(Message.valueOf(p.command));
                f.whenComplete((r1, t1) -> answer(List.of(p), r1, t1));
            }
            return;
        }
        List<ApplyOutcome> outcomes;
        try {
            outcomes = ApplyOutcome.decodeAll(r.getMessage().getContent(), batch.size());
        } catch (RuntimeException e) {
            batch.forEach(p -> p.done.completeExceptionally(e));
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            batch.get(i).done.complete(outcomes.get(i));
        }
    }
}
