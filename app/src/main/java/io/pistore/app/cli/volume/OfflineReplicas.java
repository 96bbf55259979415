package io.pistore.app.cli.volume;

import io.pistore.app.cli.Progress;
import io.pistore.app.cli.ReplicaOptions;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The replicated volumes of a data directory whose {@code serve} is stopped, read from its files:
 * {@code DATA/replication/groups/NAME.peers} (the peer list) and the replica store beside it. For
 * {@code volume list} and the hint of {@code scrub NAME}, which reaches a replicated volume only
 * through its running peers.
 */
final class OfflineReplicas {
    private OfflineReplicas() {
    }

    /** Name to peer list ({@code ID=HOST:PORT,...}) of every replicated volume with a replica here. */
    static Map<String, String> peers(Path data) throws IOException {
        Map<String, String> m = new TreeMap<>();
        Path groups = ReplicaOptions.dir(data).resolve("groups");
        if (!Files.isDirectory(groups)) {
            return m;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(groups, "*.peers")) {
            for (Path f : ds) {
                String file = f.getFileName().toString();
                m.put(file.substring(0, file.length() - ".peers".length()),
                        Files.readString(f, StandardCharsets.UTF_8).strip());
            }
        }
        return m;
    }

    /** {@code volume list} lines of the replicated volumes, each marked with its peers. */
    static List<String> listLines(Path data, String command) throws IOException {
        Map<String, String> peers = peers(data);
        List<String> lines = new ArrayList<>();
        if (peers.isEmpty()) {
            return lines;
        }
        Path replicas = ReplicaOptions.dir(data).resolve("replicas");
        Map<String, Volume> found = new TreeMap<>();
        try (VolumeStore s = Files.isDirectory(replicas) ? VolumeStore.open(replicas, 0, command) : null) {
            if (s != null) {
                s.list().forEach(v -> found.put(v.name(), v));
            }
            for (Map.Entry<String, String> e : peers.entrySet()) {
                Volume v = found.get(e.getKey());
                lines.add(v == null
                        ? String.format("%-24s %12s %12s  %s", e.getKey(), "-", "-", "replicated on " + e.getValue()
                                + " (no replica files here yet)")
                        : String.format("%-24s %12d %12s  %s  replicated on %s", v.name(), v.blockCount(),
                                Progress.bytes(v.blockCount() * v.format().dataSize()), v.format(), e.getValue()));
            }
        }
        return lines;
    }

    /** The hint for a command given a replicated volume's name offline, or null when NAME is not one here. */
    static String hint(Path data, String name) {
        try {
            String p = peers(data).get(name);
            return p == null ? null : "volume " + name + " is replicated (peers " + p + "): scrub it through its "
                    + "running peers with --replicas " + p;
        } catch (IOException e) {
            return null;
        }
    }
}
