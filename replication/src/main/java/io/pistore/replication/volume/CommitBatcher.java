package io.pistore.replication.volume;

import io.pistore.replication.raft.ApplyOutcome;
import io.pistore.replication.raft.PrecheckedEntry;
import io.pistore.replication.raft.ReplicaCommand;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;
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
 *
 * <p>Lingering: when an entry comes back, its writers are answered and most of them send their next
 * command at once (a host at a fixed queue depth does). Sending what is queued at that moment would
 * leave those next commands to wait for another entry, so a host's queue splits into two halves that
 * take turns, each entry carrying half of it. Instead the next entry waits until as many commands are
 * queued as were queued plus answered, or until as long as the entry before took to commit has
 * passed (at most {@code maxLingerNanos}), or until a batch is full; the host's whole queue then
 * leaves as one entry, and each write costs the peers half as many entries. A writer that sends one
 * command at a time never waits: one answered, one awaited, and it is that one.
 */
final class CommitBatcher {
    /** Runs a task once a delay has passed; returns what cancels it. */
    interface Delay {
        Runnable schedule(long nanos, Runnable task);
    }

    /** One daemon thread ends every batcher's lingering that no arriving command ended. */
    private static final class Timer {
        static final Delay SHARED = make();
    }

    private final Function<Message, CompletableFuture<RaftClientReply>> sender;
    private final int entriesInFlight;
    private final long batchBytes;
    private final int batchCommands;
    private final long maxLingerNanos;
    private final Delay delay;
    private final LongSupplier clock;
    private final ArrayDeque<Pending> queue = new ArrayDeque<>();
    private long queuedBytes;
    private int inFlight;
    /** Commands the queue waits for before the next entry leaves, until {@link #lingerEnd}; 0: none. */
    private int awaited;
    private long lingerEnd;
    /** Cancels the timer that ends the current lingering; null when none is set. */
    private Runnable lingerTimer;
    /** Counts the timers set, so one that fires after it was cancelled ends nothing. */
    private long timersSet;

    private static final class Pending {
        final ByteString command;
        final CompletableFuture<ApplyOutcome> done = new CompletableFuture<>();
        /** Whether this peer checked the command's writes as a replica would ({@link PrecheckedEntry}). */
        final boolean checked;

        Pending(ByteString command, boolean checked) {
            this.command = command;
            this.checked = checked;
        }
    }

    /**
     * {@code sender} puts one entry into the log and completes with its reply; a batch carries at most
     * {@code batchBytes} (a larger command goes alone) and {@code batchCommands} commands.
     */
    CommitBatcher(Function<Message, CompletableFuture<RaftClientReply>> sender, int entriesInFlight, long batchBytes,
            int batchCommands) {
        this(sender, entriesInFlight, batchBytes, batchCommands, 0, null, System::nanoTime);
    }

    /**
     * As above, lingering for the answered writers' next commands at most {@code maxLingerNanos} (0: never)
     * with {@code delay} and {@code clock}.
     */
    CommitBatcher(Function<Message, CompletableFuture<RaftClientReply>> sender, int entriesInFlight, long batchBytes,
            int batchCommands, long maxLingerNanos, Delay delay, LongSupplier clock) {
        if (entriesInFlight < 1 || batchCommands < 1 || maxLingerNanos < 0) {
            throw new IllegalArgumentException("entries in flight and commands per batch must be at least 1, the linger"
                    + " at least 0: " + entriesInFlight + ", " + batchCommands + ", " + maxLingerNanos + " ns");
        }
        this.sender = sender;
        this.entriesInFlight = entriesInFlight;
        this.batchBytes = batchBytes;
        this.batchCommands = batchCommands;
        this.maxLingerNanos = maxLingerNanos;
        this.delay = delay;
        this.clock = clock;
    }

    /** The timer every volume's batcher shares (made on first use). */
    static Delay timer() {
        return Timer.SHARED;
    }

    private static Delay make() {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, "pistore-commit-linger");
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        return (nanos, task) -> {
            var f = t.schedule(task, nanos, TimeUnit.NANOSECONDS);
            return () -> f.cancel(false);
        };
    }

    /**
     * Commits {@code command} (one encoded command): completes with what applying it did on the leader,
     * or exceptionally with the group's failure (the leader refused it, no quorum, ...).
     */
    CompletableFuture<ApplyOutcome> submit(Message command) {
        return submit(command, false);
    }

    /**
     * {@link #submit(Message)} of a command whose writes this peer has {@code checked} as a replica
     * would: an entry made only of such commands leaves as a {@link PrecheckedEntry}.
     */
    CompletableFuture<ApplyOutcome> submit(Message command, boolean checked) {
        Pending p = new Pending(command.getContent(), checked);
        List<Pending> batch;
        synchronized (this) {
            queue.add(p);
            queuedBytes += p.command.size();
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
        if (awaited > 0) {
            long left = lingerEnd - clock.getAsLong();
            if (queue.size() < awaited && left > 0 && queue.size() < batchCommands && queuedBytes < batchBytes) {
                if (lingerTimer == null) {
                    long timer = ++timersSet;
                    lingerTimer = delay.schedule(left, () -> lingerOver(timer));
                }
                return null;
            }
            awaited = 0;
            if (lingerTimer != null) {
                lingerTimer.run();
                lingerTimer = null;
            }
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
        queuedBytes -= bytes;
        inFlight++;
        return b;
    }

    /** The linger timer: what is queued leaves now. */
    private void lingerOver(long timer) {
        List<Pending> batch;
        synchronized (this) {
            if (timer != timersSet || lingerTimer == null) {
                return; // cancelled as it fired
            }
            lingerTimer = null;
            awaited = 0;
            batch = takeBatch();
        }
        send(batch);
    }

    /**
     * An entry of {@code answered} commands sent at {@code sentAt} came back: the next waits for their
     * writers' next commands (see the class comment), at most as long as this one took.
     */
    private void lingerAfter(int answered, long sentAt) {
        if (maxLingerNanos == 0) {
            return;
        }
        long now = clock.getAsLong();
        awaited = queue.size() + answered;
        lingerEnd = now + Math.min(now - sentAt, maxLingerNanos);
    }

    private void send(List<Pending> batch) {
        while (batch != null) {
            List<Pending> b = batch;
            long sentAt = maxLingerNanos == 0 ? 0 : clock.getAsLong();
            CompletableFuture<RaftClientReply> f;
            try {
                f = sender.apply(entry(b));
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            if (!f.isDone()) {
                f.whenComplete((r, t) -> {
                    List<Pending> next;
                    synchronized (this) {
                        inFlight--;
                        if (t == null) {
                            lingerAfter(b.size(), sentAt);
                        }
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

    /** The entry of {@code batch}'s commands: a {@link PrecheckedEntry} when this peer checked every one. */
    private static Message entry(List<Pending> batch) {
        Message m = batch.size() == 1 ? Message.valueOf(batch.get(0).command)
                : ReplicaCommand.batch(batch.stream().map(x -> x.command).toList());
        for (Pending p : batch) {
            if (!p.checked) {
                return m;
            }
        }
        return new PrecheckedEntry(m.getContent());
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
                CompletableFuture<RaftClientReply> f = sender.apply(entry(List.of(p)));
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
