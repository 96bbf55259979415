package io.pistore.it.reliability;

import io.pistore.testkit.FreePorts;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.Main;
import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.group.GroupStatus;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Status;
import io.pistore.testkit.Eventually;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntPredicate;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Operating a replicated volume on {@code serve} processes on loopback: deleting it through one
 * peer's serve (every member's files go, the name can be created again and reads as zeros), and
 * membership changes across processes under a write load through a tcp host that holds the list of
 * peers: a follower replaced by a fourth {@code serve}, the leader removed (leadership moves; the
 * removed peer's serve forwards until it stops, then the host fails over), a follower removed. No
 * acknowledged write is lost, and every removed peer's replica files are gone. A host given the list
 * of peers leaves a peer that no longer has the volume (removed, then the volume deleted there) for
 * one that does; a peer that was down during a forced delete has its leftover replica deleted with
 * {@code --replica-only}, and the name is created again.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ReplicatedOpsTest {
    static final int BS = 4096;

    @TempDir
    Path dir;

    private final int[] tcp = new int[5];
    private final int[] repl = new int[5];
    private final PistoreProcess[] servers = new PistoreProcess[5];

    @AfterEach
    void stopAll() throws Exception {
        PistoreProcess.closeAll(servers);
    }

    private String data(int i) {
        return dir.resolve("d" + i).toString();
    }

    private String peers(int... ids) {
        return IntStream.of(ids).mapToObj(i -> "n" + i + "=127.0.0.1:" + repl[i]).collect(Collectors.joining(","));
    }

    private static String cli(String... args) {
        StringWriter o = new StringWriter();
        int code = Main.run(new PrintWriter(o), new PrintWriter(o), args);
        assertEquals(0, code, String.join(" ", args) + ": " + o);
        return o.toString();
    }

    private void ports(int count) throws Exception {
        for (int i = 1; i <= count; i++) {
            tcp[i] = FreePorts.next();
            repl[i] = FreePorts.next();
        }
    }

    private void create(int... ids) {
        for (int i : ids) {
            cli("volume", "create", "--data", data(i), "rv", "--size", "16MiB", "--format", "4096+8", "--replica-id",
                    "n" + i, "--replicas", peers(ids));
        }
    }

    private void serve(int... ids) throws Exception {
        for (int i : ids) {
            Files.createDirectories(Path.of(data(i)));
            servers[i] = PistoreProcess.serve(List.of(), "--data", data(i), "--transport", "tcp", "--listen",
                    "127.0.0.1:" + tcp[i], "--replica-id", "n" + i, "--replica-listen", "127.0.0.1:" + repl[i]);
        }
        for (int i : ids) {
            servers[i].awaitListening();
        }
    }

    /** Peer {@code i} holds nothing of rv: no replica files, no peer list, no Raft log. */
    private void assertNoReplica(int i) {
        Path r = Path.of(data(i), "replication");
        assertFalse(Files.exists(r.resolve("replicas/rv.data")), "n" + i + "'s replica data");
        assertFalse(Files.exists(r.resolve("replicas/rv.meta")), "n" + i + "'s replica metadata");
        assertFalse(Files.exists(r.resolve("groups/rv.peers")), "n" + i + "'s peer list");
        assertFalse(Files.exists(r.resolve("raft").resolve(ReplicaPeers.groupId("rv").getUuid().toString())),
                "n" + i + "'s Raft log");
    }

    private static void awaitLine(PistoreProcess p, String text) {
        p.awaitLine("a line '" + text + "' from the serve", l -> l.contains(text), 60);
    }

    private static byte[] read(BlockDevice dev, long lba) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(BS);
        Completion r = dev.read(lba, ScatterList.of(b)).get(60, TimeUnit.SECONDS);
        assertEquals(Status.SUCCESS, r.status(), "lba " + lba + ": " + r);
        return b.array();
    }

    @Test
    void deletingAReplicatedVolumeRemovesItFromEveryPeerAndTheNameCanBeCreatedAgain() throws Exception {
        ports(3);
        create(1, 2, 3);
        serve(1, 2, 3);
        byte[] d = new byte[BS];
        new Random(5).nextBytes(d);
        try (BlockTransport t = Transports.find("tcp").create();
             HostConnection c = t.connect("127.0.0.1:" + tcp[2], new ConnectOptions(1, 8))) {
            BlockDevice dev = BlockDevice.open(c, "rv");
            Completion w = dev.write(5, ScatterList.wrap(d)).get(60, TimeUnit.SECONDS);
            assertTrue(w.isSuccess(), w.toString());
            assertArrayEquals(d, read(dev, 5));
        }
        // Written a moment ago, so in use: refused without --force, nothing deleted.
        StringWriter o = new StringWriter();
        assertEquals(2, Main.run(new PrintWriter(o), new PrintWriter(o), "volume", "delete", "rv", "--data", data(2)),
                o.toString());
        assertTrue(o.toString().contains("volume rv is in use"), o.toString());
        assertTrue(Files.exists(Path.of(data(1), "replication/replicas/rv.data")), "refused: n1 keeps its replica");

        String out = cli("volume", "delete", "rv", "--data", data(2), "--force");
        assertTrue(out.contains("deleted rv on 3 member(s)"), out);
        for (int i = 1; i <= 3; i++) {
            awaitLine(servers[i], "volume rv: no longer served here");
            assertNoReplica(i);
        }
        assertFalse(cli("volume", "list", "--data", data(1)).contains("rv "), "n1's serve no longer lists rv");

        PistoreProcess.stopAll(servers[1], servers[2], servers[3]);
        create(1, 2, 3); // the same name, on the same peers
        serve(1, 2, 3);
        try (BlockTransport t = Transports.find("tcp").create();
             HostConnection c = t.connect("127.0.0.1:" + tcp[3], new ConnectOptions(1, 8))) {
            assertArrayEquals(new byte[BS], read(BlockDevice.open(c, "rv"), 5), "the new volume reads as zeros");
        }
    }

    @Test
    void aHostLeavesAPeerThatNoLongerHasTheVolumeForOneThatDoes() throws Exception {
        ports(3);
        create(1, 2, 3);
        serve(1, 2, 3);
        String targets = IntStream.rangeClosed(1, 3).mapToObj(i -> "127.0.0.1:" + tcp[i])
                .collect(Collectors.joining(","));
        Random random = new Random(9);
        Map<Long, byte[]> written = new TreeMap<>();
        // without path states (as an rdma host): the answer NO_SUCH_VOLUME is what moves the host; with
        // them it moves as soon as n1 forwards (PathStatesTest, MissingVolumeFailoverTest)
        try (ReplicatedFailoverTest.TransportLog log = new ReplicatedFailoverTest.TransportLog("tcp");
             BlockTransport t = Transports.find("tcp").create(io.pistore.spi.TransportOptions.of(
                     Map.of("tcp.pathStates", "false")));
             HostConnection c = t.connect(targets, new ConnectOptions(1, 8))) {
            BlockDevice dev = BlockDevice.open(c, "rv"); // on n1, the first of the list
            for (long lba = 0; lba < 8; lba++) {
                byte[] d = new byte[BS];
                random.nextBytes(d);
                Completion w = dev.write(lba, ScatterList.wrap(d)).get(60, TimeUnit.SECONDS);
                assertTrue(w.isSuccess(), w.toString());
                written.put(lba, d);
            }
            // n1 leaves the group (its serve forwards), then the volume is deleted there: n1 has no rv
            String removed = cli("replicas", "remove", "rv", "--peer", "n1", "--replicas", peers(1, 2, 3));
            assertTrue(removed.contains("members n1,n2,n3 -> n2,n3"), removed);
            awaitLine(servers[1], "volume rv: this peer left its group; requests for it are forwarded");
            cli("volume", "delete", "rv", "--data", data(1), "--force");
            assertFalse(cli("volume", "list", "--data", data(1)).contains("rv "), "n1's serve no longer lists rv");

            ByteBuffer b = ByteBuffer.allocate(BS);
            Completion moving = dev.read(0, ScatterList.of(b)).get(60, TimeUnit.SECONDS);
            assertEquals(Status.TRANSPORT_ERROR, moving.status(), "n1 answered no such volume: " + moving);
            assertTrue(moving.message().contains("127.0.0.1:" + tcp[1] + " has no volume rv"), moving.message());
            for (Map.Entry<Long, byte[]> e : written.entrySet()) {
                assertArrayEquals(e.getValue(), readRetrying(dev, e.getKey()), "lba " + e.getKey() + " on another peer");
            }
            assertTrue(log.lines.stream().anyMatch(l -> l.contains("failed over from 127.0.0.1:" + tcp[1] + " to 127.0.0.1:"
                    + tcp[2] + " (queue 0)") && l.endsWith(": 127.0.0.1:" + tcp[1] + " has no volume rv")),
                    log.lines.toString());
            // a new host that names the volume is not connected to n1 at all
            try (HostConnection named = t.connect(targets, new ConnectOptions(1, 8).volume("rv"))) {
                assertArrayEquals(written.get(3L), read(BlockDevice.open(named, "rv"), 3));
            }
        }
    }

    /** Reads {@code lba}, sending it again while it fails with a transport error (the host moving); a hang guard. */
    private static byte[] readRetrying(BlockDevice dev, long lba) throws Exception {
        ByteBuffer[] b = new ByteBuffer[1]; // a new buffer for each read: a failed one never writes into the next
        Eventually.until("lba " + lba + " read back", Duration.ofSeconds(60), () -> {
            b[0] = ByteBuffer.allocate(BS);
            return dev.read(lba, ScatterList.of(b[0])).get(60, TimeUnit.SECONDS);
        }, r -> {
            if (r.isSuccess()) {
                return true;
            }
            assertEquals(Status.TRANSPORT_ERROR, r.status(), "lba " + lba + ": " + r);
            return false;
        });
        return b[0].array();
    }

    @Test
    void aLeftoverReplicaOfAForcedDeleteIsDeletedOfflineAndTheNameCreatedAgain() throws Exception {
        ports(3);
        create(1, 2, 3);
        serve(1, 2, 3);
        servers[3].stop(); // n3 is down while the volume is deleted
        String out = cli("volume", "delete", "rv", "--data", data(1), "--force");
        assertTrue(out.contains("deleted rv on 2 of 3 member(s); left on n3"), out);
        assertTrue(Files.exists(Path.of(data(3), "replication/replicas/rv.data")), "n3 keeps its copy");

        String cleaned = cli("volume", "delete", "rv", "--data", data(3), "--replica-only");
        assertTrue(cleaned.startsWith("deleted this peer's replica of rv in "), cleaned);
        assertNoReplica(3);

        PistoreProcess.stopAll(servers[1], servers[2]);
        create(1, 2, 3); // the same name on the same peers, n3 included
        serve(1, 2, 3);
        try (BlockTransport t = Transports.find("tcp").create();
             HostConnection c = t.connect("127.0.0.1:" + tcp[3], new ConnectOptions(1, 8))) {
            assertArrayEquals(new byte[BS], read(BlockDevice.open(c, "rv"), 5), "the new volume reads as zeros on n3");
        }
    }

    private String leader(int... ids) {
        GroupStatus s = GroupStatus.of("rv", peers(ids), ReplicationSettings.defaults());
        return s.leader() == null ? null : s.leader().id;
    }

    private String awaitLeader(IntPredicate acceptable, int... ids) {
        String[] l = new String[1];
        try {
            Eventually.await("an acceptable leader", Duration.ofSeconds(60), () -> {
                l[0] = leader(ids);
                return l[0] != null && acceptable.test(Integer.parseInt(l[0].substring(1)));
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + " (last: " + l[0] + ")", e);
        }
        return l[0];
    }

    @Test
    void followerReplacedLeaderAndFollowerRemovedAcrossProcessesUnderLoadLoseNoWrite() throws Exception {
        int perPhase = Figures.intFlag("pistore.replops.writes", 16);
        ports(4);
        create(1, 2, 3);
        serve(1, 2, 3, 4); // n4: an empty data directory, to replace n3
        try (ReplicatedVolume v = ReplicatedVolume.connect("rv", peers(1, 2, 3), ReplicationSettings.defaults(),
                line -> { })) {
            v.transferLeadership("n1");
        }
        String targets = IntStream.rangeClosed(1, 4).mapToObj(i -> "127.0.0.1:" + tcp[i])
                .collect(Collectors.joining(","));
        ReplicatedFailoverTest.Load load;
        int stays;
        // without path states (as an rdma host): the host stays on n1 while n1 forwards, and only n1's
        // stop moves it; with them it would move to the leader at once (PathStatesTest)
        try (ReplicatedFailoverTest.TransportLog log = new ReplicatedFailoverTest.TransportLog("tcp");
             BlockTransport t = Transports.find("tcp").create(io.pistore.spi.TransportOptions.of(
                     Map.of("tcp.pathStates", "false")));
             HostConnection c = t.connect(targets, new ConnectOptions(1, 8))) {
            BlockDevice dev = BlockDevice.open(c, "rv"); // on n1, the leader: the first of the list
            load = new ReplicatedFailoverTest.Load(dev, 4, 4096 / 4);
            load.awaitMore(perPhase);

            String replaced = cli("replicas", "replace", "rv", "--old", "n3", "--data", data(4), "--replicas",
                    peers(1, 2, 3));
            assertTrue(replaced.contains("members n1,n2,n3 -> n1,n2,n4"), replaced);
            assertTrue(replaced.contains("peer n3 left the group of volume rv and deleted its replica"), replaced);
            awaitLine(servers[3], "volume rv: replica n3 left the group; its replica is deleted");
            assertNoReplica(3);
            load.awaitMore(perPhase);

            String removed = cli("replicas", "remove", "rv", "--peer", "n1", "--replicas", peers(1, 2, 4));
            assertTrue(removed.contains("members n1,n2,n4 -> n2,n4"), removed);
            String leader = awaitLeader(i -> i == 2 || i == 4, 2, 4);
            // n1 deletes its files once Ratis closed its group there, which may come after the new
            // leader is elected: wait for its line, as for n3 above.
            awaitLine(servers[1], "volume rv: replica n1 left the group; its replica is deleted");
            assertNoReplica(1);
            awaitLine(servers[1], "volume rv: this peer left its group; requests for it are forwarded");
            load.awaitMore(perPhase); // still through n1's serve, which forwards to the members

            int seen = log.failovers();
            servers[1].stop(); // n1 decommissioned: the host moves to the next peer of its list
            assertNotNull(log.awaitFailover(seen), "the host did not fail over from n1: " + log.lines);
            load.awaitMore(perPhase);

            int follower = leader.equals("n2") ? 4 : 2;
            stays = 6 - follower;
            String removed2 = cli("replicas", "remove", "rv", "--peer", "n" + follower, "--replicas", peers(2, 4));
            assertTrue(removed2.contains("-> n" + stays), removed2);
            assertNoReplica(follower);
            load.awaitMore(perPhase);
            load.finish();
            assertEquals("n" + stays, awaitLeader(i -> true, stays));
            for (Map.Entry<Long, byte[]> e : new TreeMap<>(load.acked).entrySet()) {
                assertArrayEquals(e.getValue(), read(dev, e.getKey()), "acknowledged write at lba " + e.getKey());
            }
            try (HostConnection direct = t.connect("127.0.0.1:" + tcp[stays], new ConnectOptions(1, 8))) {
                BlockDevice last = BlockDevice.open(direct, "rv");
                for (Map.Entry<Long, byte[]> e : new TreeMap<>(load.acked).entrySet()) {
                    assertArrayEquals(e.getValue(), read(last, e.getKey()), "lba " + e.getKey() + " on n" + stays);
                }
            }
        }
        String scrub = cli("scrub", "rv", "--replicas", peers(stays));
        assertTrue(scrub.contains("no bad copies"), scrub);
        assertNotEquals(0, load.acked.size());
        Figures.record("replicated membership across processes", "3 serve processes and a 4th on loopback under 4 "
                + "writers through a tcp host with the list of peers: n3 replaced by n4, the leader n1 removed (its "
                + "serve forwarded, then stopped: the host failed over), a follower removed; " + load.acked.size()
                + " acknowledged writes all read back, " + load.failures.get() + " writes or flushes failed meanwhile "
                + "and were sent again; the removed peers' replica files gone");
    }
}
