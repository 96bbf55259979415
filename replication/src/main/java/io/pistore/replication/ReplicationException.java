package io.pistore.replication;

import java.io.IOException;

/**
 * A replicated volume's operation failed as a group: no quorum answered in time, a replica refused
 * the data, or the group failed it. The message is one line, meant for the user.
 */
public final class ReplicationException extends IOException {
    private static final long serialVersionUID = 1L;

    public ReplicationException(String message) {
        super(message);
    }
}
