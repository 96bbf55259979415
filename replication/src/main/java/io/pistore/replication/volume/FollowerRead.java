package io.pistore.replication.volume;

import io.pistore.replication.raft.VolumeStateMachine;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.ratis.proto.RaftProtos.ReadIndexReplyProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.LifeCycle;

/**
 * This peer while it follows the volume's group, used in process: a linearizable read of its own
 * replica after the leader's read index (Raft's follower read), instead of the read through Ratis's
 * client, whose reply carries the blocks from the leader through gRPC and protobuf.
 *
 * <p>How: the peer asks the leader it knows for its read index over the Raft servers' own channel
 * (the server protocol's {@code readIndex}, as Ratis's follower does for a linearizable query: a
 * small request and reply, no blocks; one at a time, concurrent reads sharing the next), waits until
 * its own replica has applied that index, and reads its blocks. Why it is linearizable: the leader answers only while it leads and has committed an
 * entry of its term, with its commit index at that moment, confirmed by its lease or a round of
 * heartbeats a majority answers ({@link LocalLeader}); the request reaches it after the read started,
 * so every write acknowledged before the read is committed at or below that index. This replica
 * applies only committed entries, in log order, the same entries as every other (Raft's log
 * matching), so once it has applied the index its blocks hold every such write (and maybe later
 * ones, which a read overlapping them may see). A replica being restored from a snapshot is not
 * read (its state machine is not running before and after the read). Anything else, a refusal, no
 * answer within the attempt time, no leader known, another leader known before the answer came
 * (the one asked died or froze), falls back to the read through the group. Concurrent reads share
 * requests ({@link ReadIndexRounds}).
 */
final class FollowerRead {
    /** Whether follower reads are on: {@code -Dpistore.replication.followerReads=false} reads through Ratis's client. */
    static final boolean ENABLED = !"false".equals(System.getProperty("pistore.replication.followerReads"));

    private final RaftServer server;
    private final RaftGroupId groupId;
    private final ClientId clientId = ClientId.randomId();
    private volatile Prebuilt prebuilt;
    /** This peer's read-index requests, shared by concurrent reads (of one division at a time). */
    private volatile Rounds rounds;

    FollowerRead(RaftServer server, RaftGroupId groupId) {
        this.server = server;
        this.groupId = groupId;
    }

    /** The rounds of division {@code d}: a restarted group's division gets new ones. */
    private ReadIndexRounds<ReadIndexReplyProto, RaftPeerId> rounds(RaftServer.Division d) {
        Rounds r = rounds;
        if (r == null || r.division != d) {
            synchronized (this) {
                r = rounds;
                if (r == null || r.division != d) {
                    r = new Rounds(d, new ReadIndexRounds<>(leader -> send(d, leader), () -> d.getInfo().getLeaderId()));
                    rounds = r;
                }
            }
        }
        return r.rounds;
    }

    private record Rounds(RaftServer.Division division, ReadIndexRounds<ReadIndexReplyProto, RaftPeerId> rounds) {
    }

    /**
     * This peer's state machine once it has applied the read index of the leader it knows, with its
     * restore count from before the request (a read of it is good while the count stays), if it
     * follows; null if it does not (no division, leading, no leader known), or the leader refused or
     * did not answer within {@code timeoutMs} or before this peer knew another leader, or the replica
     * did not apply the index by then: the caller reads through the group.
     */
    Confirmed confirm(long timeoutMs, CommitNudge nudge) {
        RaftServer.Division d;
        try {
            d = server.getDivision(groupId);
        } catch (IOException e) {
            return null;
        }
        if (d == null || d.getInfo().isLeader() || !d.getInfo().isAlive()) {
            return null;
        }
        RaftPeerId leader = d.getInfo().getLeaderId();
        if (leader == null || leader.equals(server.getId())) {
            return null;
        }
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        VolumeStateMachine sm = (VolumeStateMachine) d.getStateMachine();
        long restores = sm.restores();
        try {
            ReadIndexRounds<ReadIndexReplyProto, RaftPeerId> rs = rounds(d);
            ReadIndexReplyProto r = rs.awaitWhileLeading(rs.ask(leader), leader, end);
            if (r == null || !r.getServerReply().getSuccess()) {
                return null;
            }
            long left = Math.max(0, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()));
            boolean applied = sm.appliedIndex().await(r.getReadIndex(), Math.min(left, CommitNudge.GRACE_MILLIS));
            if (!applied) { // an idle group: this peer learns the commit index at the next append, so send one
                nudge.run();
                applied = sm.appliedIndex().await(r.getReadIndex(),
                        Math.max(0, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())));
            }
            return applied && running(sm) && sm.restores() == restores ? new Confirmed(sm, restores) : null;
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** One read-index request to {@code leader}. */
    private CompletableFuture<ReadIndexReplyProto> send(RaftServer.Division d, RaftPeerId leader) {
        try {
            return server.getServerRpc().async().readIndexAsync(request(d, leader));
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Whether {@code sm} serves reads: not paused for, restoring from, nor settling after a snapshot. */
    static boolean running(VolumeStateMachine sm) {
        return sm.getLifeCycleState() == LifeCycle.State.RUNNING && !sm.appliedIndex().settling();
    }

    /** The read-index request of this peer to {@code leader}: the same for every read, built once per division and leader. */
    private ReadIndexRequestProto request(RaftServer.Division d, RaftPeerId leader) {
        Prebuilt b = prebuilt;
        if (b == null || b.division != d || !b.leader.equals(leader)) {
            RaftClientRequest request = RaftClientRequest.newBuilder()
                    .setClientId(clientId)
                    .setServerId(leader)
                    .setGroupId(groupId)
                    .setCallId(1)
                    .setMessage(Message.EMPTY)
                    .setType(RaftClientRequest.readRequestType())
                    .build();
            b = new Prebuilt(d, leader, RatisInternals.readIndexRequest(d, leader, request));
            prebuilt = b;
        }
        return b.proto;
    }

    /** A follower's state machine that applied the read index, and its restore count from before the request. */
    record Confirmed(VolumeStateMachine stateMachine, long restores) {
    }

    private record Prebuilt(RaftServer.Division division, RaftPeerId leader, ReadIndexRequestProto proto) {
    }
}
