package io.pistore.replication.volume;

import io.pistore.replication.raft.ReplicaCommand;

/**
 * Sends a check entry through the volume's log ({@link ReplicaCommand#sharedStateCheck}: it changes
 * nothing) so that the followers learn the leader's commit index now. Ratis tells a follower that
 * entries committed only with its next append to it, and the group keeps no commit-index records
 * (ReplicationSettings): on an idle group that is the next heartbeat, half an election timeout
 * away. A follower that waits for an index the leader has committed (a follower read, a shared-state
 * change made through it) sends one; the entry's append, sent at once, carries the index.
 */
final class CommitNudge {
    /** How long a wait for an applied index goes before it nudges: under writes the next append comes sooner. */
    static final long GRACE_MILLIS = 2;

    private final CommitBatcher batcher;

    CommitNudge(CommitBatcher batcher) {
        this.batcher = batcher;
    }

    /** Sends the check entry; its outcome is not needed (a failure leaves the heartbeat to tell). */
    void run() {
        batcher.submit(ReplicaCommand.sharedStateCheck()).exceptionally(t -> null);
    }
}
