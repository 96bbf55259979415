package io.pistore.replication.group;

import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.raft.PeerAddressMemory;
import io.pistore.replication.raft.ReplicaCommand;
import io.pistore.replication.raft.VolumeShape;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;

/**
 * The members of a replicated volume's Raft group, as its leader holds them, and changes to them
 * online. A change is one Ratis {@code setConfiguration}: the leader first brings every new peer up
 * to date from its log (the log is retained, so a new replica starting empty replays all of it), then
 * commits the joint configuration (old and new members both form quorums) and then the new one, so
 * the group never depends on a majority of peers that lack the committed writes. One change at a
 * time: Ratis refuses a second while one is in progress. Every wait is bounded; each refusal and
 * failure is one line naming the volume.
 */
public final class GroupMembership {
    /** What a change did: the members after it, and what became of the peers it removed. */
    public static final class Change {
        public final List<RaftPeer> before;
        public final List<RaftPeer> after;
        /**
         * One line per removed peer: it left the group, or why it could not be told to; and one if the
         * change answered an error yet took effect.
         */
        public final List<String> notes;

        Change(List<RaftPeer> before, List<RaftPeer> after, List<String> notes) {
            this.before = before;
            this.after = after;
            this.notes = notes;
        }
    }

    private final String volume;
    private final RaftGroupId gid;
    private final List<RaftPeer> named;
    /**
     * Peers whose last question went unanswered (down, or cut off): asked after the others, so that
     * each of this change's questions does not first wait out an RPC on a peer it is replacing.
     */
    private final Set<RaftPeerId> unanswered = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final ReplicationSettings settings;

    private GroupMembership(String volume, List<RaftPeer> named, ReplicationSettings settings) {
        this.volume = volume;
        this.gid = ReplicaPeers.groupId(volume);
        this.named = List.copyOf(named);
        this.settings = settings;
    }

    /** The group of volume {@code volume}, reached through {@code peers} (some of its members, at least one running). */
    public static GroupMembership of(String volume, List<RaftPeer> peers, ReplicationSettings settings) {
        if (peers.isEmpty()) {
            throw new IllegalArgumentException("volume " + volume + ": no peers named");
        }
        return new GroupMembership(volume, peers, settings);
    }

    /** As {@link #of(String, List, ReplicationSettings)}, the peers written {@code ID=HOST:PORT,...}. */
    public static GroupMembership of(String volume, String peers, ReplicationSettings settings) {
        return of(volume, ReplicaPeers.parse(peers), settings);
    }

    /** The leader and its configuration's peers. */
    private record Leader(RaftPeer peer, List<RaftPeer> members) {
    }

    /**
     * The group's members as its leader holds them. The named peers are asked, then any member their
     * answers name; while none leads (an election) they are asked again, until the operation timeout.
     */
    public List<RaftPeer> members() throws ReplicationException {
        return leader().members;
    }

    private Leader leader() throws ReplicationException {
        long ms = settings.operationTimeout().toMillis();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        Map<RaftPeerId, String> why = new LinkedHashMap<>();
        while (true) {
            Leader l = askAll(why);
            if (l != null) {
                return l;
            }
            if (System.nanoTime() > end) {
                throw new ReplicationException("volume " + volume + ": no leader answered within " + ms
                        + " ms (no quorum reachable, or an election): " + why.entrySet().stream()
                                .map(e -> e.getKey() + " " + e.getValue()).collect(Collectors.joining("; ")));
            }
            sleep(100);
        }
    }

    /** How recently a follower must have heard from the leader it names for its word to count. */
    private static final long VOUCHED_WITHIN_MS = 5_000;

    private Leader askAll(Map<RaftPeerId, String> why) {
        Map<RaftPeerId, RaftPeer> toAsk = new LinkedHashMap<>();
        named.forEach(p -> toAsk.put(p.getId(), p));
        Set<RaftPeerId> asked = new java.util.HashSet<>();
        Leader vouched = null;
        while (true) {
            RaftPeer p = toAsk.values().stream().filter(x -> !asked.contains(x.getId()))
                    .min(java.util.Comparator.comparing(x -> unanswered.contains(x.getId()))).orElse(null);
            if (p == null) {
                // The leader itself did not answer in time (busy with writes on a loaded machine), but a
                // follower heard from it just now: a change sent to it is redirected by Ratis if it no
                // longer leads, so the follower's word is enough to address it.
                return vouched != null && why.getOrDefault(vouched.peer.getId(), "").startsWith("unreachable")
                        ? vouched : null;
            }
            asked.add(p.getId());
            // A client per peer: the peers to ask grow with the members the answers name.
            try (RaftClient c = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(gid, List.of(p)))
                    .setProperties(settings.client()).setRetryPolicy(RetryPolicies.noRetry()).build()) {
                GroupInfoReply r = c.getGroupManagementApi(p.getId()).info(gid);
                unanswered.remove(p.getId());
                if (!r.isSuccess()) {
                    why.put(p.getId(), ReplicationException.oneLine(r.getException()));
                    continue;
                }
                List<RaftPeer> members = new ArrayList<>(r.getGroup().getPeers());
                if (r.getRoleInfoProto().getRole() == RaftPeerRole.LEADER) {
                    return new Leader(p, members);
                }
                why.put(p.getId(), r.getRoleInfoProto().getRole().name().toLowerCase(java.util.Locale.ROOT));
                members.forEach(m -> toAsk.putIfAbsent(m.getId(), m)); // members the caller did not name
                if (vouched == null && r.getRoleInfoProto().hasFollowerInfo()) {
                    var heard = r.getRoleInfoProto().getFollowerInfo().getLeaderInfo();
                    RaftPeerId leaderId = RaftPeerId.valueOf(heard.getId().getId());
                    RaftPeer leader = members.stream().filter(m -> m.getId().equals(leaderId)).findFirst().orElse(null);
                    if (leader != null && heard.getLastRpcElapsedTimeMs() < VOUCHED_WITHIN_MS) {
                        vouched = new Leader(leader, members);
                    }
                }
            } catch (IOException | RuntimeException e) {
                unanswered.add(p.getId());
                why.put(p.getId(), "unreachable: " + ReplicationException.oneLine(e));
            }
        }
    }

    /**
     * The volume's format and size as the leader's replica answers: what a new replica is made with.
     */
    public VolumeShape shape() throws ReplicationException {
        return VolumeShape.decode(askLeader(ReplicaCommand.Op.INFO, "tell its format"));
    }

    /**
     * The address each peer name first had in the group, as the leader's replica recorded it
     * ({@link PeerAddressMemory}): a name that comes back at another address is not reached by the
     * members, so a join under it is refused.
     */
    public Map<String, String> firstAddresses() throws ReplicationException {
        return PeerAddressMemory.decode(askLeader(ReplicaCommand.Op.PEERS, "tell its peers' addresses"));
    }

    /**
     * The leader replica's answer to a query without data; {@code what} names it in errors. A leader
     * can change between finding it and asking it (an election after a member came back), and the
     * group's client may then end at a member that does not answer for the group; so a failed answer
     * is asked again of the leader found anew, until the operation timeout, and only the last failure
     * is reported.
     */
    private org.apache.ratis.thirdparty.com.google.protobuf.ByteString askLeader(ReplicaCommand.Op op, String what)
            throws ReplicationException {
        long end = System.nanoTime() + settings.operationTimeout().toNanos();
        while (true) {
            try {
                return askLeaderOnce(op, what);
            } catch (ReplicationException e) {
                if (Thread.currentThread().isInterrupted() || System.nanoTime() > end) {
                    throw e;
                }
                sleep(100);
            }
        }
    }

    private org.apache.ratis.thirdparty.com.google.protobuf.ByteString askLeaderOnce(ReplicaCommand.Op op, String what)
            throws ReplicationException {
        Leader l = leader();
        long ms = settings.operationTimeout().toMillis();
        try (RaftClient c = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(gid, l.members))
                .setLeaderId(l.peer.getId()).setProperties(settings.client()).build()) {
            RaftClientReply r = c.async().sendReadOnly(ReplicaCommand.plain(op, 0, 0, false))
                    .get(ms, TimeUnit.MILLISECONDS);
            if (!r.isSuccess()) {
                throw new ReplicationException("volume " + volume + ": the leader did not " + what + ": "
                        + ReplicationException.oneLine(r.getException()));
            }
            return r.getMessage().getContent();
        } catch (ReplicationException e) {
            throw e;
        } catch (TimeoutException e) {
            throw new ReplicationException("volume " + volume + ": the leader did not " + what + " within " + ms + " ms");
        } catch (ExecutionException e) {
            throw new ReplicationException("volume " + volume + ": the leader did not " + what + ": "
                    + ReplicationException.oneLine(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ReplicationException("volume " + volume + ": interrupted");
        } catch (IOException e) {
            throw new ReplicationException("volume " + volume + ": " + ReplicationException.oneLine(e));
        }
    }

    /**
     * Makes the members the current ones less {@code remove} (ids) plus {@code add}, in one change,
     * and tells each removed peer that answers to leave the group (it deletes its replica). Refused,
     * before anything changes: an id to remove that is no member, a peer to add that is one already
     * or does not answer (it must be running and hold the volume's group, empty), and a change that
     * would leave no member.
     */
    public Change change(List<RaftPeer> add, Collection<String> remove) throws ReplicationException {
        return change(add, remove, () -> 0, 0);
    }

    /**
     * {@link #change(List, Collection)} for new peers whose catching up shows in {@code progress} (any
     * value that changes while they receive the log or a snapshot) and may take up to {@code mostMs}
     * (what copying their volume may take at the slowest rate worth waiting for): the change then waits
     * as long as that moves, giving up after the membership timeout without a change, or after
     * {@code mostMs} in all (a group that goes on writing moves it without the change ever ending).
     */
    public Change change(List<RaftPeer> add, Collection<String> remove, java.util.function.LongSupplier progress,
            long mostMs) throws ReplicationException {
        Leader l = leader();
        List<RaftPeer> before = l.members;
        Set<String> ids = before.stream().map(p -> p.getId().toString()).collect(Collectors.toSet());
        String list = describeIds(before);
        // A peer removed while it was down still holds the group: named again, it is only told to leave.
        List<RaftPeer> strays = new ArrayList<>();
        for (String r : remove) {
            if (ids.contains(r)) {
                continue;
            }
            RaftPeer stray = named.stream().filter(p -> p.getId().toString().equals(r)).findFirst().orElse(null);
            if (stray == null) {
                throw new IllegalArgumentException("peer " + r + " is not a member of volume " + volume + " (members "
                        + list + ")");
            }
            strays.add(stray);
        }
        for (RaftPeer a : add) {
            if (ids.contains(a.getId().toString()) && !remove.contains(a.getId().toString())) {
                throw new IllegalArgumentException("peer " + a.getId() + " is a member of volume " + volume + " already");
            }
        }
        List<RaftPeer> after = new ArrayList<>();
        before.stream().filter(p -> !remove.contains(p.getId().toString())).forEach(after::add);
        after.addAll(add);
        if (after.isEmpty()) {
            throw new IllegalArgumentException("refused: removing " + String.join(",", remove) + " would leave volume "
                    + volume + " with no replica (its last member is never removed)");
        }
        for (RaftPeer a : add) {
            checkAnswers(a);
        }
        List<String> notes = new ArrayList<>();
        if (!ReplicaPeers.sameMembers(after, before)) {
            String took = setConfiguration(l, after, progress, mostMs);
            if (took != null) {
                notes.add(took);
            }
            if (!remove.isEmpty()) {
                awaitApplied(after);
            }
        }
        for (RaftPeer p : before) {
            if (remove.contains(p.getId().toString())) {
                notes.add(dismiss(p));
            }
        }
        for (RaftPeer p : strays) {
            notes.add(dismiss(p));
        }
        return new Change(before, after, notes);
    }

    /** A peer to add must answer for the group (it joined it, empty) before the leader is asked to add it. */
    private void checkAnswers(RaftPeer p) throws ReplicationException {
        try (RaftClient c = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(gid, List.of(p)))
                .setProperties(settings.client()).setRetryPolicy(RetryPolicies.noRetry()).build()) {
            GroupInfoReply r = c.getGroupManagementApi(p.getId()).info(gid);
            if (!r.isSuccess()) {
                throw new ReplicationException("peer " + p.getId() + " at " + p.getAddress() + " holds no group of volume "
                        + volume + ": " + ReplicationException.oneLine(r.getException()));
            }
        } catch (ReplicationException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new ReplicationException("peer " + p.getId() + " at " + p.getAddress() + " is unreachable: "
                    + ReplicationException.oneLine(e));
        }
    }

    /**
     * Tests only: runs before a change is sent, with null, and with its answer before that is read (a
     * test throws to fail the request before anything changed, or to lose the answer).
     */
    static volatile java.util.function.Consumer<RaftClientReply> onChangeAnswer = r -> { };

    /**
     * The change itself, through the leader. Ratis answers once the new configuration is committed;
     * the wait is bounded by the membership timeout whatever the client does (a retry of the same
     * call is answered from the leader's retry cache, so it is safe). An error or no answer does not
     * mean that nothing changed: a leader that dies once the joint configuration is committed leaves
     * the change to its successor (which refuses the client's retry as a change in progress), and an
     * answer may come too late. So the change is asked again of whoever leads then, while that one
     * answers it is still in progress, has moved or is not ready (at most the operation timeout): Ratis answers a change to the
     * members it has at once. If that succeeds, the line returned says so; else the first error stands.
     * (A group information answer cannot tell: Ratis 3.2.0 does not send its configuration to clients.)
     */
    private String setConfiguration(Leader l, List<RaftPeer> after, java.util.function.LongSupplier progress,
            long mostMs) throws ReplicationException {
        String what = "volume " + volume + ": members " + describeIds(l.members) + " -> " + describeIds(after);
        ReplicationException failed = tryChange(l, after, progress, mostMs, what);
        if (failed == null) {
            return null;
        }
        // Asked again of whoever leads now: the same members on a settled configuration answer at once
        // (the change took effect), a change still in progress (finished by a new leader) is waited for,
        // a configuration without the change gets it again.
        long end = System.nanoTime() + settings.operationTimeout().toNanos();
        while (true) {
            ReplicationException again;
            try {
                again = tryChange(leader(), after, progress, mostMs, what);
            } catch (ReplicationException e) {
                throw failed; // no leader to ask: the first answer stands
            }
            if (again == null) {
                return what + " took effect when asked again; the first request answered: "
                        + failed.getMessage().substring(what.length() + 1);
            }
            if (!stillSettling(again.getMessage()) || System.nanoTime() - end > 0) {
                throw failed;
            }
            sleep(200);
        }
    }

    /**
     * Whether a change's answer leaves its outcome open: a change still in progress, or a leader that
     * moved or is not ready yet (just elected, its first entry not committed). Asked again, each
     * answers what the group holds once it settles.
     */
    private static boolean stillSettling(String answer) {
        return answer.contains("ReconfigurationInProgress") || answer.contains("is not the leader")
                || answer.contains("not ready yet");
    }

    /** One change request through leader {@code l}: null once it is committed, else why not. */
    private ReplicationException tryChange(Leader l, List<RaftPeer> after, java.util.function.LongSupplier progress,
            long mostMs, String what) throws ReplicationException {
        long ms = settings.membershipTimeout().toMillis();
        // The request itself may take as long as the new peers keep catching up: the wait below bounds it.
        RaftClient c = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(gid, l.members))
                .setLeaderId(l.peer.getId()).setProperties(settings.client(UNBOUNDED_CHANGE))
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep(5,
                        org.apache.ratis.util.TimeDuration.valueOf(500, TimeUnit.MILLISECONDS)))
                .build();
        CompletableFuture<RaftClientReply> f = CompletableFuture.supplyAsync(() -> {
            try {
                onChangeAnswer.accept(null);
                RaftClientReply r = c.admin().setConfiguration(after);
                onChangeAnswer.accept(r);
                return r;
            } catch (IOException e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
        try {
            long most = Math.max(ms, mostMs);
            RaftClientReply r = awaitWhileProgressing(f, ms, progress, most);
            if (r == null) {
                return new ReplicationException(what + " not committed, with no progress for " + ms + " ms or "
                        + most + " ms in all (a new peer that cannot catch up, or no quorum); see 'pistore replicas status'");
            }
            return r.isSuccess() ? null
                    : new ReplicationException(what + " failed: " + ReplicationException.oneLine(r.getException()));
        } catch (ExecutionException e) {
            return new ReplicationException(what + " failed: " + ReplicationException.oneLine(e.getCause()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ReplicationException(what + " interrupted");
        } finally {
            try {
                c.close();
            } catch (IOException e) {
                // the answer is in already
            }
        }
    }

    /** How long a change's request may take by itself: the wait for it is bounded by progress instead. */
    private static final java.time.Duration UNBOUNDED_CHANGE = java.time.Duration.ofDays(1);
    /** How often a change that is still running looks at the new peers' progress. */
    private static final long PROGRESS_LOOK_MS = 500;

    /**
     * The answer of {@code f}, or null once {@code progress} stayed the same for {@code ms} (it is
     * looked at every {@link #PROGRESS_LOOK_MS}) or {@code mostMs} passed: a change may take as long as
     * the new peers catch up.
     */
    static <T> T awaitWhileProgressing(CompletableFuture<T> f, long ms, java.util.function.LongSupplier progress,
            long mostMs) throws ExecutionException, InterruptedException {
        long seen = progress.getAsLong();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(mostMs);
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        while (true) {
            if (until - end > 0) {
                until = end;
            }
            long left = TimeUnit.NANOSECONDS.toMillis(until - System.nanoTime());
            try {
                return f.get(Math.max(1, Math.min(left, PROGRESS_LOOK_MS)), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                if (System.nanoTime() - end >= 0) {
                    return null;
                }
                long now = progress.getAsLong();
                if (now != seen) {
                    seen = now;
                    until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
                } else if (System.nanoTime() - until >= 0) {
                    return null;
                }
            }
        }
    }

    /**
     * Waits (at most the operation timeout) until every member has applied what the leader has
     * committed, the new configuration included: a member's volumes switch to clients of the new
     * members when it applies it, so none still sends to a removed peer once that one leaves.
     */
    private void awaitApplied(List<RaftPeer> members) throws ReplicationException {
        long target;
        try {
            target = info(leader().peer).getLogInfoProto().getCommitted().getIndex();
        } catch (IOException | RuntimeException e) {
            return; // the removal is committed (a removed leader steps down); the wait only narrows a window
        }
        long end = System.nanoTime() + settings.operationTimeout().toNanos();
        for (RaftPeer p : members) {
            while (System.nanoTime() < end) {
                try {
                    if (info(p).getLogInfoProto().getApplied().getIndex() >= target) {
                        break;
                    }
                } catch (IOException | RuntimeException e) {
                    break; // a member that does not answer has no volumes to switch now
                }
                sleep(20);
            }
        }
    }

    private GroupInfoReply info(RaftPeer p) throws IOException {
        try (RaftClient c = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(gid, List.of(p)))
                .setProperties(settings.client()).setRetryPolicy(RetryPolicies.noRetry()).build()) {
            GroupInfoReply r = c.getGroupManagementApi(p.getId()).info(gid);
            if (!r.isSuccess()) {
                throw new IOException(ReplicationException.oneLine(r.getException()));
            }
            return r;
        }
    }

    /** Tells a removed peer to leave the group; it deletes its replica. One line: done, or why not. */
    private String dismiss(RaftPeer p) {
        String left = "peer " + p.getId() + " left the group of volume " + volume + " and deleted its replica";
        // First one RPC's time to answer at all: a hung host, or a dead one behind a router, would
        // otherwise hold the change for the whole wait below. One that is alive after all learns of
        // its removal at its next election and leaves by itself.
        try {
            info(p);
        } catch (IOException | RuntimeException e) {
            return GroupDeletion.groupGone(gid, e) ? left : unreachable(p, e); // gone: it left by itself first
        }
        // Leaving closes the peer's group and deletes its files before it answers: more than one RPC's time.
        try (RaftClient c = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(gid, List.of(p)))
                .setProperties(settings.client(settings.membershipTimeout())).setRetryPolicy(RetryPolicies.noRetry()).build()) {
            RaftClientReply r = c.getGroupManagementApi(p.getId()).remove(gid, true, false);
            if (r.isSuccess() || GroupDeletion.groupGone(gid, r.getException())) {
                return left;
            }
            return "peer " + p.getId() + " is no member any more but did not leave the group: "
                    + ReplicationException.oneLine(r.getException());
        } catch (IOException | RuntimeException e) {
            return GroupDeletion.groupGone(gid, e) ? left : unreachable(p, e);
        }
    }

    private static String unreachable(RaftPeer p, Throwable e) {
        return "peer " + p.getId() + " is no member any more but was not reachable to leave the group: "
                + ReplicationException.oneLine(e) + " (its replica stays until it is back: it then leaves by itself)";
    }

    public static String describeIds(List<RaftPeer> peers) {
        return peers.stream().map(p -> p.getId().toString()).collect(Collectors.joining(","));
    }

    private static void sleep(long ms) throws ReplicationException {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ReplicationException("interrupted");
        }
    }
}
