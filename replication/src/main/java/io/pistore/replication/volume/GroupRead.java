package io.pistore.replication.volume;

import io.pistore.replication.ReplicationException;
import io.pistore.replication.raft.ReadReply;
import io.pistore.replication.raft.ReplicaCommand;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.protocol.exceptions.StateMachineException;

/**
 * A linearizable read through a volume's group, in attempts, so that one peer's failure costs a
 * read a stall, not an error. Each attempt is an unordered read-only request: Ratis's client finds
 * the leader, and a follower it reaches asks the leader for the read index. An attempt that fails
 * (the peer asked had lost its leader; a read index refused during an election) is sent again after
 * {@link #RETRY_PAUSE_MS} to the leader known then ({@link #firstTarget}); one unanswered after the
 * attempt time (its peer died or froze), or once the calling peer knows a leader none of the
 * unanswered ones went to ({@link #newLeader}), gets a second attempt beside it, to a peer none of
 * them went to ({@link #besideTarget}), the first answer winning. A read on a member so stalls about
 * the election after a peer fails, at most the election and one attempt time; only without a quorum does it
 * fail, at the operation timeout. Reads change nothing, so sending
 * one again is harmless; a refusal by the state machine is final.
 *
 * <p>Also the read of one chosen replica at least as fresh as an applied index ({@link #fromReplica}),
 * which healing and scrub use.
 *
 * <p>Not the client's ordered stream: after a leader died, a read sent on it waited there until the
 * operation timeout although a new leader was elected within the election timeout.
 */
final class GroupRead {
    /** The pause before an attempt that failed at once is sent again. */
    static final long RETRY_PAUSE_MS = 50;

    private GroupRead() {
    }

    /**
     * Whether the calling peer knows a leader ({@code hint}) that none of the unanswered attempts went
     * to ({@code asked}): one elected after the leader they went to died or froze. An attempt to it
     * then goes at once, beside them, instead of after the attempt time.
     */
    static boolean newLeader(RaftPeerId hint, Collection<RaftPeerId> asked) {
        return hint != null && !asked.contains(hint);
    }

    /**
     * The peer a first attempt goes to (and one after attempts that all failed at once, such as a read
     * index a new leader refused until it committed an entry of its term): whichever the client takes
     * for the leader (null), unless the calling peer knows another leader ({@code hint}): a follower's
     * answer to a read makes the client take that follower for the leader, and its reads would go on
     * through it.
     */
    static RaftPeerId firstTarget(RaftPeerId hint, RaftPeerId clientLeader) {
        return hint != null && !hint.equals(clientLeader) ? hint : null;
    }

    /**
     * The peer an attempt beside unanswered ones goes to: the first of the leader the calling peer
     * knows, the client's leader, then each member after the client's leader in turn, that none of the
     * unanswered attempts went to ({@code asked}); so an attempt that went unanswered (its peer froze,
     * or died without closing its connections) is not followed by another to the same peer, even when
     * the leader moved meanwhile. A follower asked answers after getting the read index from whoever
     * leads by then. When every member was asked: the next one after the client's leader again.
     */
    static RaftPeerId besideTarget(List<RaftPeerId> members, RaftPeerId hint, RaftPeerId clientLeader,
            Collection<RaftPeerId> asked) {
        if (hint != null && !asked.contains(hint)) {
            return hint;
        }
        if (clientLeader != null && !asked.contains(clientLeader)) {
            return clientLeader;
        }
        int n = members.size();
        int at = clientLeader == null ? -1 : members.indexOf(clientLeader); // -1: from the first member
        for (int k = 1; k <= n; k++) {
            RaftPeerId p = members.get(Math.floorMod(at + k, n));
            if (!asked.contains(p)) {
                return p;
            }
        }
        return n == 0 ? null : members.get(Math.floorMod(at + 1, n));
    }

    /**
     * {@code to} (null: the client's leader), unless that peer answered an earlier attempt that it
     * holds no such group ({@code gone}): then the member {@link #besideTarget} picks among those
     * neither asked nor gone. A peer that left the group answers so: one removed by a change it never
     * learnt still lists itself among the members, and its client may take itself for the leader.
     */
    static RaftPeerId notGone(RaftPeerId to, List<RaftPeerId> members, RaftPeerId hint, RaftPeerId clientLeader,
            Collection<RaftPeerId> asked, Set<RaftPeerId> gone) {
        if (gone.isEmpty() || !gone.contains(to != null ? to : clientLeader)) {
            return to;
        }
        List<RaftPeerId> skip = new ArrayList<>(asked);
        skip.addAll(gone);
        RaftPeerId other = besideTarget(members, gone.contains(hint) ? null : hint,
                gone.contains(clientLeader) ? null : clientLeader, skip);
        return other != null ? other : to;
    }

    /**
     * The successful reply of {@code read} sent through {@code client}; started at {@code startNanos},
     * given up {@code timeoutMs} after it. {@code what} ({@code volume V: read lba=N}) names it in the
     * one-line failure; {@code group} are the group's peers; {@code leaderHint} gives the leader the
     * calling peer knows, or null.
     */
    static RaftClientReply linearizable(RaftClient client, Collection<RaftPeer> group,
            Supplier<RaftPeerId> leaderHint, Message read, String what, long startNanos, long timeoutMs, long attemptMs)
            throws ReplicationException {
        List<RaftPeerId> members = group.stream().map(RaftPeer::getId).toList();
        int peers = members.size();
        long deadline = startNanos + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        long attemptNanos = TimeUnit.MILLISECONDS.toNanos(attemptMs);
        List<CompletableFuture<RaftClientReply>> pending = new ArrayList<>(2);
        List<RaftPeerId> asked = new ArrayList<>(2); // where each pending attempt went (null: not known)
        Set<RaftPeerId> gone = new HashSet<>(2); // members that answered they hold no such group
        Throwable last = null;
        long nextAttempt = startNanos;
        long lastSent = startNanos;
        long retryPauseNanos = TimeUnit.MILLISECONDS.toNanos(RETRY_PAUSE_MS); // not in a loop, however fast attempts fail
        try {
            while (true) {
                long now = System.nanoTime();
                if (now - deadline >= 0) {
                    break;
                }
                if (!pending.isEmpty() && newLeader(leaderHint.get(), asked) && now - lastSent >= retryPauseNanos) {
                    nextAttempt = now; // the peer asked died or froze: no need to wait out the attempt time
                }
                if (now - nextAttempt >= 0) {
                    RaftPeerId clientLeader = client.getLeaderId();
                    RaftPeerId to = pending.isEmpty() ? firstTarget(leaderHint.get(), clientLeader)
                            : besideTarget(members, leaderHint.get(), clientLeader, asked);
                    to = notGone(to, members, leaderHint.get(), clientLeader, asked, gone);
                    pending.add(client.async().sendReadOnlyUnordered(read, to));
                    asked.add(to != null ? to : clientLeader);
                    nextAttempt = now + attemptNanos;
                    lastSent = now;
                }
                if (!pending.isEmpty()) {
                    // in slices, to see a leader the calling peer learned of meanwhile (newLeader)
                    long wait = Math.min(Math.min(nextAttempt, deadline) - now, ReadIndexRounds.LEADER_LOOK_NANOS);
                    try {
                        CompletableFuture.anyOf(pending.toArray(new CompletableFuture<?>[0]))
                                .get(Math.max(1, wait), TimeUnit.NANOSECONDS);
                    } catch (ExecutionException | TimeoutException e) {
                        // each attempt is looked at below
                    }
                }
                for (int i = 0; i < pending.size(); i++) {
                    CompletableFuture<RaftClientReply> f = pending.get(i);
                    if (!f.isDone()) {
                        continue;
                    }
                    pending.remove(i);
                    RaftPeerId went = asked.remove(i--);
                    RaftClientReply r = null;
                    try {
                        r = f.join();
                    } catch (CompletionException | CancellationException e) {
                        last = ReplicationException.unwrap(e);
                    }
                    if (r != null && r.isSuccess()) {
                        return r;
                    }
                    if (r != null) {
                        last = r.getException();
                    }
                    if (last instanceof GroupMismatchException && went != null) {
                        gone.add(went);
                    }
                    if (last instanceof StateMachineException) {
                        throw new ReplicationException(what + " failed: " + ReplicationException.oneLine(last));
                    }
                }
                if (pending.isEmpty() && last != null) { // failed at once: again after a pause, not in a loop
                    long pause = Math.min(nextAttempt - System.nanoTime(), TimeUnit.MILLISECONDS.toNanos(RETRY_PAUSE_MS));
                    if (pause > 0) {
                        TimeUnit.NANOSECONDS.sleep(pause);
                    }
                    nextAttempt = System.nanoTime();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ReplicationException(what + " interrupted");
        } finally {
            for (CompletableFuture<RaftClientReply> f : pending) {
                f.cancel(false);
            }
        }
        throw new ReplicationException(what + " not confirmed by a quorum (a linearizable read needs one) within "
                + timeoutMs + " ms (no quorum of " + peers + " peers reachable, or no leader)"
                + (last == null ? "" : "; last answer: " + ReplicationException.oneLine(last)));
    }

    /**
     * Blocks from {@code lba} as replica {@code peer} holds them once it has applied {@code minIndex}. A
     * follower learns the commit index with the leader's next heartbeat, so it may not have applied
     * that far yet: the read is asked again until the operation timeout; so is a try that got no
     * answer. The freshness is checked here, on the applied index the reply carries (read before the
     * blocks), rather than by Ratis: a stale read that Ratis refuses travels back as a gRPC error
     * carrying the serialised exception with its stack, which outgrew gRPC's 8 KiB header limit (a
     * stream error logged with its own stack on the replica, and a failed try here).
     */
    static ReadReply fromReplica(RaftClient replicaReader, RaftPeerId peer, long lba, int n, long minIndex, String volume,
            long timeoutMs) throws IOException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        String what = "read lba=" + lba + " from replica " + peer;
        while (true) {
            // Each try is bounded by the RPC timeout (no retries on this client); the loop by the operation timeout.
            try {
                RaftClientReply r = replicaReader.io().sendStaleRead(
                        ReplicaCommand.plain(ReplicaCommand.Op.READ, lba, n, false), 0, peer);
                if (r.isSuccess()) {
                    ReadReply rr = ReadReply.decode(r.getMessage().getContent());
                    if (rr.appliedIndex >= minIndex) {
                        return rr;
                    }
                    if (System.nanoTime() > end) {
                        throw new ReplicationException(volume + ": " + what + ": the replica applied only up to index "
                                + rr.appliedIndex + " of " + minIndex + " within " + timeoutMs + " ms");
                    }
                } else { // asked with no minimum index, so never refused as stale: a real failure
                    throw new ReplicationException(volume + ": " + what + " failed: " + ReplicationException.oneLine(r.getException()));
                }
            } catch (ReplicationException e) {
                throw e;
            } catch (IOException e) {
                // A try that got no answer (a peer just restarted, still catching up or warming up) is
                // asked again, as one from a replica not yet fresh enough is, until the operation timeout.
                if (System.nanoTime() > end) {
                    throw new ReplicationException(volume + ": " + what + " not answered within " + timeoutMs
                            + " ms: " + ReplicationException.oneLine(e));
                }
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ReplicationException(volume + ": " + what + " interrupted");
            }
        }
    }
}
