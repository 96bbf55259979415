package io.pistore.replication.volume;

import io.pistore.replication.ReplicationException;
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
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;

/**
 * This peer while it leads the volume's group, used in process: linearizable reads of its own
 * replica (no Ratis query, no transport, no copy through protobuf). When this peer does not lead,
 * reads go through the group's client, which finds the leader.
 *
 * <p>Why it is linearizable: {@link #confirm} asks this peer's Raft server for its read index, which
 * Ratis gives only to a leader that has committed an entry of its current term, as the leader's commit
 * index at the time of the call, confirmed either by the leader lease (a majority acknowledged this
 * leader within the lease, shorter than the election timeout, so no other leader can have been
 * elected since) or, when the lease has lapsed, by a round of heartbeats a majority answers. Every
 * write acknowledged before the read started was committed at or below that index (Raft's leader
 * completeness). The read then waits until this replica has applied the read index, and reads its
 * blocks: they hold every such write (and maybe later ones, which a read overlapping them may see).
 * A peer that does not lead, or a read index that is refused, falls back to the read through Ratis,
 * which finds the leader.
 */
public final class LocalLeader {
    private final RaftServer server;
    private final RaftGroupId groupId;
    private final ClientId clientId = ClientId.randomId();
    /** The writer of entries submitted here, with its own call ids (the server's retry cache keys on both). */
    private final ClientId writerId = ClientId.randomId();
    private final java.util.concurrent.atomic.AtomicLong callIds = new java.util.concurrent.atomic.AtomicLong();
    /**
     * Call ids answered since the last submission: the next one names them, so the server's retry
     * cache lets their replies go at once instead of keeping each until it expires (as Ratis's own
     * client does).
     */
    private final java.util.concurrent.ConcurrentLinkedQueue<Long> replied = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private volatile Prebuilt prebuilt;
    /**
     * This peer's division of the group, kept between reads: the server's lookup (a map and a future)
     * cost every read twice (the target service's {@link #readsInPlace} hint, then {@link #confirm}).
     * Looked up again once it is closed (the peer left the group; a rejoin makes a new division).
     */
    private volatile RaftServer.Division division;
    /**
     * Until when reads count as served without waiting: set by a confirmation that Ratis answered at
     * once (the lease held) with the read index already applied, for a short while after it.
     */
    private volatile long inPlaceUntilNanos;
    /** How long one immediate confirmation vouches for the next reads: far below the lease. */
    private static final long IN_PLACE_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /**
     * The newest read index this peer confirmed while it led, with when the call that confirmed it
     * started: a read received before that start may use it instead of asking Ratis again
     * ({@link #confirmRead(long, long, String, long)}). Threads may overwrite a newer one with an
     * older one; each stays valid for the reads received before its own start.
     */
    private volatile Confirmed lastConfirmed;
    /** Read indexes asked of the division ({@link #readIndexCalls}). */
    private final java.util.concurrent.atomic.LongAdder readIndexCalls = new java.util.concurrent.atomic.LongAdder();

    public LocalLeader(RaftServer server, RaftGroupId groupId) {
        this.server = server;
        this.groupId = groupId;
    }

    /**
     * Whether a read now is expected to be served without waiting: this peer leads, and a read very
     * recently was confirmed at once by the lease and found its read index applied. A hint only: a
     * read that then has to wait (the lease lapsed meanwhile) still waits, at most the operation timeout.
     */
    boolean readsInPlace() {
        if (System.nanoTime() - inPlaceUntilNanos > 0) {
            return false;
        }
        RaftServer.Division d = division();
        return d != null && d.getInfo().isLeader();
    }

    /**
     * This peer's path state for the volume: optimized while its division leads and is ready (it
     * committed an entry of its term), non-optimized while it follows a known leader or is no member
     * (it forwards through the group's client), inaccessible while no leader is known.
     */
    io.pistore.spi.PathState pathState() {
        RaftServer.Division d = division();
        if (d == null) {
            return io.pistore.spi.PathState.NON_OPTIMIZED;
        }
        org.apache.ratis.server.DivisionInfo info = d.getInfo();
        if (info.isLeader()) {
            return info.isLeaderReady() ? io.pistore.spi.PathState.OPTIMIZED : io.pistore.spi.PathState.INACCESSIBLE;
        }
        return info.getLeaderId() != null ? io.pistore.spi.PathState.NON_OPTIMIZED : io.pistore.spi.PathState.INACCESSIBLE;
    }

    /**
     * The group's members with their states as this peer sees them ({@link io.pistore.spi.PathGroup}):
     * the members of its division's configuration (or {@code known}, once it has none), the leader it
     * knows optimized, the others non-optimized, all inaccessible while it knows none; its own state
     * is {@link #pathState}.
     */
    io.pistore.spi.PathGroup pathGroup(org.apache.ratis.protocol.RaftGroup known) {
        RaftServer.Division d = division();
        org.apache.ratis.protocol.RaftPeerId leader = d == null ? null : d.getInfo().getLeaderId();
        java.util.Map<String, io.pistore.spi.PathState> states = new java.util.TreeMap<>();
        for (org.apache.ratis.protocol.RaftPeer p : (d == null ? known : d.getGroup()).getPeers()) {
            states.put(p.getId().toString(), leader == null ? io.pistore.spi.PathState.INACCESSIBLE
                    : p.getId().equals(leader) ? io.pistore.spi.PathState.OPTIMIZED : io.pistore.spi.PathState.NON_OPTIMIZED);
        }
        states.put(server.getId().toString(), pathState());
        return new io.pistore.spi.PathGroup(server.getId().toString(), states);
    }

    /** Read indexes asked of this peer's division; a read that shared another's confirmation asked none. */
    long readIndexCalls() {
        return readIndexCalls.sum();
    }

    /** This peer's reads while it follows the group ({@link FollowerRead}). */
    FollowerRead followerRead() {
        return new FollowerRead(server, groupId);
    }

    /** The peer this peer knows as its group's leader, or null (none known, or not a member). */
    org.apache.ratis.protocol.RaftPeerId leaderId() {
        RaftServer.Division d = division();
        return d == null ? null : d.getInfo().getLeaderId();
    }

    /**
     * Where this peer shows the volume's shared state as its replica applied it: the same board
     * across restarts of the group here. Throws when this peer holds no division of the group.
     */
    io.pistore.replication.raft.SharedStateBoard sharedStateBoard() {
        RaftServer.Division d = division();
        if (d == null) {
            throw new IllegalStateException("peer " + server.getId() + " holds no replica of group " + groupId + " now");
        }
        return ((VolumeStateMachine) d.getStateMachine()).applier().sharedStateBoard();
    }

    /** This peer's division of the group, or null if it has none (not, or no longer, a member). */
    private RaftServer.Division division() {
        RaftServer.Division d = division;
        if (d == null || !d.getInfo().isAlive()) {
            try {
                d = server.getDivision(groupId);
            } catch (IOException e) {
                return null;
            }
            division = d;
        }
        return d;
    }

    /**
     * This peer's state machine, once it has applied everything committed when the call started, if
     * this peer leads and confirms its read index; null if it does not (the caller reads through Ratis).
     * Throws when the leader could not confirm within {@code timeoutMs} (no quorum answers).
     */
    public VolumeStateMachine confirm(long timeoutMs, String what, String volume) throws IOException {
        return confirm(timeoutMs, what, -1, volume);
    }

    /**
     * {@link #confirm(long, String, String)} for a read at {@code lba}: its name for the error
     * messages ({@code read lba=N}) is made only when one is thrown, not on every read.
     */
    VolumeStateMachine confirmRead(long timeoutMs, long lba, String volume) throws IOException {
        return confirm(timeoutMs, null, lba, volume);
    }

    /**
     * {@link #confirmRead(long, long, String)} of a read received whole by {@code receivedNanos}
     * ({@link io.pistore.spi.BlockRequest#receivedNanos}; 0: unknown). A read index that this peer
     * confirmed in a call started after that time serves the read without asking Ratis: the call
     * started after the host sent the read, so every write acknowledged before then is committed at or
     * below that index, as for a confirmation of its own. Reads that arrived in one socket read share
     * the first one's. Whether this peer still leads does not matter: the read waits
     * until this replica applied that index, and a replica applies committed entries only.
     */
    VolumeStateMachine confirmRead(long timeoutMs, long lba, String volume, long receivedNanos) throws IOException {
        Confirmed c = lastConfirmed;
        if (receivedNanos == 0 || c == null || receivedNanos - c.startedNanos >= 0 || !c.division.getInfo().isAlive()) {
            return confirm(timeoutMs, null, lba, volume);
        }
        VolumeStateMachine sm = (VolumeStateMachine) c.division.getStateMachine();
        try {
            if (!sm.appliedIndex().await(c.readIndex, timeoutMs)) {
                throw new ReplicationException("volume " + volume + ": " + what(null, lba) + " waited " + timeoutMs
                        + " ms for this replica to apply up to index " + c.readIndex);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ReplicationException("volume " + volume + ": " + what(null, lba) + " interrupted");
        }
        return sm;
    }

    private static String what(String what, long lba) {
        return what != null ? what : "read lba=" + lba;
    }

    private VolumeStateMachine confirm(long timeoutMs, String what, long lba, String volume) throws IOException {
        RaftServer.Division d = division();
        if (d == null || !d.getInfo().isLeader()) { // not (or no longer) a member here, or not leading
            return null;
        }
        long started = System.nanoTime();
        long end = started + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        ReadIndexRequestProto p = request(d);
        CompletableFuture<ReadIndexReplyProto> f;
        readIndexCalls.increment();
        try {
            f = RatisInternals.readIndex(server, d, p);
        } catch (IOException e) {
            return null; // the division is not running (starting, closing): Ratis's own read path sorts it out
        }
        try {
            boolean atOnce = f.isDone();
            ReadIndexReplyProto r = f.get(timeoutMs, TimeUnit.MILLISECONDS);
            if (!r.getServerReply().getSuccess()) {
                inPlaceUntilNanos = System.nanoTime() - 1;
                return null; // stepped down, or not ready: Ratis's own read path sorts it out
            }
            VolumeStateMachine sm = (VolumeStateMachine) d.getStateMachine();
            Confirmed last = lastConfirmed;
            if (last == null || last.division != d || started - last.startedNanos > 0) {
                lastConfirmed = new Confirmed(d, started, r.getReadIndex());
            }
            long now = System.nanoTime();
            inPlaceUntilNanos = atOnce && sm.appliedIndex().get() >= r.getReadIndex() ? now + IN_PLACE_NANOS : now - 1;
            long left = Math.max(0, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime()));
            if (!sm.appliedIndex().await(r.getReadIndex(), left)) {
                throw new ReplicationException("volume " + volume + ": " + what(what, lba) + " waited " + timeoutMs
                        + " ms for this replica to apply up to index " + r.getReadIndex());
            }
            return sm;
        } catch (TimeoutException e) {
            throw new ReplicationException("volume " + volume + ": " + what(what, lba)
                    + " not confirmed by a quorum (a linearizable read needs one) within " + timeoutMs + " ms (no quorum of "
                    + d.getGroup().getPeers().size() + " peers reachable)");
        } catch (ExecutionException e) {
            inPlaceUntilNanos = System.nanoTime() - 1;
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ReplicationException("volume " + volume + ": " + what(what, lba) + " interrupted");
        }
    }

    /**
     * Puts {@code command} (one log entry's content) into the log of this peer's own division while it
     * leads, on the calling thread, and completes with the division's reply once the entry is
     * committed and applied here; null when this peer does not lead or its division is not running
     * (the caller sends through the group's client, which finds the leader). The division does on
     * this thread what its gRPC service would have handed to the server's client executor (the
     * leader's check on entry, the append to its log): the entry skips the client's request stream,
     * a round trip through gRPC over loopback with the entry's bytes serialised both ways, and the
     * thread hand-offs of each side. A reply other than success or a refusal by the state machine
     * (this peer stepped down meanwhile) is for the caller to retry through the client.
     */
    CompletableFuture<RaftClientReply> submit(Message command) {
        RaftServer.Division d = division();
        if (d == null || !RatisInternals.submitsInProcess(d) || !d.getInfo().isLeader()) {
            return null;
        }
        java.util.List<Long> answered = new java.util.ArrayList<>();
        for (Long id; (id = replied.poll()) != null; ) {
            answered.add(id);
        }
        long callId = callIds.incrementAndGet();
        RaftClientRequest request = RaftClientRequest.newBuilder()
                .setClientId(writerId)
                .setServerId(server.getId())
                .setGroupId(groupId)
                .setCallId(callId)
                .setRepliedCallIds(answered)
                .setMessage(command)
                .setType(RaftClientRequest.writeRequestType())
                .build();
        CompletableFuture<RaftClientReply> f;
        try {
            f = RatisInternals.submit(d, request);
        } catch (IOException | RuntimeException e) {
            replied.addAll(answered);
            return null; // not running (starting, closing): the client sorts it out
        }
        return f.whenComplete((r, t) -> replied.add(callId));
    }

    /** Whether {@code r}, a reply of {@link #submit}, is final: the entry was applied, or the state machine refused it. */
    static boolean isFinal(RaftClientReply r) {
        return r.isSuccess() || r.getStateMachineException() != null;
    }

    /**
     * The read-index request of this peer for its group: the same for every read (it carries no
     * command, and Ratis answers it with the commit index whatever its call id), so built once per
     * division (a division is replaced when the peer leaves and rejoins the group).
     */
    private ReadIndexRequestProto request(RaftServer.Division d) {
        Prebuilt b = prebuilt;
        if (b == null || b.division != d) {
            RaftClientRequest request = RaftClientRequest.newBuilder()
                    .setClientId(clientId)
                    .setServerId(server.getId())
                    .setGroupId(groupId)
                    .setCallId(1)
                    .setMessage(Message.EMPTY)
                    .setType(RaftClientRequest.readRequestType())
                    .build();
            b = new Prebuilt(d, RatisInternals.readIndexRequest(d, server.getId(), request));
            prebuilt = b;
        }
        return b.proto;
    }

    /** A read index confirmed by this peer's division {@code division} in a call that started at {@code startedNanos}. */
    private static final class Confirmed {
        final RaftServer.Division division;
        final long startedNanos;
        final long readIndex;

        Confirmed(RaftServer.Division division, long startedNanos, long readIndex) {
            this.division = division;
            this.startedNanos = startedNanos;
            this.readIndex = readIndex;
        }
    }

    private static final class Prebuilt {
        final RaftServer.Division division;
        final ReadIndexRequestProto proto;

        Prebuilt(RaftServer.Division division, ReadIndexRequestProto proto) {
            this.division = division;
            this.proto = proto;
        }
    }
}
