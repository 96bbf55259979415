package io.pistore.replication.rpc;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Comparator;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.rpc.CallId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppenderBase;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.raftlog.RaftLogIOException;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.util.Timestamp;

/**
 * A leader's appender to one follower over the peers' RPC: one request at a time on the appender's
 * own thread, as Ratis's default appender, with two differences.
 *
 * <ul>
 *   <li>A follower's answer that it knows a newer term is handed to the leader on another thread
 *       ({@link #onFollowerTerm}). Taken on this thread, it waits for the server's lock; a leader
 *       that lost its majority steps down holding that lock and waits for its appenders to stop,
 *       and the two waited for each other for good (a stale leader, frozen and continued, never
 *       heard from again).</li>
 *   <li>A heartbeat's success moves nothing: only an answer to entries tells how far the follower
 *       matches (a follower may still hold entries of an older leader past the heartbeat's
 *       previous entry).</li>
 * </ul>
 * A request that fails is built again from the follower's next index after the RPC's retry pause.
 */
final class PeerLogAppender extends LogAppenderBase {
    /** Where followers' newer terms are handed to their leaders: threads that may wait for a server's lock. */
    private static final ExecutorService TERMS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "pistore-raft-newer-term");
        t.setDaemon(true);
        return t;
    });

    /** Where a snapshot's files are asked for before shipping: a state machine may make them then (a copy of a volume). */
    private static final ExecutorService FILES = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "pistore-raft-snapshot-files");
        t.setDaemon(true);
        return t;
    });

    private int failures;
    /** The snapshot whose files were asked for, and that asking; null before the first. */
    private org.apache.ratis.server.protocol.TermIndex filesOf;
    private java.util.concurrent.CompletableFuture<?> files;

    PeerLogAppender(RaftServer.Division server, LeaderState leaderState, FollowerInfo follower) {
        super(server, leaderState, follower);
    }

    @Override
    public long getCallId() {
        return CallId.get();
    }

    @Override
    public Comparator<Long> getCallIdComparator() {
        return CallId.getComparator();
    }

    @Override
    public void run() throws InterruptedException, IOException {
        while (isRunning()) {
            if (shouldSendAppendEntries()) {
                SnapshotInfo snapshot = shouldInstallSnapshot();
                if (snapshot != null && filesReady(snapshot)) {
                    sendSnapshot(snapshot);
                } else if (snapshot != null) {
                    appendOnce(true); // the follower hears from its leader while the files are made
                    if (failures == 0) {
                        askFiles(snapshot); // it answers: worth a copy (not for a follower that is down)
                    }
                    awaitFiles(Math.max(1, getHeartbeatWaitTimeMs()));
                } else {
                    appendOnce();
                }
            }
            if (isRunning() && !hasAppendEntries()) {
                getEventAwaitForSignal().await(getHeartbeatWaitTimeMs(), TimeUnit.MILLISECONDS);
            }
            getLeaderState().checkHealth(getFollower());
        }
    }

    /**
     * Wakes this appender only when it has something to send: entries, a heartbeat that is due or
     * asked for (a read's). The leader notifies every appender each time any follower's commit index
     * or its own moves, so at every answered append; an appender woken with nothing to send went
     * back to sleep at once, a thread switch and its wake-up for nothing, about one per entry. A
     * stop interrupts the appender's thread and needs no signal.
     */
    @Override
    public void notifyLogAppender() {
        if (shouldSendAppendEntries()) {
            getEventAwaitForSignal().signal();
        }
    }

    /**
     * Hands a follower's newer {@code term} to the leader on another thread and answers false (not
     * known yet); this appender, stopped by the step-down that follows, ends its loop meanwhile.
     */
    @Override
    public boolean onFollowerTerm(long term) {
        TERMS.execute(() -> {
            synchronized (getServer()) {
                if (isRunning()) {
                    getLeaderState().onFollowerTerm(getFollower(), term);
                }
            }
        });
        return false;
    }

    /**
     * Asks for {@code snapshot}'s files on another thread, once per snapshot: a snapshot copied on
     * demand makes its copy of the volume then, which may take seconds, and this thread goes on
     * beating meanwhile, so the follower does not start an election (nor the leader, hearing from no
     * majority, step down while every follower waits for a copy).
     */
    private void askFiles(SnapshotInfo snapshot) {
        if (!snapshot.getTermIndex().equals(filesOf)) {
            filesOf = snapshot.getTermIndex();
            files = java.util.concurrent.CompletableFuture.runAsync(snapshot::getFiles, FILES);
        }
    }

    /** Waits until the files asked for are there, or {@code ms} (the next heartbeat is due then). */
    private void awaitFiles(long ms) throws InterruptedException {
        if (filesOf == null) {
            TimeUnit.MILLISECONDS.sleep(ms);
            return;
        }
        try {
            files.get(ms, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            // looked at in the next round
        }
    }

    /** Whether {@code snapshot}'s files, asked for, are there to ship; a failed asking is logged, to be asked again. */
    private boolean filesReady(SnapshotInfo snapshot) throws InterruptedException {
        if (!snapshot.getTermIndex().equals(filesOf) || !files.isDone()) {
            return false;
        }
        if (files.isCompletedExceptionally()) {
            filesOf = null;
            try {
                files.join();
            } catch (RuntimeException e) {
                failed("make the snapshot files for", e);
            }
            return false;
        }
        return true;
    }

    /** One append (entries, or a heartbeat when none are due or {@code heartbeat}) and its answer; a failure waits the retry pause. */
    private void appendOnce() throws InterruptedException, InterruptedIOException, RaftLogIOException {
        appendOnce(false);
    }

    private void appendOnce(boolean heartbeatOnly) throws InterruptedException, InterruptedIOException, RaftLogIOException {
        AppendEntriesRequestProto request = newAppendEntriesRequest(CallId.getAndIncrement(), heartbeatOnly);
        if (request == null || !isRunning()) {
            return;
        }
        resetHeartbeatTrigger();
        Timestamp sent = Timestamp.currentTime();
        boolean heartbeat = request.getEntriesCount() == 0;
        getFollower().updateLastRpcSendTime(heartbeat);
        AppendEntriesReplyProto reply;
        try {
            reply = getServerRpc().appendEntries(request);
        } catch (InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            failed("append to", e);
            return;
        }
        failures = 0;
        getFollower().updateLastRpcResponseTime();
        getFollower().updateLastRespondedAppendEntriesSendTime(sent);
        getLeaderState().onFollowerCommitIndex(getFollower(), reply.getFollowerCommit());
        long first = heartbeat ? RaftLog.INVALID_LOG_INDEX : request.getEntries(0).getIndex();
        switch (reply.getResult()) {
            case SUCCESS:
                if (!heartbeat) {
                    long next = reply.getNextIndex();
                    if (next > getFollower().getNextIndex()) {
                        getFollower().updateMatchIndex(next - 1);
                        getFollower().increaseNextIndex(next);
                        getLeaderState().onFollowerSuccessAppendEntries(getFollower());
                    }
                }
                break;
            case NOT_LEADER:
                onFollowerTerm(reply.getTerm());
                pause();
                break;
            case INCONSISTENCY:
                getFollower().setNextIndex(getNextIndexForInconsistency(first, reply.getNextIndex()));
                break;
            default:
                break;
        }
        getLeaderState().onAppendEntriesReply(this, reply);
    }

    /** Every chunk of {@code snapshot}, until one is refused; the follower's snapshot index moves once all went. */
    private void sendSnapshot(SnapshotInfo snapshot) throws InterruptedException, InterruptedIOException {
        InstallSnapshotReplyProto reply = null;
        try {
            for (InstallSnapshotRequestProto chunk : newInstallSnapshotRequests(UUID.randomUUID().toString(), snapshot)) {
                getFollower().updateLastRpcSendTime(false);
                reply = getServerRpc().installSnapshot(chunk);
                getFollower().updateLastRpcResponseTime();
                if (!reply.getServerReply().getSuccess()) {
                    break;
                }
            }
        } catch (InterruptedIOException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            failed("send a snapshot to", e);
            return;
        }
        if (reply == null) {
            return;
        }
        switch (reply.getResult()) {
            case SUCCESS:
                getFollower().setSnapshotIndex(snapshot.getTermIndex().getIndex());
                getFollower().setAttemptedToInstallSnapshot();
                break;
            case NOT_LEADER:
                onFollowerTerm(reply.getTerm());
                pause();
                break;
            case SNAPSHOT_UNAVAILABLE:
            case ALREADY_INSTALLED:
            case SNAPSHOT_EXPIRED:
                getFollower().setAttemptedToInstallSnapshot();
                break;
            default:
                break;
        }
    }

    private void failed(String what, Exception e) throws InterruptedException {
        if (failures++ % 10 == 0) { // one line per ten failures in a row
            LOG.warn("{}: could not {} {} ({} in a row): {}", this, what, getFollowerId(), failures, e.toString());
        }
        getServerRpc().handleException(getFollowerId(), e, false);
        pause();
    }

    private void pause() throws InterruptedException {
        if (isRunning()) {
            getServer().properties().rpcSleepTime().sleep();
        }
    }
}
