package io.pistore.replication.node;

import io.pistore.replication.ReplicaPeers;
import io.pistore.engine.volume.PrivateFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.apache.ratis.protocol.RaftPeer;

/**
 * A replica's peer list ({@code groups/NAME.peers}, {@code ID=HOST:PORT,...}): the group a first
 * start joins, kept until the replica leaves. Written whole and forced, then moved into place.
 */
final class PeerListFiles {
    private PeerListFiles() {
    }

    static Path file(Path groupsDir, String name) {
        return groupsDir.resolve(name + ".peers");
    }

    /** The peer list written for a replica, or null. */
    static List<RaftPeer> read(Path groupsDir, String name) throws IOException {
        Path f = file(groupsDir, name);
        if (!java.nio.file.Files.exists(f)) {
            return null;
        }
        return ReplicaPeers.parse(java.nio.file.Files.readString(f, StandardCharsets.UTF_8).strip());
    }

    /** Writes a replica's peer list, atomically: the group a first start joins. */
    static void write(Path groupsDir, String name, List<RaftPeer> peers) throws IOException {
        PrivateFiles.createDirectories(groupsDir);
        Path tmp = groupsDir.resolve(name + ".peers.tmp");
        PrivateFiles.writeForced(tmp, (ReplicaPeers.describe(peers) + "\n").getBytes(StandardCharsets.UTF_8));
        java.nio.file.Files.move(tmp, file(groupsDir, name), java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
