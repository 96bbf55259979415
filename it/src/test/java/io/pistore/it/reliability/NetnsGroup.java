package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.app.cli.Main;
import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.group.GroupStatus;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.testkit.Eventually;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Replicated volume {@code rv} on {@code serve} processes, peer {@code i} ({@code n1}, {@code n2},
 * ...) in network namespace {@code i} of a {@link NetnsLab}, each listening on its own address
 * (host tcp on port 4430, replication on 9870). The test's process reaches them through the lab's
 * bridge. {@link #close} stops every process it started, then removes the lab.
 */
final class NetnsGroup implements AutoCloseable {
    static final String VOLUME = "rv";
    static final int TCP_PORT = 4430;
    static final int REPLICA_PORT = 9870;

    private final Path dir;
    final NetnsLab lab;
    private final PistoreProcess[] servers;
    private final List<AutoCloseable> hosts = new ArrayList<>();
    private final long began = System.nanoTime();

    /** A lab of {@code peers} namespaces; the volume is created on peers 1..{@code members} (not started). */
    NetnsGroup(Path dir, int peers, int members, String size) {
        this.dir = dir;
        this.servers = new PistoreProcess[peers + 1];
        this.lab = NetnsLab.create(peers);
        try {
            for (int i = 1; i <= members; i++) {
                cli("volume", "create", "--data", data(i), VOLUME, "--size", size, "--format", "4096+8",
                        "--replica-id", "n" + i, "--replicas", peers(members));
            }
        } catch (RuntimeException e) {
            lab.close();
            throw e;
        }
    }

    /** A progress line with the seconds since the group was made, so a slow step shows in the test's output. */
    void log(String line) {
        System.out.printf("[netns %6.1f s] %s%n", (System.nanoTime() - began) / 1e9, line);
    }

    String data(int i) {
        return dir.resolve("d" + i).toString();
    }

    /** {@code n1=HOST:9870,...} for peers 1..{@code count}. */
    String peers(int count) {
        return peersOf(upTo(count));
    }

    /** {@code nI=HOST:9870,...} for the peers {@code ids}. */
    String peersOf(int... ids) {
        StringBuilder b = new StringBuilder();
        for (int i : ids) {
            b.append(b.length() == 0 ? "" : ",").append("n").append(i).append('=').append(lab.host(i)).append(':')
                    .append(REPLICA_PORT);
        }
        return b.toString();
    }

    /** 1..{@code n}. */
    static int[] upTo(int n) {
        return java.util.stream.IntStream.rangeClosed(1, n).toArray();
    }

    /** Runs a CLI command in this process; its output, or an assertion error with it when it did not exit 0. */
    static String cli(String... args) {
        StringWriter o = new StringWriter();
        int code = Main.run(new PrintWriter(o), new PrintWriter(o), args);
        if (code != 0) {
            throw new AssertionError(String.join(" ", args) + " -> " + code + ": " + o);
        }
        return o.toString();
    }

    /** Starts the serve of peers {@code 1..count}, each in its namespace, together; waits until all listen. */
    void start(int count) throws Exception {
        start(count, List.of());
    }

    /** {@link #start(int)} with these JVM options for each serve ({@code -Dpistore.replication...}). */
    void start(int count, List<String> jvmOptions) throws Exception {
        for (int i = 1; i <= count; i++) {
            Files.createDirectories(Path.of(data(i)));
            servers[i] = PistoreProcess.start(lab.exec(i), jvmOptions, "serve", "--data", data(i), "--transport",
                    "tcp", "--listen", lab.host(i) + ":" + TCP_PORT, "--replica-id", "n" + i, "--replica-listen",
                    lab.host(i) + ":" + REPLICA_PORT);
        }
        for (int i = 1; i <= count; i++) {
            servers[i].awaitListening();
            log("n" + i + " serves in namespace " + lab.exec(i).get(3) + " on " + lab.host(i));
        }
    }

    /** The host addresses of peers 1..{@code count}, for a host given every peer. */
    String targets(int count) {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= count; i++) {
            b.append(i == 1 ? "" : ",").append(lab.host(i)).append(':').append(TCP_PORT);
        }
        return b.toString();
    }

    /** Makes {@code id} the leader of the group of peers 1..{@code members}. */
    void lead(String id, int members) throws Exception {
        try (ReplicatedVolume v = ReplicatedVolume.connect(VOLUME, peers(members), ReplicationSettings.defaults(),
                line -> { })) {
            v.transferLeadership(id);
        }
    }

    /** A host's device on the volume through peer {@code i}'s serve (tcp); closed with the group. */
    BlockDevice device(int i) throws Exception {
        BlockTransport t = Transports.find("tcp").create();
        hosts.add(t);
        HostConnection c = t.connect(lab.host(i) + ":" + TCP_PORT, new ConnectOptions(1, 16));
        hosts.add(0, c);
        return BlockDevice.open(c, VOLUME);
    }

    GroupStatus status(int members) {
        return statusOf(upTo(members));
    }

    GroupStatus statusOf(int... ids) {
        return GroupStatus.of(VOLUME, peersOf(ids), ReplicationSettings.defaults());
    }

    /**
     * Waits until a leader answers and every one of peers 1..{@code members} has applied all the
     * leader committed when the wait began; fails with the group's status when not within 120 s.
     */
    void awaitCaughtUp(int members) {
        awaitCaughtUp(upTo(members));
    }

    /** {@link #awaitCaughtUp(int)} for the members {@code ids}. */
    void awaitCaughtUp(int... ids) {
        long[] target = {-1};
        GroupStatus[] s = new GroupStatus[1];
        try {
            Eventually.await("peers to catch up", Duration.ofSeconds(120), () -> {
                s[0] = statusOf(ids);
                if (s[0].leader() == null) {
                    return false;
                }
                if (target[0] < 0) {
                    target[0] = s[0].leader().committedIndex; // not the newest: under writes that never ends
                }
                return s[0].members.stream().allMatch(m -> m.reachable() && m.appliedIndex >= target[0]);
            });
        } catch (AssertionError e) {
            throw new AssertionError("peers did not catch up to index " + target[0] + " within 120 s:\n"
                    + (s[0] == null ? "" : String.join("\n", s[0].describe())), e);
        }
    }

    /**
     * The proof after a load (stopped): peers 1..{@code members} catch up, every block reads back a
     * version it may hold through peer {@code reader}, every replica scrubs clean, and once stopped
     * their data files are equal. Returns the scrub's summary.
     */
    String verifyEverywhere(AckedWriter w, int reader, int members) throws Exception {
        return verifyEverywhere(w, reader, upTo(members));
    }

    /** {@link #verifyEverywhere(AckedWriter, int, int)} for the members {@code ids}. */
    String verifyEverywhere(AckedWriter w, int reader, int... ids) throws Exception {
        w.rethrow();
        awaitCaughtUp(ids);
        int members = ids.length;
        log("all " + members + " peers caught up; " + w.acknowledged() + " writes acknowledged, " + w.failed()
                + " failed");
        List<String> problems = w.verify(device(reader));
        assertTrue(problems.isEmpty(), "acknowledged writes lost:\n" + String.join("\n", problems));
        log("every block read back through n" + reader);
        String scrub = scrubClean(ids);
        log(scrub);
        stopAndCompare(ids);
        log("stopped; the data files of the " + members + " peers are equal");
        return scrub;
    }

    /** Scrubs every replica of the peers {@code ids}; asserts exit 0 and no bad copy; the summary. */
    String scrubClean(int... ids) {
        StringWriter o = new StringWriter();
        int code = Main.run(new PrintWriter(o), new PrintWriter(o), "scrub", VOLUME, "--replicas", peersOf(ids));
        assertEquals(0, code, o.toString());
        assertTrue(o.toString().contains("no bad copies"), o.toString());
        return o.toString().trim();
    }

    /** Stops hosts and peers 1..{@code members} (SIGTERM: each flushes) and asserts their data files are equal. */
    void stopAndCompare(int members) throws Exception {
        stopAndCompare(upTo(members));
    }

    /** {@link #stopAndCompare(int)} for the peers {@code ids}. */
    void stopAndCompare(int... ids) throws Exception {
        closeHosts();
        PistoreProcess.stopAll(java.util.Arrays.stream(ids).mapToObj(i -> servers[i]).toArray(PistoreProcess[]::new));
        byte[] first = Files.readAllBytes(replicaData(ids[0]));
        for (int k = 1; k < ids.length; k++) {
            byte[] other = Files.readAllBytes(replicaData(ids[k]));
            assertArrayEquals(first, other, "n" + ids[0] + " and n" + ids[k] + " hold the same data");
        }
    }

    /** Peer {@code i}'s data file of the volume's replica. */
    Path replicaData(int i) {
        return Path.of(data(i), "replication", "replicas", VOLUME + ".data");
    }

    String output(int i) {
        return servers[i] == null ? "" : servers[i].output();
    }

    private void closeHosts() {
        for (AutoCloseable h : hosts) {
            try {
                h.close();
            } catch (Exception e) {
                // closing anyway
            }
        }
        hosts.clear();
    }

    @Override
    public void close() throws Exception {
        closeHosts();
        try {
            PistoreProcess.closeAll(servers);
        } finally {
            lab.close();
        }
    }
}
