package io.pistore.replication.volume;

import io.pistore.replication.rpc.CoarseTimeouts;
import io.pistore.engine.volume.CheckingVolume;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.raft.ApplyOutcome;
import io.pistore.replication.raft.ReadReply;
import io.pistore.replication.raft.ReplicaCommand;
import io.pistore.replication.raft.StoredBlockCheck;
import io.pistore.replication.raft.VolumeShape;
import io.pistore.replication.raft.VolumeStateMachine;
import io.pistore.spi.PiDuty;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.LeaderSteppingDownException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;

/**
 * A volume whose blocks live on every peer of a Raft group, seen as one engine {@link io.pistore.engine.volume.Volume}, so the
 * target service serves it to every transport unchanged. Writes, write-zeroes and flushes go through
 * the group's leader and return once a quorum has committed them, several commands in flight sharing
 * one log entry ({@link CommitBatcher}); reads come from the leader, linearizable (Ratis's read index),
 * and on the peer that leads from its own replica in process ({@link LocalLeader}). Nothing waits without bound: an operation no quorum answered
 * within {@link ReplicationSettings#operationTimeout()} fails with a one-line
 * {@link ReplicationException}; a write that timed out may still be applied later, as on a disk whose
 * command timed out, so the host rewrites it.
 *
 * <p><b>Self-healing reads.</b> Each block read is checked as a replica can check it (guard; Type 1
 * reference tag; zeros under the unwritten tuple). A block that fails is read from the other
 * replicas, at least as fresh as the first read; the first copy that passes is returned to the caller
 * and a repair goes through the log, which rewrites the block on every replica whose copy fails (so
 * a block written again meanwhile is never rolled back; {@link ReplicaRepair}). Each repair is counted and logged with the
 * volume, LBA, replica and error kind. A block bad on every replica is returned as read, and the
 * target service's own check reports the PI error at that LBA: never "repaired" with wrong data.
 */
public final class ReplicatedVolume implements CheckingVolume {
    private final String name;
    private final BlockFormat format;
    /** The block count now: this peer's replica's where it holds one (it grows with the group), else fixed. */
    private final java.util.function.LongSupplier blocks;
    /** The group's members as last known: replaced with its clients when they change ({@link #regroup}). */
    private volatile RaftGroup group;
    private final ReplicationSettings settings;
    private volatile boolean closed;
    private final long timeoutMs;
    /** How long a read waits for one attempt's answer before it sends another beside it. */
    private final long attemptMs;
    private final Consumer<String> log;
    private volatile RaftClient client;
    /**
     * The group's reads and watches: unordered requests to a chosen peer, whose answers move a
     * client's leader without restarting its ordered stream, so that the next write on that stream
     * reached the new leader numbered as a continuation, and waited there for the attempt time for
     * entries it never got (Ratis's sliding window); writes therefore have {@link #client} to themselves.
     */
    private volatile RaftClient readClient;
    /**
     * Reads from one chosen replica (healing, scrub): blocking calls, one try each. Over gRPC, Ratis's
     * asynchronous stale read, which travels the client's ordered request stream, went unanswered by
     * a replica that did not lead until the operation timeout; a blocking call is not ordered.
     */
    private volatile RaftClient replicaReader;
    private final LocalLeader localLeader;
    /** This peer's own replica, read after the leader's read index while it follows; null outside the peers. */
    private final FollowerRead followerRead;
    /** Whether reads while following use {@link #followerRead} (else they go through Ratis's client). */
    private volatile boolean followerReadsOn = FollowerRead.ENABLED;
    /** Sends through whichever client is current ({@link #regroup} replaces it). */
    private final CommitBatcher batcher;
    /** Numbers the writes that came without a host's fence in this peer's own stream. */
    private final OwnWrites own = new OwnWrites();
    /** Added to by leader reads on every transport thread: striped, so they do not contend for one counter. */
    private final java.util.concurrent.atomic.LongAdder localReads = new java.util.concurrent.atomic.LongAdder();
    /** Reads served by this peer's own replica while it followed, after the leader's read index. */
    private final java.util.concurrent.atomic.LongAdder followerReads = new java.util.concurrent.atomic.LongAdder();
    /** Of the reads served by the own replica (leading or following), those of metadata alone. */
    private final java.util.concurrent.atomic.LongAdder metadataReads = new java.util.concurrent.atomic.LongAdder();
    /** Log entries this peer put into its own log while it led (no client, no gRPC). */
    private final java.util.concurrent.atomic.LongAdder localEntries = new java.util.concurrent.atomic.LongAdder();
    /** The heal and scrub paths: blocks that fail their check, read from other replicas and rewritten. */
    private final ReplicaRepair repair;
    private final GroupSharedState shared; // null outside the peers

    public ReplicatedVolume(String name, BlockFormat format, long blocks, RaftGroup group, ReplicationSettings settings,
            Consumer<String> log) {
        this(name, format, blocks, group, settings, log, null);
    }

    /** {@code localLeader}: this peer's own replica, read in process while it leads; null outside the peers. */
    public ReplicatedVolume(String name, BlockFormat format, long blocks, RaftGroup group, ReplicationSettings settings,
            Consumer<String> log, LocalLeader localLeader) {
        this(name, format, () -> blocks, group, settings, log, localLeader);
    }

    /** As above, its size read from {@code blocks} at each use (a peer's own replica's, which grows). */
    public ReplicatedVolume(String name, BlockFormat format, java.util.function.LongSupplier blocks, RaftGroup group,
            ReplicationSettings settings, Consumer<String> log, LocalLeader localLeader) {
        this.localLeader = localLeader;
        this.followerRead = localLeader == null ? null : localLeader.followerRead();
        this.name = name;
        this.format = format;
        this.blocks = blocks;
        this.group = group;
        this.settings = settings;
        this.timeoutMs = settings.operationTimeout().toMillis();
        this.attemptMs = settings.attemptTimeout().toMillis();
        this.log = log;
        this.client = newClient(group, settings);
        this.readClient = newClient(group, settings);
        this.batcher = new CommitBatcher(this::send, settings.entriesInFlight(), ReplicationSettings.BATCH_BYTES,
                ReplicationSettings.BATCH_COMMANDS, ReplicationSettings.BATCH_LINGER_MAX_NANOS, CommitBatcher.timer(),
                System::nanoTime);
        this.replicaReader = newReplicaReader(group, settings);
        this.shared = localLeader == null ? null : new GroupSharedState(name, localLeader::sharedStateBoard, batcher,
                timeoutMs, this::commitFailure, this::isClosed, i -> readClient.async().watch(i,
                org.apache.ratis.proto.RaftProtos.ReplicationLevel.ALL_COMMITTED).orTimeout(attemptMs, TimeUnit.MILLISECONDS));
        this.repair = new ReplicaRepair(name, format, blocks, timeoutMs, attemptMs, log, new ReplicaRepair.Group() {
            @Override
            public RaftGroup members() {
                return group;
            }

            @Override
            public RaftClient readClient() {
                return readClient;
            }

            @Override
            public RaftClient replicaReader() {
                return replicaReader;
            }

            @Override
            public RaftPeerId knownLeader() {
                return ReplicatedVolume.this.knownLeader();
            }

            @Override
            public void commit(Message m, String what) throws IOException {
                ReplicatedVolume.this.commit(m, what);
            }
        });
    }

    /**
     * One log entry to the group: into this peer's own log in process while it leads ({@link
     * LocalLeader#submit}), else, or when it stepped down before answering, through the group's
     * client. An entry this peer appended just before it stepped down may still be committed by the
     * next leader, and the client then puts the same commands in the log again: applying them twice,
     * in log order, before any later entry of this volume (the next entry leaves only once this one
     * is answered) leaves the blocks as once.
     */
    private CompletableFuture<RaftClientReply> send(Message m) {
        CompletableFuture<RaftClientReply> local = localLeader == null ? null : localLeader.submit(m);
        if (local == null) {
            return sendThroughClient(m, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
        }
        localEntries.increment();
        return local.handle((r, t) -> {
            if (t == null && LocalLeader.isFinal(r)) {
                return CompletableFuture.completedFuture(r);
            }
            log.accept("volume " + name + ": an entry this peer put into its own log came back with "
                    + (t != null ? ReplicationException.oneLine(t) : r.getException() != null ? ReplicationException.oneLine(r.getException()) : "no success")
                    + "; sent again through the group's client");
            return sendThroughClient(m, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs));
        }).thenCompose(f -> f);
    }

    /**
     * Through the group's client; sent again after a pause, until {@code deadlineNanos}, while the
     * peer it reached answers that it is stepping down (a leadership transfer): Ratis's client
     * retries a "not leader" answer by itself but fails the request on this one, although the peer
     * refused the entry before its log and the next leader takes it a moment later.
     */
    private CompletableFuture<RaftClientReply> sendThroughClient(Message m, long deadlineNanos) {
        return client.async().send(m).handle((r, t) -> {
            Throwable c = ReplicationException.unwrap(t);
            boolean steppingDown = c instanceof LeaderSteppingDownException
                    || (c == null && r.getException() instanceof LeaderSteppingDownException);
            if (!steppingDown || System.nanoTime() - deadlineNanos >= 0) {
                return t != null ? CompletableFuture.<RaftClientReply>failedFuture(t) : CompletableFuture.completedFuture(r);
            }
            log.accept("volume " + name + ": an entry was refused by a leader stepping down; sent again in "
                    + STEPPING_DOWN_PAUSE_MS + " ms");
            return CompletableFuture.supplyAsync(() -> sendThroughClient(m, deadlineNanos),
                    CompletableFuture.delayedExecutor(STEPPING_DOWN_PAUSE_MS, TimeUnit.MILLISECONDS)).thenCompose(f -> f);
        }).thenCompose(f -> f);
    }

    private RaftPeerId knownLeader() { // the leader this peer knows, or null (outside the peers, or none known)
        return localLeader == null ? null : localLeader.leaderId();
    }

    /** The pause before a request a stepping-down leader refused is sent again (the client's own retry pause). */
    private static final long STEPPING_DOWN_PAUSE_MS = 100;

    private static RaftClient newReplicaReader(RaftGroup group, ReplicationSettings settings) {
        return RaftClient.newBuilder()
                .setRaftGroup(group)
                .setProperties(settings.client())
                .setRetryPolicy(RetryPolicies.noRetry())
                .build();
    }

    /**
     * The group's members changed: later requests go through clients of the new members (a member
     * that left answers no request for the group). The old clients are closed once requests already
     * sent through them are over (after twice the operation timeout).
     */
    public synchronized void regroup(RaftGroup members) {
        if (closed || members.getPeers().isEmpty() || ReplicaPeers.sameMembers(members.getPeers(), group.getPeers())) {
            return;
        }
        RaftClient oldClient = client;
        RaftClient oldReadClient = readClient;
        RaftClient oldReader = replicaReader;
        group = members;
        client = newClient(members, settings);
        readClient = newClient(members, settings);
        replicaReader = newReplicaReader(members, settings);
        CompletableFuture.delayedExecutor(2 * timeoutMs, TimeUnit.MILLISECONDS).execute(() -> {
            try {
                oldClient.close();
                oldReadClient.close();
                oldReader.close();
            } catch (IOException e) {
                log.accept("volume " + name + ": closing the client of its former members: " + e.getMessage());
            }
        });
    }

    /** This peer learned who leads ({@link DetachedReconnectRpc#leaderChanged}: writes sent elsewhere go again at once). */
    public void leaderChanged(RaftPeerId leader) {
        DetachedReconnectRpc.leaderChanged(client, leader);
    }

    public boolean isClosed() {
        return closed;
    }

    /**
     * A client of a group. Retries (to the next peer, after a leader change) stop after about the
     * operation timeout; every caller's wait is bounded by it regardless.
     *
     * <p>One request to one peer is given up after the attempt time ({@link
     * ReplicationSettings#attemptTimeout()}: the election timeout and an RPC's), then sent again,
     * with the same call id, to another peer, which points the client to whoever leads. So a write at a
     * leader that froze (or died without closing its connections) moves to the new leader once one is
     * elected, instead of waiting for the frozen one until the operation timeout (and at once: the
     * connection to the frozen peer is dropped on another thread, {@link DetachedReconnectRpc}); and since the call
     * id is the same, a leader that already has the entry (the old one's, committed by the new) answers
     * it from Ratis's retry cache instead of appending it again. A leader that dies breaks the
     * connection, which fails the request at once; a leader cut off from its majority steps down after
     * the election timeout and answers its pending requests with "not leader". A write waits at the
     * leader for two log {@code fsync}s in sequence behind the one entry of this volume in flight
     * before it ({@link CommitBatcher} keeps one), so under load an attempt can run out while the leader
     * still works: the retry reaches the same entry through the retry cache.
     */
    private static RaftClient newClient(RaftGroup group, ReplicationSettings settings) {
        long sleepMs = 100;
        return DetachedReconnectRpc.newClient(settings.client(settings.attemptTimeout()))
                .setRaftGroup(group)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(
                        (int) Math.max(1, settings.operationTimeout().toMillis() / sleepMs),
                        TimeDuration.valueOf(sleepMs, TimeUnit.MILLISECONDS)))
                .build();
    }

    /**
     * Opens volume {@code name} from outside its peers, knowing only the peers
     * ({@code ID=HOST:PORT,...}): its format and size are asked of the group's leader.
     */
    public static ReplicatedVolume connect(String name, String peers, ReplicationSettings settings, Consumer<String> log)
            throws IOException {
        RaftGroup group = RaftGroup.valueOf(ReplicaPeers.groupId(name), ReplicaPeers.parse(peers));
        VolumeShape shape;
        try (RaftClient c = newClient(group, settings)) {
            long ms = settings.operationTimeout().toMillis();
            RaftClientReply r;
            try {
                r = c.async().sendReadOnly(ReplicaCommand.plain(ReplicaCommand.Op.INFO, 0, 0, false))
                        .get(ms, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new ReplicationException("volume " + name + ": no leader of its group answered within " + ms
                        + " ms (no quorum of " + group.getPeers().size() + " peers reachable, or no such volume)");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ReplicationException("volume " + name + ": interrupted");
            } catch (ExecutionException e) {
                throw new ReplicationException("volume " + name + ": its group did not answer: " + ReplicationException.oneLine(e.getCause()));
            }
            if (!r.isSuccess()) {
                throw new ReplicationException("volume " + name + ": its group did not answer: " + ReplicationException.oneLine(r.getException()));
            }
            shape = VolumeShape.decode(r.getMessage().getContent());
        }
        return new ReplicatedVolume(name, shape.format, shape.blocks, group, settings, log);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public BlockFormat format() {
        return format;
    }

    @Override
    public long blockCount() {
        return blocks.getAsLong();
    }

    /**
     * Grows the volume to {@code newBlocks} on every replica: a command through the log, so writes to
     * the new blocks follow it everywhere; returns once the group's leader applied it (each peer
     * serves the new size once it has). The leader refuses a count below its replica's (this peer's
     * may lag behind it): IllegalArgumentException, as for one below this peer's.
     */
    public void grow(long newBlocks) throws IOException {
        long now = blockCount();
        if (newBlocks < now) {
            throw new IllegalArgumentException(ReplicaCommand.shrinking(name, now, newBlocks));
        }
        try {
            commit(ReplicaCommand.plain(ReplicaCommand.Op.RESIZE, newBlocks, 0, false), "resize to " + newBlocks
                    + " blocks");
        } catch (ReplicationException e) {
            if (String.valueOf(e.getMessage()).contains(ReplicaCommand.SHRINKS)) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            throw e;
        }
    }

    /** Write-zeroes and reads not served in place wait for a quorum, off the transport's I/O thread ({@link #writesAsync}, {@link #flush}). */
    @Override
    public boolean waitsForPeers() {
        return true;
    }

    /**
     * Reads on the peer that leads, while its lease has just been confirmed at once, read the local
     * replica without waiting: the target service runs them where they arrive. A read that then finds
     * the lease lapsed waits for its confirmation there, at most the operation timeout; healing a bad
     * block (rare) waits for other replicas there too.
     */
    @Override
    public boolean readWaitsForPeers() {
        return localLeader == null || !localLeader.readsInPlace();
    }

    /** Optimized on the peer that leads, non-optimized where forwarded, inaccessible without a leader ({@link LocalLeader#pathState}). */
    @Override
    public io.pistore.spi.PathState pathState() {
        return localLeader == null ? io.pistore.spi.PathState.NON_OPTIMIZED : localLeader.pathState();
    }

    @Override
    public io.pistore.spi.PathGroup pathGroup() {
        return localLeader == null ? null : localLeader.pathGroup(group);
    }

    /** {@link #transferLeadership}: the optimized path is the leader's. */
    @Override
    public void optimizePath(String replicaId) throws IOException {
        transferLeadership(replicaId);
    }

    /** The state the volume's ports share, in its log ({@link GroupSharedState}); null outside the peers. */
    @Override
    public io.pistore.spi.SharedVolumeState sharedState() {
        return shared;
    }

    /** COMPARE AND WRITE through the log, atomic against the writes of every peer ({@link LoggedCompareAndWrite}). */
    @Override
    public io.pistore.spi.OrderedCompareAndWrite orderedCompareAndWrite() {
        return new LoggedCompareAndWrite(name, format, timeoutMs, own, this::send);
    }

    /** The group's peers. */
    public RaftGroup group() {
        return group;
    }

    /** Blocks that failed their check on the replica read first and were served from a good replica. */
    public long healedBlocks() {
        return repair.healedBlocks();
    }

    /** Blocks that failed their check on every replica asked. */
    public long unhealableBlocks() {
        return repair.unhealableBlocks();
    }

    @Override
    public void write(long lba, int n, ScatterList data, ScatterList metadata, boolean fua, PiDuty duty) throws IOException {
        try {
            writeAsync(lba, n, data, metadata, fua, duty).join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof IOException) {
                throw (IOException) e.getCause();
            }
            throw e;
        }
    }

    /** Writes complete when their entry is committed and applied: no thread need wait for them. */
    @Override
    public boolean writesAsync() {
        return true;
    }

    /**
     * Checks the write unless {@code duty} shows a hop on this peer did (a leader elsewhere checks it on entry,
     * each follower on apply), copies it into its log command and hands that to the group commit; completes once
     * a quorum committed it (or with the one-line failure {@link #write} throws). Never waits.
     */
    @Override
    public CompletableFuture<Void> writeAsync(long lba, int n, ScatterList data, ScatterList metadata, boolean fua, PiDuty duty) {
        return writeAsync(lba, n, data, metadata, fua, duty, null);
    }

    /**
     * With its host's {@code fence}: carried into the log command, so every replica refuses the write
     * if the host's stream already applied a newer connection's write (completing with a
     * {@link io.pistore.engine.volume.FencedWriteException}): the stale copy that a peer coming back
     * from a pause still holds, or forwards, never lands on the host's later data.
     */
    @Override
    public CompletableFuture<Void> writeAsync(long lba, int n, ScatterList data, ScatterList metadata, boolean fua, PiDuty duty,
            io.pistore.spi.WriteFence fence) {
        PiError e = StoredBlockCheck.firstWriteError(format, lba, data, metadata, n, duty);
        if (e != null) {
            return CompletableFuture.failedFuture(ApplyOutcome.refusedWrite("volume " + name + ": write", lba + e.blockIndex(), e));
        }
        Message m;
        try {
            m = ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, lba, n, data, metadata, fua, own.numbered(fence));
        } catch (RuntimeException x) {
            return CompletableFuture.failedFuture(x);
        }
        String what = "write lba=" + lba;
        return CoarseTimeouts.shared().within(batcher.submit(m, true), timeoutMs).handle((o, t) -> {
            if (t != null) {
                throw new java.util.concurrent.CompletionException(commitFailure(what, t));
            }
            if (!o.isDone()) {
                throw new java.util.concurrent.CompletionException(notDone(what, o));
            }
            return null;
        });
    }

    /** The one-line failure of a command the group commit did not commit. */
    private ReplicationException commitFailure(String what, Throwable t) {
        Throwable c = ReplicationException.unwrap(t);
        if (c instanceof TimeoutException) {
            return new ReplicationException("volume " + name + ": " + what + " not committed by a quorum within " + timeoutMs
                    + " ms (no quorum of " + group.getPeers().size() + " peers reachable, or no leader)");
        }
        return new ReplicationException("volume " + name + ": " + what + " failed: " + ReplicationException.oneLine(c));
    }

    /** The one-line failure of a command applied with outcome {@code o}, not done. */
    private IOException notDone(String what, ApplyOutcome o) {
        return o.failure("volume " + name + ": " + what + " " + o.describe()); // fenced, view changed, or else
    }

    @Override
    public void writeZeroes(long lba, int n, boolean fua) throws IOException {
        writeZeroes(lba, n, fua, null);
    }

    @Override
    public void writeZeroes(long lba, int n, boolean fua, io.pistore.spi.WriteFence fence) throws IOException {
        commit(ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, lba, n, fua, own.numbered(fence)), "write-zeroes lba=" + lba);
    }

    /**
     * Nothing to do: a write, write-zeroes or deallocate completes only once its entry is committed,
     * that is forced in the logs of a quorum, so every one completed before this call is durable
     * already. No entry goes through the log (a flush entry of an older log is still applied).
     */
    @Override
    public void flush() {
    }

    @Override
    public boolean flushReturnsAtOnce() {
        return true;
    }

    /** Puts a command through the log (batched with others in flight) and returns once it is committed and applied. */
    private void commit(Message m, String what) throws IOException {
        CompletableFuture<ApplyOutcome> f = batcher.submit(m);
        ApplyOutcome o;
        try {
            o = f.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw commitFailure(what, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ReplicationException("volume " + name + ": " + what + " interrupted");
        } catch (ExecutionException e) {
            throw commitFailure(what, e.getCause());
        }
        if (!o.isDone()) {
            throw notDone(what, o);
        }
    }

    /** Log entries (each one or more commands) this peer submitted to its own log while it led. */
    public long localEntryCount() {
        return localEntries.sum();
    }

    /** Reads served by this peer's own replica while it led (no Ratis query). */
    public long localReads() {
        return localReads.sum();
    }

    /** Reads of metadata alone (block status) served by this peer's own replica, leading or following; no data read. */
    public long localMetadataReads() {
        return metadataReads.sum();
    }

    /** Read indexes this peer asked of its own division while it led; reads that shared one are not counted. */
    long readIndexCalls() {
        return localLeader == null ? 0 : localLeader.readIndexCalls();
    }

    /**
     * Whether reads while this peer follows read its own replica after the leader's read index (the
     * default, {@code pistore.replication.followerReads}), or go through Ratis's client (tests and
     * probes of that path).
     */
    public void readOwnReplicaWhileFollowing(boolean on) {
        followerReadsOn = on;
    }

    /** Reads served by this peer's own replica while it followed, after the leader's read index (no blocks through Ratis). */
    public long followerReads() {
        return followerReads.sum();
    }

    @Override
    public void read(long lba, int n, ScatterList data, ScatterList metadata) throws IOException {
        read(lba, n, data, metadata, 0);
    }

    /** A read that its transport had received whole by {@code receivedNanos}: it may share an earlier read's confirmation. */
    @Override
    public void read(long lba, int n, ScatterList data, ScatterList metadata, long receivedNanos) throws IOException {
        long start = receivedNanos != 0 ? receivedNanos : System.nanoTime(); // the transport's stamp saves a clock read
        if (readOwnReplica(lba, n, data, metadata, receivedNanos)) {
            return;
        }
        RaftClientReply r = GroupRead.linearizable(readClient, group.getPeers(), this::knownLeader,
                ReplicaCommand.plain(ReplicaCommand.Op.READ, lba, n, false), "volume " + name + ": read lba=" + lba, start,
                timeoutMs, attemptMs);
        ReadReply rr = ReadReply.decode(r.getMessage().getContent());
        // The reply's buffers are read-only: healing, if needed, works on copies.
        repair.checkAndHeal(lba, n, ScatterList.of(rr.data), ScatterList.of(rr.metadata), r.getServerId(), rr.appliedIndex,
                data, metadata);
    }

    /**
     * The blocks' metadata alone, from this peer's own replica once it applied the read index (while
     * it leads, or follows with follower reads on): as linearizable as a read, and nothing checked or
     * healed (the caller reads the data of what it must check). Elsewhere, the blocks read whole
     * through the group, checked and healed like any read.
     */
    @Override
    public void readMetadata(long lba, int n, ScatterList metadata) throws IOException {
        if (!readOwnReplica(lba, n, null, metadata, 0)) {
            CheckingVolume.super.readMetadata(lba, n, metadata);
        }
    }

    /**
     * Reads this peer's own replica if it may ({@link LocalLeader} while it leads, {@link FollowerRead}
     * while it follows): true when the read is done, false when the caller reads through the group.
     * {@code data} null: the metadata alone.
     */
    private boolean readOwnReplica(long lba, int n, ScatterList data, ScatterList metadata, long receivedNanos)
            throws IOException {
        VolumeStateMachine local = null;
        if (localLeader != null) {
            try {
                // An attempt's time, not the operation's: a leader that cannot confirm its read index
                // that soon may have lost its followers, and the group's client finds whoever leads.
                local = localLeader.confirmRead(attemptMs, lba, name, receivedNanos);
            } catch (ReplicationException e) {
                log.accept(e.getMessage() + "; read through the group instead");
            }
        }
        if (local != null && readLocal(local, local.restores(), lba, n, data, metadata)) {
            localReads.increment();
            return true;
        }
        if (local == null && followerRead != null && followerReadsOn) {
            FollowerRead.Confirmed c = followerRead.confirm(attemptMs, shared.nudge()); // both on the peers only
            if (c != null && readLocal(c.stateMachine(), c.restores(), lba, n, data, metadata)) {
                followerReads.increment();
                return true;
            }
        }
        return false;
    }

    /**
     * This peer's own replica, read straight into the caller's buffers once it has applied the read
     * index ({@link LocalLeader} while it leads, {@link FollowerRead} while it follows), then checked
     * and healed like a read through Ratis ({@code data} null: the metadata alone, neither checked nor
     * healed); false, with nothing checked, when the replica was paused for or restored from a
     * snapshot since its count was {@code restores} (the caller reads through the group).
     */
    private boolean readLocal(VolumeStateMachine local, long restores, long lba, int n, ScatterList data,
            ScatterList metadata) throws IOException {
        if (!FollowerRead.running(local) || local.restores() != restores) {
            return false;
        }
        if (data == null) {
            local.applier().volume().readMetadata(lba, n, metadata);
            if (!FollowerRead.running(local) || local.restores() != restores) {
                return false;
            }
            metadataReads.increment();
            return true;
        }
        // The applied index is taken before the blocks are read: the blocks are at least that fresh,
        // so a repair's copies from other replicas are asked at least that fresh too.
        long applied = local.appliedIndex().get();
        ScatterList m = metadata;
        if (m == null && format.metadataSize() > 0) {
            m = ScatterList.wrap(new byte[n * format.metadataSize()]); // the PI is checked even if the host wants none
        }
        local.applier().volume().read(lba, n, data, m);
        if (!FollowerRead.running(local) || local.restores() != restores) {
            return false;
        }
        repair.checkAndHeal(lba, n, data, m, local.getId(), applied, data, metadata);
        return true;
    }

    /**
     * Checks every block on every replica, as a replica can check it, and repairs what it can: a
     * block failing on some replicas gets a repair entry carrying a good replica's copy, which every
     * replica whose copy fails applies; a block failing on every replica is reported. Each chunk is
     * read from every replica at least as fresh as a linearizable read of it. {@code progress} hears
     * the blocks done after each chunk.
     */
    public ReplicaScrubReport scrub(java.util.function.LongConsumer progress) throws IOException {
        return repair.scrub(progress);
    }

    /**
     * Asks the group to make {@code peer} its leader, waiting at most the operation timeout: for
     * maintenance (the old leader's machine is to be stopped) and for tests.
     */
    public void transferLeadership(String peer) throws IOException {
        LeaderTransfer.to(name, group, peer, settings);
    }

    @Override
    public synchronized void close() throws IOException {
        closed = true;
        try (RaftClient a = client; RaftClient b = readClient; RaftClient c = replicaReader) {
            // closed in reverse order, each even if another fails
        }
    }

    @Override
    public String toString() {
        return "replicated volume " + name + " on " + group.getPeers().size() + " peers";
    }
}
