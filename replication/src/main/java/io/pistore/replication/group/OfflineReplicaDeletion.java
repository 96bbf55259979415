package io.pistore.replication.group;

import io.pistore.engine.volume.VolumeStore;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.raft.ReplicaFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * Deletes this peer's replica of one replicated volume from a stopped peer's replication directory,
 * without its group: what a group deletion removes on a member (the replica's volume files, its peer
 * list, its applied record, and Ratis's log and snapshots of the group), for a peer that kept a
 * leftover copy (down during a forced delete) or must drop a replica while its serve cannot run.
 * The replicas' store is opened for the deletion, so a running serve (which holds it) makes it fail
 * with {@link io.pistore.engine.volume.DataDirInUseException}. Nothing is asked of the other peers.
 *
 * <p>The Raft directory goes first: it is what makes a starting peer hold the group again; then the
 * peer list (what a first start joins), the record, and the replica's files. A crash in between
 * leaves less of the same, and the same deletion again removes the rest.
 */
public final class OfflineReplicaDeletion {
    /** What was deleted: the parts found, and the peers the replica's peer list named (empty if none). */
    public record Deleted(List<String> parts, String peers) {
    }

    private OfflineReplicaDeletion() {
    }

    /** Whether {@code dir} (a peer's {@code DATA/replication}) holds anything of a replica of {@code name}. */
    public static boolean holds(Path dir, String name) {
        return Files.exists(raftDir(dir, name)) || Files.exists(peersFile(dir, name))
                || Files.exists(ReplicaFiles.record(dir.resolve("groups"), name))
                || Files.exists(dir.resolve("replicas").resolve(name + ".data"));
    }

    /**
     * Deletes every part of the replica of {@code name} under {@code dir}; throws
     * {@link IllegalArgumentException} when there is none (nothing is touched).
     */
    public static Deleted delete(Path dir, String name) throws IOException {
        VolumeStore.checkName(name);
        if (!Files.isDirectory(dir)) {
            throw new IllegalArgumentException("no replica of volume " + name + " here: " + dir + " does not exist");
        }
        try (VolumeStore replicas = VolumeStore.open(dir.resolve("replicas"), 0, "pistore volume delete --replica-only")) {
            List<String> parts = new ArrayList<>();
            Path raft = raftDir(dir, name);
            Path peers = peersFile(dir, name);
            Path record = ReplicaFiles.record(dir.resolve("groups"), name);
            boolean volume = replicas.get(name) != null;
            if (!volume && !Files.exists(raft) && !Files.exists(peers) && !Files.exists(record)) {
                throw new IllegalArgumentException("no replica of volume " + name + " in " + dir);
            }
            String named = Files.exists(peers) ? Files.readString(peers, StandardCharsets.UTF_8).strip() : "";
            if (Files.exists(raft)) {
                deleteTree(raft);
                parts.add("Raft log and snapshots");
            }
            if (Files.deleteIfExists(peers)) {
                parts.add("peer list");
            }
            if (Files.deleteIfExists(record)) {
                parts.add("applied record");
            }
            if (Files.isDirectory(dir.resolve("groups"))) {
                ReplicaFiles.forceDirectory(dir.resolve("groups"));
            }
            if (volume) {
                replicas.delete(name);
                parts.add(0, "data, metadata and journal");
            }
            return new Deleted(parts, named);
        }
    }

    private static Path raftDir(Path dir, String name) {
        return dir.resolve("raft").resolve(ReplicaPeers.groupId(name).getUuid().toString());
    }

    private static Path peersFile(Path dir, String name) {
        return dir.resolve("groups").resolve(name + ".peers");
    }

    private static void deleteTree(Path root) throws IOException {
        List<Path> all;
        try (Stream<Path> s = Files.walk(root)) {
            all = s.sorted(Comparator.reverseOrder()).toList();
        }
        for (Path p : all) {
            Files.deleteIfExists(p);
        }
        ReplicaFiles.forceDirectory(root.getParent());
    }
}
