package io.pistore.app.cli;

import io.pistore.replication.PeerList;
import io.pistore.replication.ReplicaNode;
import io.pistore.replication.ReplicationSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.function.Consumer;
import picocli.CommandLine.Option;

/**
 * {@code --replica-id} and {@code --replica-listen}: this target as one peer of replicated volumes
 * (docs/REPLICATION.md). Its replicas and Raft storage live in {@code DATA/replication}.
 */
final class ReplicaOptions {
    @Option(names = "--replica-id", paramLabel = "ID",
            description = "This target's id among the peers of its replicated volumes (config key: replica-id).")
    String id;

    @Option(names = "--replica-listen", paramLabel = "HOST:PORT",
            description = "Address for replication traffic, this peer's address in the volumes' --replicas "
                    + "(config key: replica-listen).")
    String listen;

    static Path dir(Path data) {
        return data.resolve("replication");
    }

    /** The id, checked; a usage error when it is missing or malformed. */
    String id(String why) {
        if (id == null) {
            throw CliException.usage("--replica-id is needed " + why);
        }
        try {
            PeerList.checkId(id);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--replica-id: " + e.getMessage());
        }
        return id;
    }

    /** Starts this peer on {@code --replica-listen} over {@code DATA/replication}. */
    ReplicaNode start(Path data, Consumer<String> log) throws IOException {
        String me = id("with --replica-listen");
        int colon = listen.lastIndexOf(':');
        int port = -1;
        try {
            port = colon > 0 ? Integer.parseInt(listen.substring(colon + 1)) : -1;
        } catch (NumberFormatException e) {
            // reported below
        }
        if (port < 1 || port > 65535) {
            throw CliException.usage("--replica-listen must be HOST:PORT with a port 1 to 65535, not '" + listen + "'");
        }
        try {
            return ReplicaNode.start(me, listen.substring(0, colon), port, dir(data), ReplicationSettings.defaults(), log);
        } catch (IOException e) {
            throw CliException.usage("cannot start replica " + me + " on " + listen + ": " + e.getMessage());
        }
    }
}
