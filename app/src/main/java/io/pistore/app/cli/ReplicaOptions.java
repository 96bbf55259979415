package io.pistore.app.cli;

import io.pistore.replication.ReplicaPeers;
import io.pistore.server.PistoreServer;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * {@code --replica-id} and {@code --replica-listen}: this target as one peer of replicated volumes
 * (docs/REPLICATION.md). Its replicas and Raft storage live in {@code DATA/replication}.
 */
public final class ReplicaOptions {
    @Option(names = "--replica-id", paramLabel = "ID",
            description = "This target's id among the peers of its replicated volumes (config key: replica-id).")
    public String id;

    @Option(names = "--replica-listen", paramLabel = "HOST:PORT",
            description = "Address for replication traffic, this peer's address in the volumes' --replicas "
                    + "(config key: replica-listen).")
    public String listen;

    public static Path dir(Path data) {
        return PistoreServer.replicationDir(data);
    }

    /** The id, checked; a usage error when it is missing or malformed. */
    public String id(String why) {
        if (id == null) {
            throw CliException.usage("--replica-id is needed " + why);
        }
        try {
            ReplicaPeers.checkId(id);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--replica-id: " + e.getMessage());
        }
        return id;
    }

    /** The port of {@code --replica-listen}; a usage error unless it is HOST:PORT with a port 1 to 65535. */
    public int port() {
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
        return port;
    }

    /** The host of {@code --replica-listen} (after {@link #port} accepted it). */
    public String host() {
        return listen.substring(0, listen.lastIndexOf(':'));
    }
}
