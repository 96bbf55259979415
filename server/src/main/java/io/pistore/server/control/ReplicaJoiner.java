package io.pistore.server.control;

import io.pistore.engine.volume.VolumeStore;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.group.GroupMembership;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.replication.volume.ReplicatedVolume;
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
public final class ReplicaJoiner {
    private final ReplicaNode node;
    private final VolumeStore store;
    private final Consumer<String> log;

    public ReplicaJoiner(ReplicaNode node, VolumeStore store, Consumer<String> log) {
        this.node = node;
        this.store = store;
        this.log = log;
        node.onReplicaRemoved(this::detach);
    }

    /** Joins the group of {@code name} through {@code peers}, replacing member {@code replacing} (or none). */
    public List<String> join(String name, String peers, String replacing) throws IOException {
        VolumeStore.checkName(name);
        if (store.get(name) != null) {
            throw new IllegalArgumentException("this serve has a volume named " + name + " already");
        }
        GroupMembership.Change c = node.join(name, ReplicaPeers.parse(peers), replacing);
        List<String> lines = new ArrayList<>();
        lines.add("volume " + name + ": replica " + node.id() + " joined, caught up; members " + ids(c.before) + " -> "
                + ids(c.after));
        lines.addAll(c.notes);
        ReplicatedVolume v = node.open(name);
        store.attach(v);
        lines.add("  " + name + " replicated on " + ReplicaPeers.describe(c.after) + ", served here");
        return lines;
    }

    /**
     * Creates this peer's replica of a new replicated volume ({@link VolumeChange#createReplica}) and
     * serves it here; the group elects a leader once a majority of its peers have theirs.
     */
    List<String> create(VolumeChange c) throws IOException {
        String name = c.args().get(0);
        VolumeStore.checkName(name);
        if (!c.args().get(7).equals(node.id())) {
            throw new IllegalArgumentException("this serve's replica peer is " + node.id() + ", not " + c.args().get(7));
        }
        if (store.get(name) != null) {
            throw new IllegalArgumentException("this serve has a volume named " + name + " already");
        }
        List<org.apache.ratis.protocol.RaftPeer> peers = ReplicaPeers.parse(c.args().get(8));
        long blocks = Long.parseLong(c.args().get(1));
        io.pistore.integrity.BlockFormat f = c.format();
        node.createReplica(name, f, blocks, peers);
        store.attach(node.open(name));
        return List.of("created replica " + node.id() + " of " + name + ": " + blocks + " blocks, " + f + "; peers "
                + ReplicaPeers.describe(peers) + "; served here (a leader once a majority of the peers have theirs)");
    }

    /**
     * Grows replicated volume {@code name} to {@code bytes} of data on every replica of its group
     * ({@link ReplicatedVolume#grow}: through its log, ordered with the writes).
     */
    public List<String> resize(String name, long bytes) throws IOException {
        if (!(store.storage(name) instanceof ReplicatedVolume r)) {
            throw new IllegalArgumentException("no replicated volume named " + name + " here");
        }
        long old = r.blockCount();
        long blocks = VolumeChange.blocksOf(bytes, r);
        r.grow(blocks); // each peer tells its frontends once its replica has grown (ReplicaNode#onReplicaGrown)
        if (old == blocks) {
            return List.of(name + " already has " + blocks + " blocks");
        }
        return List.of("resized " + name + ": " + old + " -> " + blocks + " blocks on every replica of its group");
    }

    /** Whether {@code name} is a replicated volume this serve attached (one its peer holds a replica of). */
    public boolean replicated(String name) {
        io.pistore.engine.volume.Volume v = store.get(name);
        return v != null && v.waitsForPeers();
    }

    /**
     * Deletes replicated volume {@code name} on every member of its group ({@link ReplicaNode#delete}).
     * In use here (NBD connections), it is refused as a plain volume is, unless {@code force}, which
     * then also lets a minority of members be unreachable (they keep their copy; the lines say so).
     */
    public List<String> delete(String name, boolean force, VolumeUse use) throws IOException {
        List<String> lines = new ArrayList<>();
        if (node.replica(name) == null) { // forwarded since this peer left the group: the members keep the volume
            detach(name, false);
            return List.of("volume " + name + " is no longer forwarded here; this peer is no member of its group, "
                    + "whose members keep it");
        }
        String why = use.inUse(name);
        if (why != null) {
            if (!force) {
                throw new IllegalArgumentException("volume " + name + " is in use (" + why
                        + "); --force ends its connections and deletes it");
            }
            int ended = use.disconnect(name);
            if (ended > 0) {
                lines.add("ended " + ended + " client connection(s) (NBD, iSCSI) to " + name);
            }
        }
        lines.addAll(node.delete(name, force));
        detach(name, false); // the peer's removal detaches it too; this covers a removal Ratis did not report
        return lines;
    }

    /**
     * This peer gave up its replica of {@code name}. Removed by a membership change, the volume stays
     * attached: its client of the group forwards hosts' requests to the remaining members (this peer
     * no longer leads, so nothing is read from here), so hosts connected to this serve keep working
     * until it stops, and then fail over to another peer of their list. Otherwise (the volume
     * deleted) it is detached: hosts here find no such volume.
     */
    private void detach(String name, boolean byChange) {
        try {
            io.pistore.engine.volume.Volume v = store.get(name);
            if (v == null || !v.waitsForPeers()) {
                return;
            }
            if (byChange) {
                log.accept("volume " + name + ": this peer left its group; requests for it are forwarded to its "
                        + "members while this serve runs");
                return;
            }
            store.delete(name); // an attached volume: closed and forgotten, no files touched
            log.accept("volume " + name + ": no longer served here (its replica here is deleted)");
        } catch (IOException | RuntimeException e) {
            log.accept("volume " + name + ": detaching it failed: " + e.getMessage());
        }
    }

    private static String ids(List<org.apache.ratis.protocol.RaftPeer> peers) {
        return String.join(",", peers.stream().map(p -> p.getId().toString()).toList());
    }
}
