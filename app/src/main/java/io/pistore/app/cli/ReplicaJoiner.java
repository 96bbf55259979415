package io.pistore.app.cli;

import io.pistore.engine.volume.VolumeStore;
import io.pistore.replication.GroupMembership;
import io.pistore.replication.PeerList;
import io.pistore.replication.ReplicaNode;
import io.pistore.replication.ReplicatedVolume;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * What a running {@code serve} with a replica peer does for {@code pistore replicas add|replace}
 * (through its control socket): its peer joins the volume's running group with a new, empty replica
 * of the volume's geometry and catches up from the leader's log; then the volume is served here like
 * the peer's other replicated volumes. It also detaches a volume whose replica the peer gave up
 * (removed from the group), so hosts connected here find no such volume instead of a stale copy.
 */
final class ReplicaJoiner {
    private final ReplicaNode node;
    private final VolumeStore store;
    private final Consumer<String> log;

    ReplicaJoiner(ReplicaNode node, VolumeStore store, Consumer<String> log) {
        this.node = node;
        this.store = store;
        this.log = log;
        node.onReplicaRemoved(this::detach);
    }

    /** Joins the group of {@code name} through {@code peers}, replacing member {@code replacing} (or none). */
    List<String> join(String name, String peers, String replacing) throws IOException {
        VolumeStore.checkName(name);
        if (store.get(name) != null) {
            throw new IllegalArgumentException("this serve has a volume named " + name + " already");
        }
        GroupMembership.Change c = node.join(name, PeerList.parse(peers), replacing);
        List<String> lines = new ArrayList<>();
        lines.add("volume " + name + ": replica " + node.id() + " joined, caught up; members " + ids(c.before) + " -> "
                + ids(c.after));
        lines.addAll(c.notes);
        ReplicatedVolume v = node.open(name);
        store.attach(v);
        lines.add("  " + name + " replicated on " + PeerList.describe(c.after) + ", served here");
        return lines;
    }

    private void detach(String name) {
        try {
            io.pistore.engine.volume.Volume v = store.get(name);
            if (v != null && v.waitsForPeers()) {
                store.delete(name); // an attached volume: closed and forgotten, no files touched
                log.accept("volume " + name + ": no longer served here (this peer left its group)");
            }
        } catch (IOException | RuntimeException e) {
            log.accept("volume " + name + ": detaching it failed: " + e.getMessage());
        }
    }

    private static String ids(List<org.apache.ratis.protocol.RaftPeer> peers) {
        return String.join(",", peers.stream().map(p -> p.getId().toString()).toList());
    }
}
