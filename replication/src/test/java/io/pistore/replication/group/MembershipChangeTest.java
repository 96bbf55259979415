package io.pistore.replication.group;

import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.Volume;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.replication.volume.ReplicaScrubReport;
import io.pistore.replication.volume.ReplicatedVolume;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.protocol.RaftPeer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Membership changes of a running group under a continuous write load: a fourth peer joins, a
 * follower is removed, another is replaced by a fifth peer; afterwards every acknowledged write reads
 * back through the leader and from every member's replica with valid PI, and a scrub is clean.
 */
class MembershipChangeTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "rv";
    private static final long BLOCKS = 256;
    private static final int WRITERS = 3;

    @TempDir
    Path dir;

    private ThreePeers peers;
    private final List<ReplicaNode> extra = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (ReplicaNode n : extra) {
            n.close();
        }
        if (peers != null) {
            peers.close();
        }
    }

    private ReplicaNode startExtra(String id) throws IOException {
        ReplicaNode n = ReplicaNode.start(id, "127.0.0.1", 0, dir.resolve(id), ThreePeers.SETTINGS, peers.log::add);
        extra.add(n);
        return n;
    }

    /** Writers that each own the LBAs of one residue and remember what each acknowledged write stored. */
    private static final class Load implements AutoCloseable {
        final Map<Long, byte[]> acked = new ConcurrentHashMap<>();
        final AtomicLong writes = new AtomicLong();
        final AtomicLong failures = new AtomicLong();
        final List<String> errors = new ArrayList<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final List<Thread> threads = new ArrayList<>();

        Load(ServedVolume s) {
            for (int w = 0; w < WRITERS; w++) {
                int me = w;
                Thread t = new Thread(() -> run(s, me), "membership-load-" + w);
                t.start();
                threads.add(t);
            }
        }

        private void run(ServedVolume s, int me) {
            Random r = new Random(40 + me);
            while (!stop.get()) {
                long lba = me + WRITERS * (long) r.nextInt((int) (BLOCKS / WRITERS));
                byte[] d = new byte[FORMAT.dataSize()];
                r.nextBytes(d);
                try {
                    s.device.writeSync(lba, ByteBuffer.wrap(d));
                    acked.put(lba, d);
                    writes.incrementAndGet();
                } catch (Exception e) {
                    // Not acknowledged: what the block holds now is unknown until the next acknowledged write.
                    acked.remove(lba);
                    failures.incrementAndGet();
                    synchronized (errors) {
                        errors.add(e.toString());
                    }
                }
            }
        }

        /** Waits until at least {@code n} more writes were acknowledged: the load runs through what follows. */
        void awaitMore(long n) {
            long target = writes.get() + n;
            ThreePeers.await(() -> writes.get() >= target, n + " more acknowledged writes");
        }

        /** Stops the writers and waits for them: what they acknowledged is final from here on. */
        void stop() {
            stop.set(true);
            for (Thread t : threads) {
                try {
                    t.join();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted waiting for the writers", e);
                }
            }
        }

        @Override
        public void close() {
            stop();
        }
    }

    private static String list(List<RaftPeer> peers) {
        return ReplicaPeers.describe(peers);
    }

    /** Waits until each node has applied as far as the leader node has. */
    private static void awaitApplied(ReplicaNode leader, List<ReplicaNode> nodes) throws IOException {
        long target = leader.appliedIndex(NAME);
        ThreePeers.await(() -> nodes.stream().allMatch(n -> {
            try {
                return n.appliedIndex(NAME) >= target;
            } catch (IOException e) {
                return false;
            }
        }), "every member to apply up to index " + target);
    }

    private static byte[][] contents(ReplicaNode n) throws IOException {
        Volume v = n.replica(NAME);
        byte[] d = new byte[(int) (BLOCKS * FORMAT.dataSize())];
        byte[] m = new byte[(int) (BLOCKS * FORMAT.metadataSize())];
        v.read(0, (int) BLOCKS, ScatterList.wrap(d), ScatterList.wrap(m));
        return new byte[][] {d, m};
    }

    @Test
    void aPeerIsAddedOneRemovedAndOneReplacedUnderWritesAndNoAcknowledgedWriteIsLost() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        int l = peers.leader();
        int removed = (l + 1) % 3;
        int replaced = (l + 2) % 3;
        ReplicaNode leader = peers.node(l);
        ReplicaNode n4 = startExtra("n4");
        ReplicaNode n5 = startExtra("n5");
        try (ServedVolume s = new ServedVolume(leader, NAME); Load load = new Load(s)) {
            load.awaitMore(20);

            GroupMembership.Change add = n4.join(NAME, ReplicaPeers.parse(peers.peerList()), null);
            assertEquals(4, add.after.size(), list(add.after));
            assertTrue(add.after.contains(n4.peer()), list(add.after));
            assertTrue(n4.replica(NAME) != null && n4.replica(NAME).format().equals(FORMAT)
                    && n4.replica(NAME).blockCount() == BLOCKS, "the new replica has the volume's geometry");
            load.awaitMore(20);

            GroupMembership.Change rm = GroupMembership.of(NAME, add.after, ThreePeers.SETTINGS)
                    .change(List.of(), List.of(ThreePeers.id(removed)));
            assertEquals(3, rm.after.size(), list(rm.after));
            assertEquals(List.of("peer " + ThreePeers.id(removed) + " left the group of volume rv and deleted its replica"),
                    rm.notes);
            assertNull(peers.node(removed).replica(NAME), "the removed peer holds no replica");
            assertTrue(!Files.exists(peers.dir(removed).resolve("replicas").resolve(NAME + ".data")),
                    "the removed peer's replica files are deleted");
            load.awaitMore(20);

            GroupMembership.Change rep = n5.join(NAME, rm.after, ThreePeers.id(replaced));
            assertEquals(3, rep.after.size(), list(rep.after));
            assertTrue(rep.after.contains(n5.peer()), list(rep.after));
            assertTrue(rep.after.stream().noneMatch(p -> p.getId().toString().equals(ThreePeers.id(replaced))),
                    list(rep.after));
            assertNull(peers.node(replaced).replica(NAME), "the replaced peer holds no replica");
            load.awaitMore(20);
            load.stop();
            // The figures RELIABILITY.md quotes: how much load the changes ran under.
            System.out.println("membership under load: " + load.writes.get() + " acknowledged writes, "
                    + load.failures.get() + " failed, " + load.acked.size() + " blocks checked"
                    + (load.errors.isEmpty() ? "" : "; first failure: " + load.errors.get(0)));

            assertTrue(load.acked.size() > 20, "writes acknowledged: " + load.acked.size());
            // Every acknowledged write reads back through the leader.
            for (Map.Entry<Long, byte[]> e : load.acked.entrySet()) {
                ByteBuffer b = ByteBuffer.allocate(FORMAT.dataSize());
                s.device.readSync(e.getKey(), b);
                assertArrayEquals(e.getValue(), b.array(), "acknowledged write at lba " + e.getKey() + " via the leader");
            }
            // ... and from every member's replica, with valid PI; the members' replicas are equal.
            List<ReplicaNode> members = List.of(leader, n4, n5);
            awaitApplied(leader, members);
            byte[][] first = contents(leader);
            for (ReplicaNode n : members) {
                byte[][] c = contents(n);
                for (Map.Entry<Long, byte[]> e : load.acked.entrySet()) {
                    int lba = e.getKey().intValue();
                    byte[] d = Arrays.copyOfRange(c[0], lba * FORMAT.dataSize(), (lba + 1) * FORMAT.dataSize());
                    byte[] m = Arrays.copyOfRange(c[1], lba * FORMAT.metadataSize(), (lba + 1) * FORMAT.metadataSize());
                    assertArrayEquals(e.getValue(), d, "lba " + lba + " on replica " + n.id());
                    PiContext ctx = PiContext.builder(FORMAT).checks(CheckFlags.ALL).initialRefTag(lba).build();
                    assertNull(Pi.verify(ctx, ScatterList.wrap(d), ScatterList.wrap(m), 1), "PI of lba " + lba + " on " + n.id());
                }
                assertArrayEquals(first[0], c[0], "data of " + n.id() + " and " + leader.id());
                assertArrayEquals(first[1], c[1], "metadata of " + n.id() + " and " + leader.id());
            }
        }
        try (ReplicatedVolume v = ReplicatedVolume.connect(NAME, ReplicaPeers.describe(
                GroupMembership.of(NAME, List.of(n4.peer()), ThreePeers.SETTINGS).members()), ThreePeers.SETTINGS,
                peers.log::add)) {
            ReplicaScrubReport r = v.scrub(x -> { });
            assertEquals(BLOCKS, r.blocks);
            assertTrue(r.clean(), "scrub: bad " + r.badCopies + " unreachable " + r.unreachable);
        }
    }


    @Test
    void unknownUnreachableAndLastPeersAndNoQuorumAreRefusedWithOneLine() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        GroupMembership g = GroupMembership.of(NAME, peers.peerList(), ThreePeers.SETTINGS);
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> g.change(List.of(), List.of("n9")));
        assertEquals("peer n9 is not a member of volume rv (members n1,n2,n3)", unknown.getMessage());
        IllegalArgumentException twice = assertThrows(IllegalArgumentException.class,
                () -> g.change(List.of(ReplicaPeers.parse("n2=127.0.0.1:1").get(0)), List.of()));
        assertEquals("peer n2 is a member of volume rv already", twice.getMessage());
        ReplicationException unreachable = assertThrows(ReplicationException.class,
                () -> g.change(ReplicaPeers.parse("n9=127.0.0.1:" + FreePorts.next()), List.of()));
        assertTrue(unreachable.getMessage().startsWith("peer n9 at 127.0.0.1:") && unreachable.getMessage()
                .contains(" is unreachable: "), unreachable.getMessage());
        assertEquals(3, g.members().size(), "nothing changed");

        int l = peers.leader();
        // Down to one member is allowed; the last one is never removed.
        int a = (l + 1) % 3;
        int b = (l + 2) % 3;
        // A member removed while it is down keeps its replica; once it is up, it learns of the change
        // at its first election and leaves by itself.
        peers.stop(a);
        GroupMembership.Change down = g.change(List.of(), List.of(ThreePeers.id(a)));
        assertEquals(2, down.after.size(), list(down.after));
        assertTrue(down.notes.get(0).startsWith("peer " + ThreePeers.id(a) + " is no member any more but was not "
                + "reachable to leave the group: "), down.notes.get(0));
        peers.restart(a);
        assertTrue(peers.node(a).replica(NAME) != null, "a peer that was not told keeps its replica");
        ThreePeers.await(() -> peers.node(a).replica(NAME) == null, "the removed peer to leave by itself");
        // Named again after that (as before this peer left by itself): nothing is left to leave, and that is said so.
        GroupMembership.Change again = g.change(List.of(), List.of(ThreePeers.id(a)));
        assertEquals(List.of("peer " + ThreePeers.id(a) + " left the group of volume rv and deleted its replica"),
                again.notes);
        GroupMembership.Change c = g.change(List.of(), List.of(ThreePeers.id(b)));
        assertEquals(List.of(ThreePeers.id(l)), c.after.stream().map(p -> p.getId().toString()).toList());
        try (ServedVolume s = new ServedVolume(peers.node(l), NAME)) {
            byte[] d = new byte[FORMAT.dataSize()];
            new Random(7).nextBytes(d);
            s.device.writeSync(3, ByteBuffer.wrap(d));
            ByteBuffer back = ByteBuffer.allocate(d.length);
            s.device.readSync(3, back);
            assertArrayEquals(d, back.array(), "a group of one still writes and reads");
        }
        IllegalArgumentException last = assertThrows(IllegalArgumentException.class,
                () -> g.change(List.of(), List.of(ThreePeers.id(l))));
        assertEquals("refused: removing " + ThreePeers.id(l) + " would leave volume rv with no replica "
                + "(its last member is never removed)", last.getMessage());

        // No leader reachable: refused after the operation timeout (4 s), not a hang.
        peers.stop(l);
        ReplicationException none = assertTimeoutPreemptively(Duration.ofSeconds(60),
                () -> assertThrows(ReplicationException.class, () -> g.change(List.of(), List.of(ThreePeers.id(a)))));
        assertTrue(none.getMessage().startsWith("volume rv: no leader answered within 4000 ms"), none.getMessage());
        assertTrue(!none.getMessage().contains("\n"), "one line");
    }
    /**
     * A removed member that takes connections and never answers (a hung host; a dead one behind a
     * router is the same to a client) is told to leave within one RPC's time, not the membership
     * timeout (2 minutes): the change it holds is a replacement of that very peer.
     */
    @Test
    void aRemovedMemberThatHangsHoldsTheChangeOneRpcAtMost() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        int a = (peers.leader() + 1) % 3;
        RaftPeer pa = ReplicaPeers.parse(peers.peerList()).stream()
                .filter(p -> p.getId().toString().equals(ThreePeers.id(a))).findFirst().orElseThrow();
        peers.stop(a);
        String[] hostPort = pa.getAddress().split(":");
        List<Socket> held = new CopyOnWriteArrayList<>();
        try (ServerSocket hung = new ServerSocket()) {
            hung.setReuseAddress(true);
            hung.bind(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])));
            Thread acceptor = new Thread(() -> {
                try {
                    while (true) {
                        held.add(hung.accept()); // held open, never read nor answered
                    }
                } catch (IOException e) {
                    // the socket closed with the test
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            GroupMembership g = GroupMembership.of(NAME, peers.peerList(), ThreePeers.SETTINGS);
            // A hang guard, not a speed check: held by the hung peer, the change would wait 120 s.
            GroupMembership.Change c = assertTimeoutPreemptively(Duration.ofSeconds(60),
                    () -> g.change(List.of(), List.of(ThreePeers.id(a))), "the change waited on the hung peer");
            assertEquals(2, c.after.size(), list(c.after));
            assertTrue(c.notes.get(0).startsWith("peer " + ThreePeers.id(a) + " is no member any more but was not "
                    + "reachable to leave the group: "), c.notes.get(0));
            assertTrue(!held.isEmpty(), "the hung peer was asked");
        } finally {
            for (Socket x : held) {
                x.close();
            }
        }
    }

    /**
     * A named peer that did not answer is asked after the others from then on: replacing a peer that
     * is down or cut off, each question of the change would otherwise first wait out an RPC on it.
     */
    @Test
    void aNamedPeerThatDidNotAnswerIsAskedAfterTheOthers() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        try (ServerSocket dead = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            AtomicLong contacts = new AtomicLong();
            Thread acceptor = new Thread(() -> {
                while (true) {
                    try (Socket s = dead.accept()) { // closed at once: the question fails
                        contacts.incrementAndGet();
                    } catch (IOException e) {
                        return; // the socket closed with the test
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            List<RaftPeer> named = new ArrayList<>(ReplicaPeers.parse("n9=127.0.0.1:" + dead.getLocalPort()));
            named.addAll(ReplicaPeers.parse(peers.peerList()));
            GroupMembership g = GroupMembership.of(NAME, named, ThreePeers.SETTINGS);
            assertEquals(3, g.members().size());
            long first = contacts.get();
            assertTrue(first >= 1, "named first, so asked first");
            assertEquals(3, g.members().size());
            assertEquals(3, g.members().size());
            assertEquals(first, contacts.get(), "not asked again while the others answer");
        }
    }

    /**
     * A change's answer lost after the change took effect (the leader died once the joint configuration
     * was committed, or the answer came too late): the join is a join, the new peer keeps its replica.
     * Without asking the group again, the peer would leave and delete its replica while the group
     * counts it, a member that never answers.
     */
    @Test
    void aJoinWhoseAnswerIsLostAfterItTookEffectIsAJoin() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        ReplicaNode n4 = startExtra("n4");
        AtomicBoolean lost = new AtomicBoolean();
        GroupMembership.onChangeAnswer = r -> {
            if (r != null && lost.compareAndSet(false, true)) {
                throw new IllegalStateException("answer lost"); // the first answer only
            }
        };
        GroupMembership.Change c;
        try {
            c = n4.join(NAME, ReplicaPeers.parse(peers.peerList()), null);
        } finally {
            GroupMembership.onChangeAnswer = r -> { };
        }
        assertTrue(c.after.contains(n4.peer()), list(c.after));
        assertEquals(1, c.notes.size(), c.notes.toString());
        assertTrue(c.notes.get(0).startsWith("volume rv: members n1,n2,n3 -> n1,n2,n3,n4 took effect when asked again; "
                + "the first request answered: failed: "), c.notes.get(0));
        List<RaftPeer> members = GroupMembership.of(NAME, peers.peerList(), ThreePeers.SETTINGS).members();
        assertTrue(members.contains(n4.peer()), list(members));
        assertTrue(n4.replica(NAME) != null, "the new member keeps its replica");
        try (ServedVolume s = new ServedVolume(peers.node(peers.leader()), NAME)) {
            byte[] d = new byte[FORMAT.dataSize()];
            new Random(8).nextBytes(d);
            s.device.writeSync(5, ByteBuffer.wrap(d));
            ThreePeers.await(() -> {
                try {
                    return n4.appliedIndex(NAME) >= peers.node(peers.leader()).appliedIndex(NAME);
                } catch (IOException e) {
                    return false;
                }
            }, "n4 to apply the write");
            byte[] back = new byte[FORMAT.dataSize()];
            n4.replica(NAME).read(5, 1, ScatterList.wrap(back), null);
            assertArrayEquals(d, back, "the new member's replica has the write");
        }
    }

    /**
     * A peer joins while a follower is down (the joint configuration needs a quorum of the old members
     * and one of the new, which the leader, the other follower and the new peer make); the follower
     * then comes back, learns the new configuration, catches up, and all four replicas are equal.
     */
    @Test
    void aPeerJoinsWhileAFollowerIsDownAndTheFollowerCatchesUp() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        int l = peers.leader();
        int down = (l + 1) % 3;
        ReplicaNode n4 = startExtra("n4");
        Random r = new Random(12);
        Map<Long, byte[]> acked = new java.util.TreeMap<>();
        try (ServedVolume s = new ServedVolume(peers.node(l), NAME)) {
            s.writeRandom(0, 8, r, acked);
            peers.stop(down);
            GroupMembership.Change add = n4.join(NAME, ReplicaPeers.parse(peers.peerList()), null);
            assertEquals(4, add.after.size(), list(add.after));
            s.writeRandom(8, 16, r, acked);
            peers.restart(down);
            List<RaftPeer> members = GroupMembership.of(NAME, peers.peerList(), ThreePeers.SETTINGS).members();
            assertEquals(4, members.size(), list(members));
            assertTrue(members.contains(n4.peer()), list(members));
        }
        ReplicaNode leader = peers.node(peers.leader());
        awaitApplied(leader, List.of(peers.node(0), peers.node(1), peers.node(2), n4));
        byte[][] want = contents(leader);
        for (ReplicaNode n : List.of(peers.node(down), n4)) {
            byte[][] c = contents(n);
            assertArrayEquals(want[0], c[0], "data of " + n.id());
            assertArrayEquals(want[1], c[1], "metadata of " + n.id());
        }
        for (Map.Entry<Long, byte[]> e : acked.entrySet()) {
            int lba = e.getKey().intValue();
            assertArrayEquals(e.getValue(), Arrays.copyOfRange(want[0], lba * FORMAT.dataSize(),
                    (lba + 1) * FORMAT.dataSize()), "acknowledged write at lba " + lba);
        }
    }

    /** A change that failed before it reached the group: the join is refused, the peer holds nothing. */
    @Test
    void aJoinThatFailsBeforeTheChangeIsUndone() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        ReplicaNode n4 = startExtra("n4");
        GroupMembership.onChangeAnswer = r -> {
            if (r == null) {
                throw new IllegalStateException("not sent");
            }
        };
        ReplicationException e;
        try {
            e = assertThrows(ReplicationException.class, () -> n4.join(NAME, ReplicaPeers.parse(peers.peerList()), null));
        } finally {
            GroupMembership.onChangeAnswer = r -> { };
        }
        assertTrue(e.getMessage().startsWith("volume rv: members n1,n2,n3 -> n1,n2,n3,n4 failed: "), e.getMessage());
        assertEquals(3, GroupMembership.of(NAME, peers.peerList(), ThreePeers.SETTINGS).members().size());
        assertNull(n4.replica(NAME), "a peer whose join failed holds nothing");
        GroupMembership.Change again = n4.join(NAME, ReplicaPeers.parse(peers.peerList()), null);
        assertTrue(again.after.contains(n4.peer()) && again.notes.isEmpty(), list(again.after) + " " + again.notes);
    }

    @Test
    void aNameBackAtAnotherAddressIsRefusedAtOnceAndANewNameJoins() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        ReplicaNode first = startExtra("n4");
        GroupMembership.Change add = first.join(NAME, ReplicaPeers.parse(peers.peerList()), null);
        assertEquals(4, add.after.size(), list(add.after));
        String firstAddress = first.peer().getAddress();
        GroupMembership.of(NAME, add.after, ThreePeers.SETTINGS).change(List.of(), List.of("n4"));
        extra.remove(first);
        first.close();

        // The same name on another port: the members would keep reaching the first address.
        ReplicaNode again = ReplicaNode.start("n4", "127.0.0.1", 0, dir.resolve("n4-again"), ThreePeers.SETTINGS,
                peers.log::add);
        extra.add(again);
        assertTrue(!again.peer().getAddress().equals(firstAddress), "a new port");
        IllegalArgumentException moved = assertTimeoutPreemptively(Duration.ofSeconds(30),
                () -> assertThrows(IllegalArgumentException.class,
                        () -> again.join(NAME, ReplicaPeers.parse(peers.peerList()), null)));
        assertEquals("peer name n4 was in the group of volume rv at " + firstAddress + ", not "
                + again.peer().getAddress() + ": the members keep reaching a name at its first address, so a peer at "
                + "another address needs a name not used in this group before", moved.getMessage());
        assertNull(again.replica(NAME), "no replica is made for a refused join");
        GroupMembership g = GroupMembership.of(NAME, peers.peerList(), ThreePeers.SETTINGS);
        assertEquals(3, g.members().size(), "nothing changed: " + list(g.members()));

        ReplicaNode fresh = startExtra("n5");
        GroupMembership.Change joined = fresh.join(NAME, ReplicaPeers.parse(peers.peerList()), null);
        assertTrue(joined.after.contains(fresh.peer()), list(joined.after));
    }
}
