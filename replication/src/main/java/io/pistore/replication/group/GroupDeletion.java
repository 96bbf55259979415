package io.pistore.replication.group;

import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ReplicationSettings;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.GroupMismatchException;
import org.apache.ratis.retry.RetryPolicies;

/**
 * Deleting a replicated volume: its Raft group is removed, with its log and snapshots, on every
 * member, and each member deletes its replica with it ({@code ReplicaNode} hears the removal). Only
 * with a leader and every member of its configuration answering, so nothing is half deleted behind
 * the caller's back; {@code force} lets a minority of members be unreachable, and says which keep
 * their copy. A peer left with a copy of a group whose other members no longer hold it (it was
 * unreachable when the volume was deleted) deletes its own copy: a majority of its configuration has
 * no group, so no quorum of it can ever commit again, and nothing a live group holds is lost.
 */
public final class GroupDeletion {
    /** What a peer answered about the group. */
    private enum State { LEADER, MEMBER, GONE, UNREACHABLE }

    private record Answer(RaftPeer peer, State state, List<RaftPeer> members, String why) {
        boolean holds() {
            return state == State.LEADER || state == State.MEMBER;
        }
    }

    private final String volume;
    private final RaftGroupId gid;
    private final RaftPeerId self;
    private final List<RaftPeer> known;
    private final ReplicationSettings settings;

    public GroupDeletion(String volume, RaftPeerId self, List<RaftPeer> known, ReplicationSettings settings) {
        this.volume = volume;
        this.gid = ReplicaPeers.groupId(volume);
        this.self = self;
        this.known = List.copyOf(known);
        this.settings = settings;
    }

    /**
     * Deletes the group on every member that answers; the lines say what became of each. Refused
     * (ReplicationException, nothing deleted): no leader within the operation timeout, or, without
     * {@code force}, a member that does not answer.
     */
    public List<String> delete(boolean force) throws ReplicationException {
        long ms = settings.operationTimeout().toMillis();
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms);
        Map<RaftPeerId, Answer> answers;
        while (true) {
            answers = askAll();
            Answer leader = answers.values().stream().filter(a -> a.state == State.LEADER).findFirst().orElse(null);
            if (leader != null) {
                return deleteMembers(leader, answers, force);
            }
            if (leftover(answers)) {
                return deleteLeftover(answers);
            }
            if (System.nanoTime() > end) {
                break;
            }
            sleep(100);
        }
        throw new ReplicationException("volume " + volume + ": nothing deleted: no leader answered within " + ms
                + " ms (no quorum reachable, or an election): " + describe(answers.values()));
    }

    /** With a leader: every member of its configuration, followers first, the leader last. */
    private List<String> deleteMembers(Answer leader, Map<RaftPeerId, Answer> answers, boolean force)
            throws ReplicationException {
        List<RaftPeer> members = leader.members;
        List<Answer> holding = new ArrayList<>();
        List<Answer> missing = new ArrayList<>();
        for (RaftPeer m : members) {
            Answer a = answers.get(m.getId());
            if (a != null && a.holds()) {
                holding.add(a);
            } else {
                missing.add(a != null ? a : new Answer(m, State.UNREACHABLE, List.of(), "not asked"));
            }
        }
        if (holding.size() <= members.size() / 2) {
            throw new ReplicationException("volume " + volume + ": nothing deleted: only " + holding.size() + " of "
                    + members.size() + " members answered (no quorum): " + describe(answers.values()));
        }
        List<Answer> unreachable = missing.stream().filter(a -> a.state != State.GONE).toList();
        if (!unreachable.isEmpty() && !force) {
            throw new ReplicationException("volume " + volume + ": nothing deleted: " + describe(unreachable)
                    + "; --force deletes it on the " + holding.size() + " members that answer, and "
                    + ids(unreachable) + (unreachable.size() == 1 ? " keeps its copy until 'pistore volume delete "
                    + volume + "' runs on it" : " keep their copies until 'pistore volume delete " + volume
                    + "' runs on them"));
        }
        holding.sort((x, y) -> Boolean.compare(x.state == State.LEADER, y.state == State.LEADER));
        List<String> lines = new ArrayList<>();
        List<String> left = new ArrayList<>();
        for (Answer a : holding) {
            String failed = remove(a.peer);
            if (failed == null) {
                lines.add("peer " + a.peer.getId() + " deleted its replica of " + volume);
            } else {
                left.add(a.peer.getId().toString());
                lines.add("peer " + a.peer.getId() + " could not delete its replica of " + volume + ": " + failed);
            }
        }
        for (Answer a : unreachable) {
            left.add(a.peer.getId().toString());
            lines.add("peer " + a.peer.getId() + " was not reachable (" + a.why + "): it keeps its replica and its "
                    + "copy of the group until 'pistore volume delete " + volume + "' runs on it");
        }
        lines.add(left.isEmpty() ? "deleted " + volume + " on " + members.size() + " member(s)"
                : "deleted " + volume + " on " + (members.size() - left.size()) + " of " + members.size()
                        + " member(s); left on " + String.join(",", left));
        return lines;
    }

    /**
     * Whether this peer holds a copy of a group that a majority of its configuration no longer holds
     * (they answered that they have no such group) and no other peer holds.
     */
    private boolean leftover(Map<RaftPeerId, Answer> answers) {
        long gone = answers.values().stream().filter(a -> a.state == State.GONE && !a.peer.getId().equals(self)).count();
        boolean othersHold = answers.values().stream().anyMatch(a -> a.holds() && !a.peer.getId().equals(self));
        return !othersHold && gone > known.size() / 2;
    }

    private List<String> deleteLeftover(Map<RaftPeerId, Answer> answers) throws ReplicationException {
        List<Answer> gone = answers.values().stream().filter(a -> a.state == State.GONE).toList();
        RaftPeer me = known.stream().filter(p -> p.getId().equals(self)).findFirst().orElse(null);
        if (me != null && answers.get(self) != null && answers.get(self).holds()) {
            String failed = remove(me);
            if (failed != null) {
                throw new ReplicationException("volume " + volume + ": peer " + self + " could not delete its leftover "
                        + "replica: " + failed);
            }
        }
        return List.of("volume " + volume + ": its group is gone from " + ids(gone) + "; peer " + self
                + " deleted its leftover replica", "deleted " + volume + " on " + self);
    }

    /** Asks every known peer, then every member their answers name, once each. */
    private Map<RaftPeerId, Answer> askAll() {
        Map<RaftPeerId, RaftPeer> toAsk = new LinkedHashMap<>();
        known.forEach(p -> toAsk.put(p.getId(), p));
        Map<RaftPeerId, Answer> answers = new LinkedHashMap<>();
        while (true) {
            RaftPeer p = toAsk.values().stream().filter(x -> !answers.containsKey(x.getId())).findFirst().orElse(null);
            if (p == null) {
                return answers;
            }
            Answer a = ask(p);
            answers.put(p.getId(), a);
            a.members.forEach(m -> toAsk.putIfAbsent(m.getId(), m));
        }
    }

    private Answer ask(RaftPeer p) {
        try (RaftClient c = client(p, settings.client())) {
            GroupInfoReply r = c.getGroupManagementApi(p.getId()).info(gid);
            if (!r.isSuccess()) {
                return failed(p, r.getException());
            }
            State s = r.getRoleInfoProto().getRole() == RaftPeerRole.LEADER ? State.LEADER : State.MEMBER;
            return new Answer(p, s, List.copyOf(r.getGroup().getPeers()), "");
        } catch (IOException | RuntimeException e) {
            return failed(p, e);
        }
    }

    private Answer failed(RaftPeer p, Throwable e) {
        if (groupGone(gid, e)) {
            return new Answer(p, State.GONE, List.of(), "holds no such group");
        }
        return new Answer(p, State.UNREACHABLE, List.of(), "unreachable: " + ReplicationException.oneLine(e));
    }

    /** Whether a peer's failure to answer for group {@code gid} says that it holds no such group. */
    public static boolean groupGone(RaftGroupId gid, Throwable e) {
        // Over gRPC the peer's GroupMismatchException arrives as a status whose text names the group.
        String notFound = gid + " not found";
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof GroupMismatchException || String.valueOf(c.getMessage()).contains(notFound)) {
                return true;
            }
        }
        return false;
    }

    /** Removes the group on peer {@code p} with its directory; null when done, else why not. */
    private String remove(RaftPeer p) {
        // Closing the group and deleting its files take more than one RPC's time.
        try (RaftClient c = client(p, settings.client(settings.membershipTimeout()))) {
            RaftClientReply r = c.getGroupManagementApi(p.getId()).remove(gid, true, false);
            return r.isSuccess() ? null : ReplicationException.oneLine(r.getException());
        } catch (IOException | RuntimeException e) {
            return failed(p, e).state == State.GONE ? null : ReplicationException.oneLine(e);
        }
    }

    private RaftClient client(RaftPeer p, org.apache.ratis.conf.RaftProperties props) {
        return RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(gid, List.of(p))).setProperties(props)
                .setRetryPolicy(RetryPolicies.noRetry()).build();
    }

    private static String describe(java.util.Collection<Answer> answers) {
        return answers.stream().map(a -> a.peer.getId() + " " + switch (a.state) {
            case LEADER -> "leader";
            case MEMBER -> "member";
            default -> a.why;
        }).collect(Collectors.joining("; "));
    }

    private static String ids(List<Answer> answers) {
        return answers.stream().map(a -> a.peer.getId().toString()).collect(Collectors.joining(","));
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
