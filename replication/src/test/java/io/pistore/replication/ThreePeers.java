package io.pistore.replication;

import io.pistore.engine.volume.Volume;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;

/**
 * Three replica nodes in this JVM, on loopback with Ratis's gRPC transport, each with its own
 * directory, holding one replicated volume. Nodes can be stopped (closed, as a dead process would
 * leave them) and restarted on the same port and directory.
 */
public final class ThreePeers implements AutoCloseable {
    /**
     * Short elections so tests see a new leader quickly; a short operation timeout so no-quorum fails
     * soon; commands' data beside the log wherever the test's files are (the peers `it` starts keep
     * the default, inside the log on a disk).
     */
    public static final ReplicationSettings SETTINGS = ReplicationSettings.defaults()
            .withDataBeside(ReplicationSettings.DataBeside.ALWAYS)
            .withElectionTimeout(Duration.ofMillis(300), Duration.ofMillis(600))
            .withRpcTimeout(Duration.ofSeconds(1))
            .withOperationTimeout(Duration.ofSeconds(4));
    /** How long a test waits for something that must happen (a leader, a catch-up) before failing: a hang guard. */
    static final Duration PATIENCE = Duration.ofSeconds(30);

    final String volume;
    final BlockFormat format;
    final long blocks;
    /** What the peers logged; appended on their threads, read by tests meanwhile (iteration on a snapshot). */
    public final List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>();
    final ReplicationSettings settings;
    private final Path root;
    private final ReplicaNode[] nodes = new ReplicaNode[3];
    private final int[] ports = new int[3];

    private ThreePeers(Path root, String volume, BlockFormat format, long blocks, ReplicationSettings settings) {
        this.root = root;
        this.settings = settings;
        this.volume = volume;
        this.format = format;
        this.blocks = blocks;
    }

    public static ThreePeers start(Path root, String volume, BlockFormat format, long blocks) throws IOException {
        return start(root, volume, format, blocks, SETTINGS);
    }

    public static ThreePeers start(Path root, String volume, BlockFormat format, long blocks, ReplicationSettings settings)
            throws IOException {
        ThreePeers g = new ThreePeers(root, volume, format, blocks, settings);
        try {
            List<RaftPeer> peers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                // not an ephemeral port: a restart binds it again, and meanwhile an outgoing connection may take one
                g.nodes[i] = ReplicaNode.start(id(i), "127.0.0.1", io.pistore.testkit.FreePorts.next(), root.resolve(id(i)),
                        settings, g.log::add);
                RaftPeer p = g.nodes[i].peer();
                g.ports[i] = Integer.parseInt(p.getAddress().substring(p.getAddress().lastIndexOf(':') + 1));
                peers.add(p);
            }
            for (ReplicaNode n : g.nodes) {
                n.createReplica(volume, format, blocks, peers);
            }
            g.readyLeader();
        } catch (IOException | RuntimeException e) {
            g.close();
            throw e;
        }
        return g;
    }

    public static String id(int i) {
        return "n" + (i + 1);
    }

    public ReplicaNode node(int i) {
        return nodes[i];
    }

    /** The group's peers, {@code ID=HOST:PORT,...}, running or not. */
    public String peerList() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 3; i++) {
            b.append(i == 0 ? "" : ",").append(id(i)).append("=127.0.0.1:").append(ports[i]);
        }
        return b.toString();
    }

    public Path dir(int i) {
        return root.resolve(id(i));
    }

    /**
     * Closes the given nodes: their servers stop, their replicas' files are closed. Several are closed
     * at once, on a thread each: a node's close waits on its own divisions, not on the other nodes.
     */
    public void stop(int... which) throws IOException {
        List<Thread> closing = new ArrayList<>();
        List<Throwable> failed = Collections.synchronizedList(new ArrayList<>());
        for (int i : which) {
            ReplicaNode n = nodes[i];
            nodes[i] = null;
            if (n == null) {
                continue;
            }
            Thread t = new Thread(() -> {
                try {
                    n.close();
                } catch (IOException | RuntimeException e) {
                    failed.add(e);
                }
            }, "close-" + n.id());
            t.start();
            closing.add(t);
        }
        for (Thread t : closing) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted closing the nodes", e);
            }
        }
        if (!failed.isEmpty()) {
            IOException e = new IOException("closing a node failed: " + failed.get(0), failed.get(0));
            failed.stream().skip(1).forEach(e::addSuppressed);
            throw e;
        }
    }

    /** Starts node {@code i} again on its port and directory; its group rejoins and catches up. */
    public void restart(int i) throws IOException {
        nodes[i] = ReplicaNode.start(id(i), "127.0.0.1", ports[i], dir(i), settings, log::add);
    }

    /** Whether node {@code i} runs and leads the volume's group now. */
    public boolean leads(int i) {
        try {
            return nodes[i] != null && nodes[i].isLeader(volume);
        } catch (IOException e) {
            return false; // not (yet, or any longer) a member
        }
    }

    /** Waits for a running node to lead the volume's group and returns its index. */
    public int leader() {
        int[] found = {-1};
        await(() -> {
            for (int i = 0; i < 3; i++) {
                try {
                    if (nodes[i] != null && nodes[i].isLeader(volume)) {
                        found[0] = i;
                        return true;
                    }
                } catch (IOException e) {
                    // not yet a member: keep waiting
                }
            }
            return false;
        }, "a leader");
        return found[0];
    }

    /**
     * Waits for a running node to lead with an entry of its term committed, so the group's first
     * write or read is not the one that waits for the new leader's first commit (on a loaded machine,
     * with the JVM still cold, that took longer than the operation timeout).
     */
    public int readyLeader() {
        int[] found = {-1};
        await(() -> {
            for (int i = 0; i < 3; i++) {
                try {
                    if (nodes[i] != null && nodes[i].isReadyLeader(volume)) {
                        found[0] = i;
                        return true;
                    }
                } catch (IOException e) {
                    // not yet a member: keep waiting
                }
            }
            return false;
        }, "a leader with an entry of its term committed");
        return found[0];
    }

    /**
     * Waits until node {@code i} can no longer answer a read on its leader lease: no follower has
     * answered it for longer than the lease (a leader still holding its lease rightly reads alone, so a
     * test that needs a read to find no quorum waits for this after stopping the followers).
     */
    public void awaitLeaseLapsed(int i) throws IOException {
        RaftServer.Division d = nodes[i].server().getDivision(ReplicaPeers.groupId(volume));
        RaftProperties p = d.getRaftServer().getProperties();
        double leaseMs = RaftServerConfigKeys.Rpc.timeoutMin(p).toLong(TimeUnit.MILLISECONDS)
                * RaftServerConfigKeys.Read.leaderLeaseTimeoutRatio(p);
        await(() -> d.getInfo().getRoleInfoProto().getLeaderInfo().getFollowerInfoList().stream()
                .allMatch(f -> f.getLastRpcElapsedTimeMs() > leaseMs), ThreePeers.id(i) + "'s leader lease to lapse");
    }

    /**
     * Waits until every running node has applied as far as the leader has and copies no snapshot (a
     * copy that ends deletes the snapshot before it: the files are still until the next entry).
     */
    public void awaitConverged() throws IOException {
        int l = leader();
        long target = nodes[l].appliedIndex(volume);
        await(() -> {
            for (ReplicaNode n : nodes) {
                try {
                    if (n != null && (n.appliedIndex(volume) < target || ((io.pistore.replication.raft.VolumeStateMachine)
                            n.server().getDivision(ReplicaPeers.groupId(volume)).getStateMachine()).isCopying())) {
                        return false;
                    }
                } catch (IOException e) {
                    return false;
                }
            }
            return true;
        }, "every running replica to apply up to index " + target + ", no snapshot being copied");
    }

    /** Node {@code i}'s replica as stored: data, then metadata. */
    public byte[][] contents(int i) throws IOException {
        Volume v = nodes[i].replica(volume);
        byte[] d = new byte[(int) (blocks * format.dataSize())];
        byte[] m = new byte[(int) (blocks * format.metadataSize())];
        v.read(0, (int) blocks, ScatterList.wrap(d), ScatterList.wrap(m));
        return new byte[][] {d, m};
    }

    public static void await(BooleanSupplier done, String what) {
        Eventually.await(what, PATIENCE, done);
    }

    @Override
    public void close() throws IOException {
        stop(0, 1, 2);
    }

    /** {@code n} random blocks of {@code f} for {@code lba} and their PI (Type 1 reference tags from {@code lba}): {data, metadata}. */
    public static byte[][] blocks(BlockFormat f, java.util.Random random, long lba, int n) {
        byte[] d = new byte[n * f.dataSize()];
        random.nextBytes(d);
        byte[] m = new byte[n * f.metadataSize()];
        io.pistore.integrity.Pi.generate(io.pistore.integrity.PiContext.builder(f).checks(io.pistore.integrity.CheckFlags.ALL)
                .initialRefTag(f.refTagOf(lba)).build(), ScatterList.wrap(d), ScatterList.wrap(m), n);
        return new byte[][] {d, m};
    }

    /** Writes {@code dm} ({@link #blocks}) at {@code lba} as a host sent it with {@code fence}, waiting for it. */
    public static void write(Volume v, long lba, byte[][] dm, io.pistore.spi.WriteFence fence) {
        v.writeAsync(lba, dm[0].length / v.format().dataSize(), ScatterList.wrap(dm[0]), ScatterList.wrap(dm[1]), false,
                io.pistore.spi.PiDuty.NONE, fence).join();
    }
}
