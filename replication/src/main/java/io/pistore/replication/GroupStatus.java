package io.pistore.replication;

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
 * what it knows committed and what it applied; the leader and each follower's lag behind it. Asked of
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
        /** Why it did not answer, or null. */
        public final String error;

        Member(String id, String address, String role, long lastIndex, long committedIndex, long appliedIndex,
                String error) {
            this.id = id;
            this.address = address;
            this.role = role;
            this.lastIndex = lastIndex;
            this.committedIndex = committedIndex;
            this.appliedIndex = appliedIndex;
            this.error = error;
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

    /** Asks every peer of volume {@code name} ({@code ID=HOST:PORT,...}) for its state. */
    public static GroupStatus of(String name, String peers, ReplicationSettings settings) {
        List<RaftPeer> list = PeerList.parse(peers);
        RaftGroupId gid = ReplicaNode.groupId(name);
        List<Member> members = new ArrayList<>();
        try (RaftClient c = RaftClient.newBuilder()
                .setRaftGroup(RaftGroup.valueOf(gid, list))
                .setProperties(settings.client())
                .setRetryPolicy(RetryPolicies.noRetry())
                .build()) {
            for (RaftPeer p : list) {
                members.add(ask(c, gid, p));
            }
        } catch (IOException e) {
            // closing the client: the answers are in already
        }
        return new GroupStatus(name, members);
    }

    private static Member ask(RaftClient c, RaftGroupId gid, RaftPeer p) {
        try {
            GroupInfoReply r = c.getGroupManagementApi(p.getId()).info(gid);
            if (!r.isSuccess()) {
                return unreachable(p, ReplicatedVolume.oneLine(r.getException()));
            }
            LogInfoProto l = r.getLogInfoProto();
            RaftPeerRole role = r.getRoleInfoProto().getRole();
            return new Member(p.getId().toString(), p.getAddress(), role.name(), l.getLastEntry().getIndex(),
                    l.getCommitted().getIndex(), l.getApplied().getIndex(), null);
        } catch (IOException | RuntimeException e) {
            return unreachable(p, ReplicatedVolume.oneLine(e));
        }
    }

    private static Member unreachable(RaftPeer p, String why) {
        return new Member(p.getId().toString(), p.getAddress(), null, -1, -1, -1, why);
    }

    /** The peer that says it leads, or null (none reachable does: an election, or no quorum). */
    public Member leader() {
        return members.stream().filter(m -> "LEADER".equals(m.role)).findFirst().orElse(null);
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

    /** One line per peer, then a summary line. */
    public List<String> describe() {
        List<String> lines = new ArrayList<>();
        Member l = leader();
        for (Member m : members) {
            if (!m.reachable()) {
                lines.add(String.format("%-8s %-21s unreachable: %s", m.id, m.address, m.error));
                continue;
            }
            lines.add(String.format("%-8s %-21s %-9s last=%d committed=%d applied=%d lag=%s", m.id, m.address,
                    m.role.toLowerCase(java.util.Locale.ROOT), m.lastIndex, m.committedIndex, m.appliedIndex,
                    l == null ? "?" : String.valueOf(lag(m))));
        }
        long up = members.stream().filter(Member::reachable).count();
        lines.add("volume " + volume + ": " + (l == null ? "no leader" : "leader " + l.id) + ", " + up + " of "
                + members.size() + " peers answered" + (up * 2 > members.size() ? "" : " (no quorum)"));
        return lines;
    }
}
