package io.pistore.replication.volume;

import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ReplicationSettings;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.util.TimeDuration;

/**
 * Moves the leadership of a replicated volume's group to one member (Ratis's leadership transfer:
 * the leader brings that member's log up to date and has it start an election at once), waiting at
 * most the operation timeout: before the old leader's machine is stopped, and where hosts should be
 * served by a given peer. A member that is down, or that cannot catch up in time, is refused with
 * the group's reason ({@link ReplicationException}); the leader stays. A peer that is not a member
 * is an {@link IllegalArgumentException}.
 */
public final class LeaderTransfer {
    private LeaderTransfer() {
    }

    /** Makes {@code peer} the leader of volume {@code name}'s group, reached through {@code peers}. */
    public static void to(String name, List<RaftPeer> peers, String peer, ReplicationSettings settings)
            throws IOException {
        to(name, RaftGroup.valueOf(ReplicaPeers.groupId(name), peers), peer, settings);
    }

    static void to(String name, RaftGroup group, String peer, ReplicationSettings settings) throws IOException {
        ReplicaPeers.checkId(peer);
        long timeoutMs = settings.operationTimeout().toMillis();
        RaftClientReply r;
        // A client of its own whose one request may take the whole transfer (a volume's gives a
        // request to one peer up after the attempt time, and a transfer asked again meanwhile fails).
        try (RaftClient admin = DetachedReconnectRpc.newClient(settings.client(settings.operationTimeout()))
                .setRaftGroup(group)
                .setRetryPolicy(RetryPolicies.retryUpToMaximumCountWithFixedSleep((int) Math.max(1, timeoutMs / 100),
                        TimeDuration.valueOf(100, TimeUnit.MILLISECONDS)))
                .build()) {
            r = admin.admin().transferLeadership(RaftPeerId.valueOf(peer), timeoutMs);
        } catch (IOException e) {
            throw refused(name, peer, e);
        }
        if (!r.isSuccess()) {
            throw refused(name, peer, r.getException());
        }
    }

    private static ReplicationException refused(String name, String peer, Throwable why) {
        String m = String.valueOf(why == null ? null : why.getMessage());
        if (m.contains("as it is not in conf")) { // Ratis's words for a peer outside the configuration
            throw new IllegalArgumentException("volume " + name + ": " + peer + " is not a member of its group");
        }
        return new ReplicationException("volume " + name + ": leadership not transferred to " + peer + ": "
                + (why == null ? "no reason given" : ReplicationException.oneLine(why)));
    }
}
