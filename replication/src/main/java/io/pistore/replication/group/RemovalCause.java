package io.pistore.replication.group;

import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationSettings;
import java.io.IOException;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.retry.RetryPolicies;

/**
 * Why a peer's group of a volume was removed, when the peer itself cannot tell: it may have been left
 * out by a membership change without ever learning the configuration that removed it (it was down or
 * cut off while the change committed, or had not applied it yet when told to leave), or the volume
 * was deleted. Its own log cannot say; the other peers it knew can. A membership change leaves the
 * group running on members whose configuration no longer names this peer; a deletion removes the
 * group from every member without changing the configuration (followers first, the leader last).
 * So: a peer that holds the group without this one is a change; no other peer holding it (each
 * answering that it has no such group) is a deletion; anything else is asked again until the
 * operation timeout, and then counts as a change, so a served volume keeps forwarding rather than
 * vanishing from hosts while it may still live elsewhere.
 */
public final class RemovalCause {
    /** What one round of answers says. */
    enum Verdict { CHANGE, DELETED, UNKNOWN }

    private static final long ROUND_GAP_MS = 200;

    private final RaftGroupId gid;
    private final RaftPeerId self;
    private final List<RaftPeer> others;
    private final ReplicationSettings settings;

    public RemovalCause(String volume, RaftPeerId self, List<RaftPeer> known, ReplicationSettings settings) {
        this.gid = ReplicaPeers.groupId(volume);
        this.self = self;
        this.others = known.stream().filter(p -> !p.getId().equals(self)).toList();
        this.settings = settings;
    }

    /**
     * True for a membership change (or when it cannot be told within the operation timeout), false
     * for a deletion. Asks again while {@code stillWanted} holds (the node still runs).
     */
    public boolean byChange(BooleanSupplier stillWanted) {
        return ask(stillWanted) != Verdict.DELETED;
    }

    /**
     * True only once a peer this one knew answers that it holds the group without this peer; false
     * when the answers say deletion, or say nothing within the operation timeout.
     */
    public boolean confirmedChange(BooleanSupplier stillWanted) {
        return ask(stillWanted) == Verdict.CHANGE;
    }

    /** Rounds of questions until one tells, the operation timeout passes or {@code stillWanted} fails. */
    private Verdict ask(BooleanSupplier stillWanted) {
        long end = System.nanoTime() + settings.operationTimeout().toNanos();
        while (stillWanted.getAsBoolean()) {
            Verdict v = round();
            if (v != Verdict.UNKNOWN) {
                return v;
            }
            if (System.nanoTime() > end) {
                break;
            }
            try {
                Thread.sleep(ROUND_GAP_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return Verdict.UNKNOWN;
    }

    /** One question to each other peer this one knew. */
    Verdict round() {
        int holding = 0;
        int gone = 0;
        for (RaftPeer p : others) {
            try (RaftClient c = RaftClient.newBuilder().setRaftGroup(RaftGroup.valueOf(gid, List.of(p)))
                    .setProperties(settings.client()).setRetryPolicy(RetryPolicies.noRetry()).build()) {
                GroupInfoReply r = c.getGroupManagementApi(p.getId()).info(gid);
                if (r.isSuccess()) {
                    if (r.getGroup().getPeers().stream().noneMatch(m -> m.getId().equals(self))) {
                        return Verdict.CHANGE;
                    }
                    holding++; // still names this peer: a deletion under way, or a member behind the change
                } else if (GroupDeletion.groupGone(gid, r.getException())) {
                    gone++;
                }
            } catch (IOException | RuntimeException e) {
                if (GroupDeletion.groupGone(gid, e)) {
                    gone++;
                }
            }
        }
        return holding == 0 && (gone > 0 || others.isEmpty()) ? Verdict.DELETED : Verdict.UNKNOWN;
    }
}
