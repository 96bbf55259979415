package io.pistore.replication.node;

import io.pistore.replication.ReplicationException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;

/**
 * Restarts, on this peer, a group whose storage failed: its Raft log, or the replica's files under a
 * committed entry. After its first I/O error (a file system full) Ratis's log worker fails every
 * later task and never recovers, while the group stays up: it takes no more entries, and a snapshot
 * installed into it meanwhile leaves a log that no longer loads (an open segment below the snapshot,
 * then entries after it). A replica that missed an entry differs from the others, and must not serve
 * until it applied it. So the group is removed from this peer's server at once, its storage kept (to
 * the others it is a peer down), and added back after a pause, which loads the log from its files
 * and applies it again from the last record; while it keeps failing, each pause is twice the one
 * before, up to a minute. One line per failure says why and when; a start that fails asks for a
 * restart of the serve.
 */
final class StorageFailureRestarts implements AutoCloseable {
    private static final long FIRST_PAUSE_MS = 1000;
    private static final long LONGEST_PAUSE_MS = 60_000;
    /** A log that worked this long since its last failure starts again from the first pause. */
    private static final long FORGIVEN_AFTER_MS = 600_000;

    private final RaftServer server;
    private final RaftPeerId id;
    private final Consumer<String> log;
    /** Groups left only to be added again: their removal is not this peer leaving (shared with {@link ReplicaNode}). */
    private final Set<RaftGroupId> rejoining;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "pistore-log-restart");
        t.setDaemon(true);
        return t;
    });
    /** Per group: the pause before its next start, and when it was last taken (guarded by this). */
    private final Map<RaftGroupId, long[]> pauses = new ConcurrentHashMap<>();
    /** Groups with a restart scheduled: the failures of the tasks queued behind the first one are the same failure. */
    private final Set<RaftGroupId> scheduled = ConcurrentHashMap.newKeySet();

    StorageFailureRestarts(RaftServer server, RaftPeerId id, Consumer<String> log, Set<RaftGroupId> rejoining) {
        this.server = server;
        this.id = id;
        this.log = log;
        this.rejoining = rejoining;
    }

    /**
     * The log of group {@code gid} (volume {@code name}) failed with {@code cause}, or the replica's
     * storage failed to apply an entry ({@code what} says which): restarts the group after a pause,
     * with the members it knows then ({@code fallback} where it knows none). Called on Ratis's log
     * worker or the applier, so nothing here waits.
     */
    void failed(RaftGroupId gid, String name, String what, Throwable cause, List<RaftPeer> fallback) {
        failed(gid, name, what, cause, fallback, true);
    }

    /**
     * As above; without {@code startAgain} the group only stops: the replica's volume failed to force
     * its files, which it never heals (the kernel may have dropped what it could not write), so only a
     * new process, which replays the volume's journal and the log, brings it back.
     */
    void failed(RaftGroupId gid, String name, String what, Throwable cause, List<RaftPeer> fallback,
                boolean startAgain) {
        if (!scheduled.add(gid)) {
            return;
        }
        long pause = startAgain ? nextPause(gid) : -1;
        log.accept(line(name, id, what, cause, pause));
        try {
            timer.execute(() -> restart(gid, name, fallback, pause));
        } catch (RejectedExecutionException closing) {
            scheduled.remove(gid);
        }
    }

    /** The one line a failure is told in; {@code pause}: ms until the group starts again, -1 for never by itself. */
    static String line(String name, RaftPeerId id, String what, Throwable cause, long pause) {
        return "volume " + name + ": replica " + id + " could not " + what + " (" + ReplicationException.oneLine(cause)
                + (pause >= 0 ? "); its group stops here and starts again from its files in " + pause / 1000.0
                        + " s (make room on the file system of its data directory)"
                        : cause instanceof io.pistore.replication.raft.UnreadableEntryException
                        ? "); its group stops here: run the build of the group's other peers here (every peer of a group"
                        + " runs one build), then restart this serve"
                        : "); its group stops here: make room on the file system of its data directory, then restart"
                        + " this serve");
    }

    /** The pause before the next start of group {@code gid}: twice the last, up to a minute; the first after a quiet spell. */
    private synchronized long nextPause(RaftGroupId gid) {
        long now = System.currentTimeMillis();
        long[] p = pauses.computeIfAbsent(gid, g -> new long[] {FIRST_PAUSE_MS, now});
        if (now - p[1] > FORGIVEN_AFTER_MS) {
            p[0] = FIRST_PAUSE_MS;
        }
        long pause = p[0];
        p[0] = Math.min(LONGEST_PAUSE_MS, 2 * p[0]);
        p[1] = now;
        return pause;
    }

    /** Removes the group now (keeping its storage) and adds it back after {@code pause} ms (never when negative). */
    private void restart(RaftGroupId gid, String name, List<RaftPeer> fallback, long pause) {
        RaftGroup group;
        try {
            group = server.getDivision(gid).getGroup();
        } catch (java.io.IOException e) {
            scheduled.remove(gid);
            return; // the group is gone meanwhile (removed, deleted): nothing to restart
        }
        RaftGroup members = group.getPeers().isEmpty() ? RaftGroup.valueOf(gid, fallback) : group;
        rejoining.add(gid);
        try {
            check(server.groupManagement(GroupManagementRequest.newRemove(ClientId.randomId(), id, 0, gid, false,
                    false)));
        } catch (java.io.IOException | RuntimeException e) {
            rejoining.remove(gid);
            scheduled.remove(gid);
            log.accept("volume " + name + ": replica " + id + " could not stop its group: " + ReplicationException.oneLine(e)
                    + "; a restart of this serve starts it again");
            return;
        }
        if (pause < 0) {
            return; // stopped for good in this process: still "rejoining", so its removal deletes nothing
        }
        try {
            timer.schedule(() -> add(members, name), pause, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException closing) {
            rejoining.remove(gid);
            scheduled.remove(gid);
        }
    }

    /**
     * Adds the group back. A start that fails is not tried again: Ratis 3.2.0 can fail one whose
     * follower state races with its leader's first append ({@code previous != null}), and then keeps
     * the group's storage locked in this process, so only a new process starts it.
     */
    private void add(RaftGroup group, String name) {
        RaftGroupId gid = group.getGroupId();
        try {
            check(server.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), id, 0, group, false)));
            log.accept("volume " + name + ": replica " + id + " started its group again from its files");
        } catch (java.io.IOException | RuntimeException e) {
            log.accept("volume " + name + ": replica " + id + " could not start its group again ("
                    + ReplicationException.oneLine(e) + "); restart this serve to start it (with room on its file system)");
        } finally {
            rejoining.remove(gid);
            scheduled.remove(gid);
        }
    }

    private static void check(RaftClientReply r) throws java.io.IOException {
        if (!r.isSuccess()) {
            throw r.getException() != null ? r.getException() : new java.io.IOException("refused");
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
