package io.pistore.replication.node;

import io.pistore.engine.volume.PrivateFiles;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.group.GroupDeletion;
import io.pistore.replication.group.GroupMembership;
import io.pistore.replication.group.RemovalCause;
import io.pistore.replication.raft.ReplicaApplier;
import io.pistore.replication.raft.ReplicaFiles;
import io.pistore.replication.raft.ReplicaStats;
import io.pistore.replication.raft.SharedStateBoard;
import io.pistore.replication.raft.VolumeShape;
import io.pistore.replication.raft.VolumeStateMachine;
import io.pistore.replication.volume.LocalLeader;
import io.pistore.replication.volume.ReplicatedVolume;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.statemachine.StateMachine;
import org.apache.ratis.util.ExitUtils;

/**
 * One peer of pistore's replication: a Ratis server that holds one replica of each replicated volume
 * it is a member of. Each volume is its own Raft group, whose id follows from the volume's name; the
 * replica is an ordinary engine volume in {@code DIR/replicas} (a {@link VolumeStore} of its own,
 * with its one-owner lock), and Ratis keeps its log and snapshots in {@code DIR/raft}; {@code DIR/groups}
 * holds each replica's peer list and the record of the snapshot its files hold ({@link ReplicaFiles}).
 * On a restart the groups found in {@code DIR/raft} rejoin by themselves and catch up.
 */
public final class ReplicaNode implements AutoCloseable {
    private final RaftPeerId id;
    private final ReplicationSettings settings;
    private final Consumer<String> log;
    private final VolumeStore replicas;
    private final Map<RaftGroupId, String> names = new ConcurrentHashMap<>();
    private final Map<String, ReplicaStats> stats = new ConcurrentHashMap<>();
    private final Map<String, SharedStateBoard> boards = new ConcurrentHashMap<>(); // kept across group restarts
    private final Path groupsDir;
    /** Ratis's storage: its groups' logs and snapshots. */
    private final Path raftDir;
    private final String host;
    private RaftServer server;
    /** Hears the name of each volume whose replica this peer gave up (removed from its group). */
    private volatile RemovalListener onReplicaRemoved = (name, byChange) -> { };
    /** Volumes whose newest applied configuration leaves this peer out: their removal is a membership change. */
    private final java.util.Set<String> leaving = ConcurrentHashMap.newKeySet();
    /** Groups this peer leaves only to join them again at start (held without members): their replica stays. */
    private final java.util.Set<RaftGroupId> rejoining = ConcurrentHashMap.newKeySet();
    /** Restarts a group whose Raft log failed here; null until the server started. */
    private volatile StorageFailureRestarts restarts;
    private final StrandedJoins stranded; // asks whether a change left out a group back in its own join
    /** The members of each volume's group as this peer last knew them: whom to ask why it was removed. */
    private final Map<String, List<RaftPeer>> lastKnown = new ConcurrentHashMap<>();
    /**
     * Asks the other peers why a group was removed ({@link RemovalCause}) and tells the listener, one
     * removal at a time, off Ratis's threads (the questions are RPCs to other peers).
     */
    private final java.util.concurrent.ExecutorService removals = java.util.concurrent.Executors.newSingleThreadExecutor(
            r -> {
                Thread t = new Thread(r, "pistore-replica-removal");
                t.setDaemon(true);
                return t;
            });
    private volatile boolean closed;

    /** Hears that this peer gave up its replica of a volume. */
    public interface RemovalListener {
        /**
         * {@code byChange}: a membership change left this peer out (the group lives on among the other
         * members), or why could not be told; false when the group itself went (the volume deleted).
         */
        void removed(String name, boolean byChange);
    }

    private ReplicaNode(String id, String host, int port, Path dir, ReplicationSettings settings, Consumer<String> log)
            throws IOException {
        this.id = RaftPeerId.valueOf(id);
        this.settings = settings;
        this.log = log;
        this.groupsDir = dir.resolve("groups");
        this.raftDir = dir.resolve("raft");
        this.host = host;
        PrivateFiles.createDirectories(raftDir);
        this.replicas = VolumeStore.open(dir.resolve("replicas"), 0, "pistore replica " + id);
        for (Volume v : replicas.list()) {
            names.put(ReplicaPeers.groupId(v.name()), v.name());
        }
        RaftServer s = null;
        try {
            s = RaftServer.newBuilder()
                    .setServerId(this.id)
                    .setProperties(settings.server(host, port, dir.resolve("raft")))
                    .setStateMachineRegistry(this::stateMachine)
                    .setParameters(settings.serverParameters())
                    .build();
            startRaft(s, host, port);
            this.server = s;
            this.restarts = new StorageFailureRestarts(s, this.id, log, rejoining);
            joinDeclaredGroups();
            privateRaft();
            this.stranded = new StrandedJoins(s, this.id, settings.noLeaderTimeout(), names, (g, n) -> leftOut(g, n, false)).watchAll();
        } catch (IOException | RuntimeException e) {
            if (s != null) {
                s.close();
            }
            replicas.close();
            throw e;
        }
    }

    static {
        // Ratis ends the process (System.exit(1), its reason logged through slf4j, bound to nothing) when its gRPC
        // server cannot bind: a serve must say why, and not vanish with its other volumes. So Ratis throws, and startRaft says why.
        ExitUtils.disableSystemExit();
        GrpcStreamErrorFilter.install();
    }

    /** Starts {@code s}; a Raft address that cannot be bound is an IOException that says why (the socket's reason). */
    private static void startRaft(RaftServer s, String host, int port) throws IOException {
        try {
            s.start();
        } catch (ExitUtils.ExitException e) {
            throw new IOException("cannot listen for Raft peers on " + host + ":" + port + ": "
                    + ReplicationException.oneLine(e), e);
        } catch (RuntimeException e) { // a group's storage that does not load: its log, its snapshot
            throw new IOException("Ratis could not start its groups: " + ReplicationException.oneLine(e), e);
        }
    }

    /**
     * Joins the group of every replica whose peer list was written ({@link #createReplicaOffline}) but
     * that Ratis does not hold yet, or holds without members (a group that never had a leader has not
     * written its configuration down).
     */
    private void joinDeclaredGroups() throws IOException {
        java.util.Set<RaftGroupId> held = new java.util.HashSet<>();
        server.getGroupIds().forEach(held::add);
        for (String name : volumeNames()) {
            List<RaftPeer> peers = PeerListFiles.read(groupsDir, name);
            if (peers == null) {
                continue;
            }
            RaftGroupId gid = ReplicaPeers.groupId(name);
            if (held.contains(gid)) {
                if (!server.getDivision(gid).getGroup().getPeers().isEmpty()) {
                    continue;
                }
                rejoining.add(gid);
                try {
                    reply(server.groupManagement(GroupManagementRequest.newRemove(ClientId.randomId(), id, 0, gid, true,
                            false)), "leave the unconfigured group of volume " + name);
                } finally {
                    rejoining.remove(gid);
                }
            }
            reply(server.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), id, 0,
                    RaftGroup.valueOf(gid, peers), true)), "join the group of volume " + name);
            privateRaft();
        }
    }

    /**
     * Ratis makes a group's directories and log segments with the umask's modes: once a group is
     * joined they are made the owner's alone, and the 0700 storage directory keeps out everyone else
     * from what it makes later (a new log segment).
     */
    private void privateRaft() throws IOException {
        PrivateFiles.tighten(raftDir);
    }

    private void reply(RaftClientReply r, String what) throws ReplicationException {
        if (!r.isSuccess()) {
            throw new ReplicationException("peer " + id + " could not " + what + ": " + ReplicationException.oneLine(r.getException()));
        }
    }

    private static void checkMember(RaftPeerId id, String name, List<RaftPeer> peers) {
        if (peers.stream().noneMatch(p -> p.getId().equals(id))) {
            throw new IllegalArgumentException("peer " + id + " is not one of the peers of volume " + name);
        }
    }

    /**
     * Creates peer {@code id}'s replica of volume {@code name} under {@code dir} while the peer is not
     * running: the empty engine volume and its peer list. The peer joins the group when it next starts.
     */
    public static void createReplicaOffline(String id, Path dir, String name, BlockFormat format, long blocks,
            List<RaftPeer> peers) throws IOException {
        ReplicaPeers.checkId(id);
        checkMember(RaftPeerId.valueOf(id), name, peers);
        try (VolumeStore s = VolumeStore.open(dir.resolve("replicas"), 0, "pistore replica " + id)) {
            java.nio.file.Files.deleteIfExists(ReplicaFiles.record(dir.resolve("groups"), name));
            s.create(name, format, blocks);
            try {
                PeerListFiles.write(dir.resolve("groups"), name, peers);
            } catch (IOException | RuntimeException e) {
                s.delete(name);
                throw e;
            }
        }
    }

    /**
     * Starts a peer named {@code id} listening for replication traffic (and group clients) on
     * {@code host:port}, 0 for any free port; its replicas and Raft storage live under {@code dir}.
     */
    public static ReplicaNode start(String id, String host, int port, Path dir, ReplicationSettings settings,
            Consumer<String> log) throws IOException {
        return new ReplicaNode(id, host, port, dir, settings, log);
    }

    private StateMachine stateMachine(RaftGroupId gid) {
        String name = names.get(gid);
        Volume v = name == null ? null : replicas.get(name);
        if (v == null) {
            throw new IllegalStateException("peer " + id + " has no replica for group " + gid
                    + " (its volume is missing from " + "the replicas directory)");
        }
        ReplicaStats st = stats.computeIfAbsent(name, n -> new ReplicaStats());
        SharedStateBoard board = boards.computeIfAbsent(name, n -> new SharedStateBoard(log));
        return new VolumeStateMachine(new ReplicaApplier(name, id.toString(), v, log, st, b -> grow(name, b), board),
                new ReplicaFiles(replicas, name, ReplicaFiles.record(groupsDir, name)), settings, log,
                new VolumeStateMachine.GroupEvents() {
                    @Override
                    public void removed() {
                        ReplicaNode.this.removed(gid, name);
                    }

                    @Override
                    public void configured(List<RaftPeer> peers) {
                        lastKnown.put(name, List.copyOf(peers));
                        eachOpened(name, v -> v.regroup(RaftGroup.valueOf(gid, peers)));
                    }

                    @Override
                    public void leaderChanged(RaftPeerId leader) {
                        eachOpened(name, v -> v.leaderChanged(leader));
                    }

                    @Override
                    public void stoppedByRatis() {
                        leftOut(gid, name, true);
                    }

                    @Override
                    public void noLeaderForLong() {
                        leftOut(gid, name, false);
                    }

                    @Override
                    public void logFailed(Throwable cause) {
                        StorageFailureRestarts r = restarts;
                        if (r != null && !closed) { // null: failed while the server starts, which then fails
                            r.failed(gid, name, "write its Raft log", cause, knownPeers(name));
                        }
                    }

                    @Override
                    public void applyFailed(long index, Throwable cause) {
                        StorageFailureRestarts r = restarts;
                        if (r != null && !closed) {
                            r.failed(gid, name, "apply log entry " + index + " to its replica", cause, knownPeers(name),
                                    io.pistore.engine.volume.file.FileVolume.healable(cause)
                                    && !(cause instanceof io.pistore.replication.raft.UnreadableEntryException));
                        }
                    }

                    @Override
                    public void member(boolean inNewConfiguration) {
                        if (inNewConfiguration) {
                            leaving.remove(name);
                        } else {
                            leaving.add(name);
                        }
                    }
                });
    }

    /** The volumes opened through this peer ({@link #open}), by name: they follow membership changes. */
    private final Map<String, java.util.Set<ReplicatedVolume>> opened = new ConcurrentHashMap<>();

    private void eachOpened(String name, Consumer<ReplicatedVolume> what) {
        java.util.Set<ReplicatedVolume> vs = opened.get(name);
        if (vs != null) {
            vs.removeIf(ReplicatedVolume::isClosed);
            vs.forEach(what);
        }
    }

    /**
     * This peer left the group of volume {@code name} (Ratis has closed it, and deletes its log next):
     * the replica goes too, and with it the peer list, so no later start rejoins. The other members
     * hold the data. The listener hears whether a membership change left this peer out: at once when
     * its applied configuration says so; otherwise the peers it knew are asked ({@link RemovalCause}),
     * since a peer removed while it was down, cut off, or behind on applying never learns the
     * configuration that removed it, and its log is out of reach here (Ratis forgets the group before
     * it tells the state machine).
     */
    private synchronized void removed(RaftGroupId gid, String name) {
        if (rejoining.contains(gid)) {
            return; // left only to join again: the replica is the one rejoining
        }
        if (!names.containsKey(gid) && replicas.get(name) == null) {
            return; // told twice (a deletion makes sure of it)
        }
        List<RaftPeer> known = knownPeers(name);
        names.remove(gid);
        stats.remove(name);
        boards.remove(name);
        opened.remove(name);
        lastKnown.remove(name);
        try {
            java.nio.file.Files.deleteIfExists(PeerListFiles.file(groupsDir, name));
            java.nio.file.Files.deleteIfExists(ReplicaFiles.record(groupsDir, name));
            if (replicas.get(name) != null) {
                replicas.delete(name);
            }
            log.accept("volume " + name + ": replica " + id + " left the group; its replica is deleted");
        } catch (IOException | RuntimeException e) {
            log.accept("volume " + name + ": replica " + id + " left the group; deleting its replica failed: "
                    + e.getMessage());
        }
        boolean knownChange = leaving.remove(name);
        try {
            removals.execute(() -> {
                boolean byChange = knownChange
                        || new RemovalCause(name, id, known, settings).byChange(() -> !closed && !names.containsKey(gid));
                if (byChange && !knownChange && !closed) { // closing cuts the questions short: nothing learnt
                    log.accept("volume " + name + ": replica " + id + " had not learnt the change that removed it; "
                            + "the group lives on without it (or no member answered)");
                }
                if (!closed && !names.containsKey(gid)) { // not rejoined meanwhile (a new replica of the name)
                    onReplicaRemoved.removed(name, byChange);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // this node is closing: its serve stops, nothing to detach
        }
    }

    /**
     * Whether a change this peer never heard of (it was down or cut off while it committed) left it
     * out of the group of volume {@code name}. Asked when Ratis closed the group by itself
     * ({@code closedByRatis}: the leader answered this peer's election that it was removed; Ratis then holds
     * the group closed without removing it), or when this peer has elected in vain for long (that
     * answer lost the race against two members' refusals). Once a member it knew confirms the change,
     * this peer removes the group, and so its replica, as if told to leave; a closed group without
     * that answer within the operation timeout stays closed and a line says what to do. One question
     * per group at a time.
     */
    private void leftOut(RaftGroupId gid, String name, boolean closedByRatis) {
        if (!asking.add(gid)) {
            return;
        }
        List<RaftPeer> known = knownPeers(name);
        try {
            removals.execute(() -> {
                try {
                    leaveIfLeftOut(gid, name, known, closedByRatis);
                } finally {
                    asking.remove(gid);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            asking.remove(gid); // this node is closing: nothing to leave
        }
    }

    /** The groups a {@link #leftOut} question is on for. */
    private final java.util.Set<RaftGroupId> asking = ConcurrentHashMap.newKeySet();

    private void leaveIfLeftOut(RaftGroupId gid, String name, List<RaftPeer> known, boolean closedByRatis) {
        if (closed || !names.containsKey(gid)) {
            return; // stopping, or removed meanwhile
        }
        if (!new RemovalCause(name, id, known, settings).confirmedChange(() -> !closed && names.containsKey(gid))) {
            if (closedByRatis && !closed && names.containsKey(gid)) {
                log.accept("volume " + name + ": replica " + id + " stopped its group (outside the group's "
                        + "configuration, Ratis says), but no member confirmed a change that removed it; "
                        + "'pistore replicas remove' removes it, a restart of this serve starts it again");
            }
            return;
        }
        leaving.add(name); // known: removed() tells the listener without asking again
        log.accept("volume " + name + ": replica " + id + " was left out by a membership change it did not "
                + "hear of (down or cut off meanwhile); leaving the group");
        try {
            reply(server.groupManagement(GroupManagementRequest.newRemove(ClientId.randomId(), id, 0, gid,
                    true, false)), "leave the group of volume " + name);
        } catch (IOException | RuntimeException e) {
            leaving.remove(name);
            if (!GroupDeletion.groupGone(gid, e)) { // gone: told to leave meanwhile, and left
                log.accept("volume " + name + ": replica " + id + " could not leave the group: "
                        + e.getMessage());
            }
        }
    }

    /** The members this peer last knew for volume {@code name}: its last applied configuration, else its peer list. */
    private List<RaftPeer> knownPeers(String name) {
        List<RaftPeer> k = lastKnown.get(name);
        if (k != null && !k.isEmpty()) {
            return k;
        }
        try {
            List<RaftPeer> declared = PeerListFiles.read(groupsDir, name);
            return declared != null ? declared : List.of();
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    /**
     * Who hears of replicas this peer gives up (serve detaches a deleted volume, keeps forwarding one
     * whose group lives on): one at a time, on a thread of this node's own, within the operation
     * timeout of the removal.
     */
    public void onReplicaRemoved(RemovalListener listener) {
        this.onReplicaRemoved = listener;
    }

    /** Hears the name of each volume whose replica here grew (a RESIZE applied), on the applier's thread. */
    public void onReplicaGrown(java.util.function.Consumer<String> listener) {
        this.onReplicaGrown = listener;
    }

    private volatile java.util.function.Consumer<String> onReplicaGrown = name -> { };

    private void grow(String name, long blocks) throws IOException {
        replicas.resize(name, blocks);
        onReplicaGrown.accept(name);
    }

    /**
     * Joins the running group of volume {@code name} as a new member, online: asks the group (through
     * {@code known}, some of its members) for the volume's format and size, creates this peer's
     * replica empty with them, joins the group without a configuration (so it waits for the leader
     * instead of calling elections), and asks the leader to add it; the leader brings it up to date
     * (from its log, or from its newest snapshot and the log after it once the log was purged) before
     * the new configuration counts it. With {@code replacing}, that member is
     * removed in the same change and told to leave. On failure the new replica is removed again. A
     * name the group first knew at another address is refused ({@code PeerAddressMemory}).
     */
    public GroupMembership.Change join(String name, List<RaftPeer> known, String replacing) throws IOException {
        if (replicas.get(name) != null) {
            throw new IllegalArgumentException("peer " + id + " holds a replica of volume " + name + " already");
        }
        GroupMembership m = GroupMembership.of(name, known, settings);
        if (m.members().stream().anyMatch(p -> p.getId().equals(id))) {
            throw new IllegalArgumentException("peer " + id + " is a member of volume " + name + " already");
        }
        VolumeShape shape = m.shape();
        String was = m.firstAddresses().get(id.toString());
        if (was != null && !was.equals(peer().getAddress())) {
            throw new IllegalArgumentException("peer name " + id + " was in the group of volume " + name + " at " + was
                    + ", not " + peer().getAddress() + ": the members keep reaching a name at its first address, so "
                    + "a peer at another address needs a name not used in this group before");
        }
        RaftGroupId gid = ReplicaPeers.groupId(name);
        java.nio.file.Files.deleteIfExists(ReplicaFiles.record(groupsDir, name)); // a new replica holds no snapshot
        replicas.create(name, shape.format, shape.blocks);
        names.put(gid, name);
        boolean joined = false;
        try {
            reply(server.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), id, 0,
                    RaftGroup.valueOf(gid), true)), "join the group of volume " + name);
            privateRaft();
            joined = true;
            // At most the volume's data and metadata five times (a snapshot and the log after it, or
            // the whole log) at 32 MiB/s, beyond the membership timeout.
            long bytes = shape.blocks * (shape.format.dataSize() + shape.format.metadataSize());
            GroupMembership.Change c = m.change(List.of(peer()), replacing == null ? List.of() : List.of(replacing),
                    () -> catchUpProgress(gid), settings.membershipTimeout().toMillis() + 5 * bytes * 1000 / (32L << 20));
            PeerListFiles.write(groupsDir, name, c.after);
            log.accept("volume " + name + ": replica " + id + " joined; members " + GroupMembership.describeIds(c.after));
            return c;
        } catch (IOException | RuntimeException e) {
            if (joined) { // leaving deletes the replica (removed)
                try {
                    server.groupManagement(GroupManagementRequest.newRemove(ClientId.randomId(), id, 0, gid, true, false));
                } catch (IOException | RuntimeException ignored) {
                    // reported below with the cause
                }
            }
            names.remove(gid);
            if (replicas.get(name) != null) {
                replicas.delete(name);
            }
            throw e;
        }
    }

    /**
     * A value that changes while this peer catches up with a group it joins: the log it received, the
     * entries whose data it wrote beside the log (one by one within a batch), what it applied, and the
     * bytes of its storage for the group (a snapshot being installed grows there).
     */
    private long catchUpProgress(RaftGroupId gid) {
        long n = 0;
        try {
            RaftServer.Division d = server.getDivision(gid);
            n += d.getRaftLog().getLastEntryTermIndex() == null ? 0 : d.getRaftLog().getLastEntryTermIndex().getIndex();
            n += d.getInfo().getLastAppliedIndex();
            n += ((VolumeStateMachine) d.getStateMachine()).entryDataWrites();
        } catch (IOException | IllegalStateException e) {
            // not joined yet, starting, or gone: its files below still tell
        }
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(raftDir.resolve(gid.getUuid().toString()))) {
            n += files.mapToLong(f -> f.toFile().length()).sum();
        } catch (IOException | java.io.UncheckedIOException e) {
            // a file renamed or deleted under the walk: the next look counts it
        }
        return n;
    }

    /**
     * Deletes replicated volume {@code name} on every member of its group ({@link GroupDeletion}):
     * each removes the group with its log and snapshots, and deletes its replica and records. Needs a
     * leader and, without {@code force}, every member answering; a copy left on a peer that was
     * unreachable then is deleted by the same call on that peer, once its other members answer that
     * they hold no group. The lines say what became of each member.
     */
    public List<String> delete(String name, boolean force) throws IOException {
        if (replicas.get(name) == null) {
            throw new IllegalArgumentException("peer " + id + " holds no replica of volume " + name);
        }
        RaftGroupId gid = ReplicaPeers.groupId(name);
        List<RaftPeer> known = new java.util.ArrayList<>();
        try {
            known.addAll(server.getDivision(gid).getGroup().getPeers());
        } catch (IOException e) {
            // the replica without its group (a start that failed to join it): the declared peers below
        }
        if (known.isEmpty()) {
            List<RaftPeer> declared = PeerListFiles.read(groupsDir, name);
            known.addAll(declared != null ? declared : List.of(peer()));
        }
        List<String> lines = new GroupDeletion(name, id, known, settings).delete(force);
        if (replicas.get(name) != null && !heldByRatis(gid)) {
            removed(gid, name); // Ratis held no group for it, so nothing told this peer to let go of its files
        }
        return lines;
    }

    private boolean heldByRatis(RaftGroupId gid) throws IOException {
        for (RaftGroupId g : server.getGroupIds()) {
            if (g.equals(gid)) {
                return true;
            }
        }
        return false;
    }

    /** This peer as the others must name it: its id and the address it listens on. */
    public RaftPeer peer() {
        // The port as bound (0 asks for any free one); the host as asked, since the server may report
        // the wildcard address it bound to, which names no peer.
        InetSocketAddress a = server.getServerRpc().getInetSocketAddress();
        return RaftPeer.newBuilder().setId(id).setAddress(host + ":" + a.getPort()).build();
    }

    public String id() {
        return id.toString();
    }

    /**
     * Creates this peer's replica of volume {@code name} (an empty engine volume of that format and
     * size) and joins the volume's group of {@code peers}. Every peer of the group does the same; the
     * group elects a leader once a majority has joined.
     */
    public void createReplica(String name, BlockFormat format, long blocks, List<RaftPeer> peers) throws IOException {
        RaftGroupId gid = ReplicaPeers.groupId(name);
        checkMember(id, name, peers);
        java.nio.file.Files.deleteIfExists(ReplicaFiles.record(groupsDir, name)); // a new replica holds no snapshot
        replicas.create(name, format, blocks);
        names.put(gid, name);
        try {
            PeerListFiles.write(groupsDir, name, peers);
            reply(server.groupManagement(GroupManagementRequest.newAdd(ClientId.randomId(), id,
                    0, RaftGroup.valueOf(gid, peers), true)), "join the group of volume " + name);
            privateRaft();
        } catch (IOException | RuntimeException e) {
            names.remove(gid);
            java.nio.file.Files.deleteIfExists(PeerListFiles.file(groupsDir, name));
            replicas.delete(name); // no replica without its group
            throw e;
        }
    }

    /** As {@link #createReplica(String, BlockFormat, long, List)}, the peers written {@code ID=HOST:PORT,...}. */
    public void createReplica(String name, BlockFormat format, long blocks, String peers) throws IOException {
        createReplica(name, format, blocks, ReplicaPeers.parse(peers));
    }

    /** The names of the volumes this peer holds a replica of, sorted. */
    public List<String> volumeNames() {
        return replicas.list().stream().map(Volume::name).toList();
    }

    /**
     * The volume {@code name} as a client of its group: reads and writes go to the group's leader; while
     * this peer leads, in process (its entries straight to its server, reads from its own replica).
     */
    public ReplicatedVolume open(String name) throws IOException {
        Volume local = replicas.get(name);
        if (local == null) {
            throw new IllegalArgumentException("peer " + id + " holds no replica of volume " + name);
        }
        RaftGroup group = server.getDivision(ReplicaPeers.groupId(name)).getGroup();
        if (group.getPeers().isEmpty()) {
            List<RaftPeer> declared = PeerListFiles.read(groupsDir, name);
            if (declared != null) {
                group = RaftGroup.valueOf(group.getGroupId(), declared);
            }
        }
        if (!group.getPeers().isEmpty()) {
            lastKnown.putIfAbsent(name, List.copyOf(group.getPeers()));
        }
        ReplicatedVolume v = new ReplicatedVolume(name, local.format(), local::blockCount, group, settings, log,
                new LocalLeader(server, ReplicaPeers.groupId(name)));
        opened.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(v);
        v.regroup(server.getDivision(ReplicaPeers.groupId(name)).getGroup()); // a change between the look above and now
        return v;
    }

    /** This peer's Raft server: for the volumes it opens and for tests. */
    public RaftServer server() {
        return server;
    }

    /** This peer's own copy of the volume: for checks and tests, never for clients' I/O. */
    public Volume replica(String name) {
        return replicas.get(name);
    }

    /** What this peer's replica of {@code name} has done, or null if it has none. */
    public ReplicaStats stats(String name) {
        return stats.get(name);
    }

    /** Whether this peer is the leader of the volume's group now. */
    public boolean isLeader(String name) throws IOException {
        return server.getDivision(ReplicaPeers.groupId(name)).getInfo().isLeader();
    }

    /**
     * Whether this peer leads the group of volume {@code name} and has committed an entry of its term
     * (Ratis's ready leader): until then it answers neither a linearizable read nor a write at once.
     */
    public boolean isReadyLeader(String name) throws IOException {
        return server.getDivision(ReplicaPeers.groupId(name)).getInfo().isLeaderReady();
    }

    /** The index of the last log entry this peer's replica of {@code name} has applied. */
    public long appliedIndex(String name) throws IOException {
        try {
            return server.getDivision(ReplicaPeers.groupId(name)).getInfo().getLastAppliedIndex();
        } catch (IllegalStateException starting) { // Ratis's applier not there yet: the group is (re)starting
            throw new IOException("volume " + name + ": replica " + id + "'s group is starting", starting);
        }
    }

    /** How many times this peer's replica of {@code name} was paused for, or restored from, a snapshot its leader sent. */
    public long snapshotRestores(String name) throws IOException {
        return ((VolumeStateMachine) server.getDivision(ReplicaPeers.groupId(name)).getStateMachine()).restores();
    }

    @Override
    public void close() throws IOException {
        closed = true;
        removals.shutdownNow();
        stranded.close();
        if (restarts != null) {
            restarts.close();
        }
        try {
            server.close();
        } finally {
            replicas.close();
        }
    }
}
