package io.pistore.replication.group;

import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ReplicationSettings;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.proto.RaftProtos.LogInfoProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.retry.RetryPolicies;

/**
 * What each peer of a replicated volume's group says of itself: its role, the last index of its log,
 * what it knows committed, what it applied and the index of its newest snapshot; the leader and each follower's lag behind it. Asked of
 * every peer once, without retries, so a peer that is down shows as unreachable after the RPC timeout
 * instead of holding the view up.
 */
public final class GroupStatus {
    /** One peer as it answered, or why it did not. */
    public static final class Member {
        public final String id;
        public final String address;
        /** LEADER, FOLLOWER, CANDIDATE, LISTENER; null when it did not answer. */
        public final String role;
        public final long lastIndex;
        public final long committedIndex;
        public final long appliedIndex;
        /** The index of its newest complete snapshot; -1 when it has none (or did not answer). */
        public final long snapshotIndex;
        /** Why it did not answer, or null. */
        public final String error;
        /** False when the leader's configuration leaves it out (removed, or never added); true without a leader. */
        public final boolean member;
        /** The members of the group as this peer holds them; empty when it did not answer. */
        final List<RaftPeer> group;

        Member(String id, String address, String role, long lastIndex, long committedIndex, long appliedIndex,
                long snapshotIndex, String error, boolean member, List<RaftPeer> group) {
            this.id = id;
            this.address = address;
            this.role = role;
            this.lastIndex = lastIndex;
            this.committedIndex = committedIndex;
            this.appliedIndex = appliedIndex;
            this.snapshotIndex = snapshotIndex;
            this.error = error;
            this.member = member;
            this.group = group;
        }

        Member notMember() {
            return new Member(id, address, role, lastIndex, committedIndex, appliedIndex, snapshotIndex, error, false,
                    group);
        }

        public boolean reachable() {
            return error == null;
        }
    }

    public final String volume;
    public final List<Member> members;

    private GroupStatus(String volume, List<Member> members) {
        this.volume = volume;
        this.members = Collections.unmodifiableList(members);
    }

    /**
     * Asks every peer of volume {@code name} ({@code ID=HOST:PORT,...}) for its state, then the members
     * an answer names that were not named (a peer added since); a peer the leader's configuration
     * leaves out is marked no member.
     */
    public static GroupStatus of(String name, String peers, ReplicationSettings settings) {
        List<RaftPeer> list = ReplicaPeers.parse(peers);
        RaftGroupId gid = ReplicaPeers.groupId(name);
        List<Member> members = new ArrayList<>();
        java.util.Map<String, RaftPeer> toAsk = new java.util.LinkedHashMap<>();
        list.forEach(p -> toAsk.put(p.getId().toString(), p));
        // Then each member an answer names that was not named (added since): the leader among them too.
        for (int i = 0; i < toAsk.size(); i++) {
            Member m = ask(gid, new ArrayList<>(toAsk.values()).get(i), settings);
            members.add(m);
            m.group.forEach(p -> toAsk.putIfAbsent(p.getId().toString(), p));
        }
        Member leader = members.stream().filter(m -> "LEADER".equals(m.role)).findFirst().orElse(null);
        if (leader != null) {
            java.util.Set<String> inConf = new java.util.HashSet<>();
            leader.group.forEach(p -> inConf.add(p.getId().toString()));
            members.replaceAll(m -> inConf.contains(m.id) ? m : m.notMember());
        }
        return new GroupStatus(name, members);
    }

    /** One peer, asked once through a client of its own, without retries. */
    private static Member ask(RaftGroupId gid, RaftPeer p, ReplicationSettings settings) {
        try (RaftClient c = RaftClient.newBuilder()
                .setRaftGroup(RaftGroup.valueOf(gid, List.of(p)))
                .setProperties(settings.client())
                .setRetryPolicy(RetryPolicies.noRetry())
                .build()) {
            GroupInfoReply r = c.getGroupManagementApi(p.getId()).info(gid);
            if (!r.isSuccess()) {
                return unreachable(p, why(r.getException()));
            }
            LogInfoProto l = r.getLogInfoProto();
            RaftPeerRole role = r.getRoleInfoProto().getRole();
            return new Member(p.getId().toString(), p.getAddress(), role.name(), l.getLastEntry().getIndex(),
                    l.getCommitted().getIndex(), l.getApplied().getIndex(),
                    l.hasLastSnapshot() ? l.getLastSnapshot().getIndex() : -1, null, true,
                    List.copyOf(r.getGroup().getPeers()));
        } catch (IOException | RuntimeException e) {
            return unreachable(p, why(e));
        }
    }

    /**
     * Why a peer did not answer; one that runs without the group says so, as it points elsewhere than a
     * peer down (its group stopped after its storage failed, see its log, or it never joined).
     */
    private static String why(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause() == c ? null : c.getCause()) {
            // over gRPC it may come as its message only: Ratis's serialized exception outgrows the 8 KiB of headers
            if (c instanceof org.apache.ratis.protocol.exceptions.GroupMismatchException
                    || String.valueOf(c.getMessage()).matches("(?s).*group-[0-9A-Fa-f]+ not found.*")) {
                return "it runs without the group (stopped there after its storage failed, see its log, or never "
                        + "joined): " + ReplicationException.oneLine(c);
            }
        }
        return ReplicationException.oneLine(e);
    }

    private static Member unreachable(RaftPeer p, String why) {
        return new Member(p.getId().toString(), p.getAddress(), null, -1, -1, -1, -1, why, true, List.of());
    }

    /** The peer that says it leads, or null (none reachable does: an election, or no quorum). */
    public Member leader() {
        return members.stream().filter(m -> "LEADER".equals(m.role)).findFirst().orElse(null);
    }

    /**
     * The members of the group as its leader holds them ({@code ID=HOST:PORT,...}, by id), or
     * null when no leader answered: what a view of every replica should ask rather than the list it
     * was given, which may miss a member added since or name one removed.
     */
    public String currentMembers() {
        Member l = leader();
        if (l == null) {
            return null;
        }
        return String.join(",", l.group.stream().map(p -> p.getId() + "=" + p.getAddress()).sorted().toList());
    }

    /**
     * How many log entries {@code m} is behind the leader's log (0 when it is up to date), or -1 when
     * the leader or {@code m} did not answer.
     */
    public long lag(Member m) {
        Member l = leader();
        if (l == null || !m.reachable()) {
            return -1;
        }
        return Math.max(0, l.lastIndex - m.lastIndex);
    }

    /** One line per peer, then a summary line (which counts members only). */
    public List<String> describe() {
        List<String> lines = new ArrayList<>();
        Member l = leader();
        for (Member m : members) {
            String head = String.format("%-8s %-21s ", m.id, m.address);
            if (!m.member) {
                lines.add(head + "not a member of the group" + (m.reachable() ? "" : " (" + m.error + ")"));
            } else if (!m.reachable()) {
                lines.add(head + "unreachable: " + m.error);
            } else {
                lines.add(head + String.format("%-9s last=%d committed=%d applied=%d lag=%s snapshot=%s",
                        m.role.toLowerCase(java.util.Locale.ROOT), m.lastIndex, m.committedIndex, m.appliedIndex,
                        l == null ? "?" : String.valueOf(lag(m)), m.snapshotIndex < 0 ? "none" : String.valueOf(m.snapshotIndex)));
            }
        }
        long count = members.stream().filter(m -> m.member).count();
        long up = members.stream().filter(m -> m.member && m.reachable()).count();
        lines.add("volume " + volume + ": " + (l == null ? "no leader" : "leader " + l.id) + ", " + up + " of "
                + count + " peers answered" + (up * 2 > count ? "" : " (no quorum)"));
        return lines;
    }
}
