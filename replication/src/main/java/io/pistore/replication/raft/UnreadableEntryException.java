package io.pistore.replication.raft;

import java.io.IOException;

/**
 * A committed log entry this replica cannot read: a peer of a build that knows a command this one
 * does not wrote it. The replica stops applying there (its group stops), since answering the entry
 * failed while the other replicas apply it would leave it different; only a build that reads it, run
 * on this peer, brings it back.
 */
public final class UnreadableEntryException extends IOException {
    private static final long serialVersionUID = 1L;

    public UnreadableEntryException(String message) {
        super(message);
    }
}
