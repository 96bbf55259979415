package io.pistore.it.reliability;

import io.pistore.testkit.FreePorts;

import io.pistore.app.cli.Main;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.group.GroupStatus;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Three {@code pistore serve} processes holding replicated volume {@code rv} on loopback, with short
 * elections (600-1200 ms), a 1 s RPC timeout and a 10 s operation timeout, serving hosts over one
 * transport; and NBD gateways in front of them. Peers can be killed ({@code kill -9}), frozen and
 * thawed ({@code SIGSTOP}, {@code SIGCONT}) and restarted on the same ports and directories; the
 * test's fault classes share one cluster per class and {@link #restore} it between faults.
 */
final class FaultCluster implements AutoCloseable {
    static final String VOLUME = "rv";
    /** The peers' Ratis settings; the stall bound is stated against them. */
    static final List<String> FAST = List.of("-Dpistore.replication.election.ms=600",
            "-Dpistore.replication.rpc.ms=1000", "-Dpistore.replication.operation.ms=10000");
    /** The election timeout's upper end under {@link #FAST}. */
    static final long ELECTION_MAX_MS = 1200;

    private final Path dir;
    private final String transport;
    /** Peers 1-3, and a fourth that {@link #join}s and {@link #leave}s. */
    private final int[] hostPort = new int[5];
    private final int[] repl = new int[5];
    private final PistoreProcess[] servers = new PistoreProcess[5];
    private final List<PistoreProcess> gateways = new ArrayList<>();
    final String peers;
    final String targets;

    private FaultCluster(Path dir, String transport) throws Exception {
        this.dir = dir;
        this.transport = transport;
        StringBuilder p = new StringBuilder();
        StringBuilder t = new StringBuilder();
        for (int i = 1; i <= 3; i++) {
            hostPort[i] = FreePorts.next();
            repl[i] = FreePorts.next();
            p.append(i == 1 ? "" : ",").append("n").append(i).append("=127.0.0.1:").append(repl[i]);
            t.append(i == 1 ? "" : ",").append("127.0.0.1:").append(hostPort[i]);
        }
        peers = p.toString();
        targets = t.toString();
        hostPort[4] = FreePorts.next();
        repl[4] = FreePorts.next();
    }

    /**
     * Creates {@code rv} ({@code size}, 4096+8) on three peers serving hosts over {@code transport}, starts them, n2 leading.
     * A port taken between its pick and a peer's bind (by another test JVM's process) gets fresh ports and
     * a fresh directory, up to three times.
     */
    static FaultCluster start(Path dir, String transport, String size) throws Exception {
        for (int attempt = 1; ; attempt++) {
            Path d = attempt == 1 ? dir : java.nio.file.Files.createDirectories(dir.resolve("again-" + attempt));
            try {
                return startOnce(d, transport, size);
            } catch (IllegalStateException e) {
                if (attempt == 3 || e.getMessage() == null || !e.getMessage().contains("already in use")) {
                    throw e;
                }
                System.out.println("[reliability] " + e.getMessage() + "; again with other ports");
            }
        }
    }

    private static FaultCluster startOnce(Path dir, String transport, String size) throws Exception {
        FaultCluster c = new FaultCluster(dir, transport);
        try {
            for (int i = 1; i <= 3; i++) {
                cli("volume", "create", "--data", c.data(i), VOLUME, "--size", size, "--format", "4096+8",
                        "--replica-id", "n" + i, "--replicas", c.peers);
            }
            for (int i = 1; i <= 3; i++) {
                c.servers[i] = c.serve(i);
            }
            for (int i = 1; i <= 3; i++) {
                c.servers[i].awaitListening();
            }
            c.lead(2);
            return c;
        } catch (Exception | AssertionError e) {
            c.close();
            throw e;
        }
    }

    private String data(int i) {
        return dir.resolve("d" + i).toString();
    }

    private PistoreProcess serve(int i) throws IOException {
        return PistoreProcess.serve(FAST, "--data", data(i), "--transport", transport, "--listen",
                "127.0.0.1:" + hostPort[i], "--replica-id", "n" + i, "--replica-listen", "127.0.0.1:" + repl[i]);
    }

    /** The host address of peer {@code i}. */
    String address(int i) {
        return "127.0.0.1:" + hostPort[i];
    }

    /** The peer (1..3) whose host address is {@code address}. */
    int peerOf(String address) {
        for (int i = 1; i <= 3; i++) {
            if (address.equals(address(i))) {
                return i;
            }
        }
        throw new AssertionError("not a peer's host address: " + address);
    }

    /** The peers' host addresses starting with peer {@code first}, then the others in order. */
    String targetsFrom(int first) {
        StringBuilder b = new StringBuilder(address(first));
        for (int i = 1; i <= 3; i++) {
            if (i != first) {
                b.append(',').append(address(i));
            }
        }
        return b.toString();
    }

    /** An NBD gateway over this cluster's transport given {@code targets}, with {@code options} ({@code --transport-option}s); closed with the cluster. */
    PistoreProcess gateway(String targets, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("--nbd", "127.0.0.1:0", "--transport", transport, "--target",
                targets));
        for (String o : options) {
            args.addAll(List.of("--transport-option", o));
        }
        PistoreProcess g = PistoreProcess.serve(List.of(), args.toArray(new String[0]));
        gateways.add(g);
        return g;
    }

    static String cli(String... args) {
        StringWriter o = new StringWriter();
        int code = Main.run(new PrintWriter(o), new PrintWriter(o), args);
        if (code != 0) {
            throw new AssertionError(String.join(" ", args) + " -> " + code + ": " + o);
        }
        return o.toString();
    }

    /** Makes peer {@code i} the leader, tried again while the group elects (a hang guard of 120 s). */
    void lead(int i) {
        IOException[] last = new IOException[1];
        try {
            Eventually.await("the group to elect a leader and move it to n" + i, Duration.ofSeconds(120), () -> {
                try (ReplicatedVolume v = ReplicatedVolume.connect(VOLUME, peers, ReplicationSettings.defaults(),
                        line -> { })) {
                    v.transferLeadership("n" + i);
                    return true;
                } catch (IOException e) {
                    last[0] = e;
                    return false;
                }
            });
        } catch (AssertionError e) {
            if (last[0] != null) {
                e.addSuppressed(last[0]);
            }
            throw e;
        }
    }

    /** The peer (1..3) that leads now, waiting for one. */
    int leader() {
        int[] found = {0};
        Eventually.await("a leader of " + VOLUME, Duration.ofSeconds(120), () -> {
            GroupStatus.Member m = GroupStatus.of(VOLUME, peers, ReplicationSettings.defaults()).leader();
            found[0] = m == null ? 0 : Integer.parseInt(m.id.substring(1));
            return found[0] != 0;
        });
        return found[0];
    }

    /** kill -9 of peer {@code i}. */
    void kill(int i) throws InterruptedException {
        servers[i].kill();
    }

    /**
     * Starts peer {@code i} again (after {@link #kill}) on its ports and directory; returns once it
     * listens. A port of its still held (by what, the sockets on it say) is tried again for up to 30 s,
     * as an operator would: a peer cannot move to other ports without its group's consent.
     */
    void restart(int i) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            servers[i] = serve(i);
            try {
                servers[i].awaitListening();
                return;
            } catch (IllegalStateException e) {
                if (!String.valueOf(e.getMessage()).contains("already in use") || System.nanoTime() > end) {
                    throw e;
                }
                System.out.println("[reliability] n" + i + " restarting: " + e.getMessage() + "; sockets on its ports:\n"
                        + sockets(hostPort[i], repl[i]));
                TimeUnit.MILLISECONDS.sleep(500); // not a synchronisation: a pause between tries of a port held elsewhere
            }
        }
    }

    /** What {@code ss} lists on these local ports (state, peer, owning process), for a failure's cause. */
    private static String sockets(int... ports) {
        StringBuilder filter = new StringBuilder();
        for (int p : ports) {
            filter.append(filter.length() == 0 ? "( " : " or ").append("sport = :").append(p);
        }
        try {
            Process ss = new ProcessBuilder("ss", "-tanpe", filter + " )").redirectErrorStream(true).start();
            String out = new String(ss.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            ss.waitFor(5, TimeUnit.SECONDS);
            return out;
        } catch (IOException | InterruptedException e) {
            return "(ss: " + e + ")";
        }
    }

    /**
     * A membership change: a fourth {@code serve} process, with an empty data directory, joins the
     * group ({@code replicas add}, which returns once it caught up); the group has four members until
     * {@link #leave}.
     */
    void join() throws Exception {
        java.nio.file.Files.createDirectories(Path.of(data(4)));
        servers[4] = serve(4);
        servers[4].awaitListening();
        cli("replicas", "add", VOLUME, "--data", data(4), "--replicas", peers);
    }

    /** The fourth peer leaves the group ({@code replicas remove}, which deletes its replica) and its process stops. */
    void leave() throws InterruptedException {
        cli("replicas", "remove", VOLUME, "--peer", "n4", "--replicas", peers + ",n4=127.0.0.1:" + repl[4]);
        PistoreProcess.closeAll(servers[4]);
        servers[4] = null;
    }

    /** SIGSTOP ({@code true}) or SIGCONT of peer {@code i}. */
    void freeze(int i, boolean stop) {
        signal(servers[i].process.pid(), stop ? "STOP" : "CONT");
    }

    /**
     * After a fault: every peer runs (a killed one restarted, a frozen one continued), each has applied
     * all the leader had committed, and {@code leader} leads.
     */
    void restore(int leader) throws Exception {
        for (int i = 1; i <= 3; i++) {
            if (servers[i] == null || !servers[i].process.isAlive()) {
                restart(i);
            } else {
                freeze(i, false);
            }
        }
        awaitCaughtUp();
        if (leader() != leader) {
            lead(leader);
        }
    }

    /** Waits until a leader answers and every peer has applied all it had committed when the wait began. */
    void awaitCaughtUp() {
        long[] target = {-1};
        GroupStatus[] s = new GroupStatus[1];
        try {
            Eventually.await("peers to catch up", Duration.ofSeconds(120), () -> {
                s[0] = GroupStatus.of(VOLUME, peers, ReplicationSettings.defaults());
                if (s[0].leader() == null) {
                    return false;
                }
                if (target[0] < 0) { // fixed at the first reading: clients may go on writing meanwhile
                    target[0] = s[0].leader().committedIndex;
                }
                return s[0].members.stream().allMatch(m -> m.reachable() && m.appliedIndex >= target[0]);
            });
        } catch (AssertionError e) {
            throw new AssertionError("peers did not catch up to index " + target[0] + ":\n"
                    + (s[0] == null ? "" : String.join("\n", s[0].describe())), e);
        }
    }

    /** Scrubs every replica; asserts it finds no bad copy. */
    void scrubClean() {
        String o = cli("scrub", VOLUME, "--replicas", peers);
        if (!o.contains("no bad copies")) {
            throw new AssertionError("scrub: " + o);
        }
    }

    String output(int i) {
        return servers[i] == null ? "" : servers[i].output();
    }

    static void signal(long pid, String sig) {
        try {
            Process p = new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).inheritIO().start();
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (IOException e) {
            throw new AssertionError("kill -" + sig + " " + pid + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() throws InterruptedException {
        for (int i = 1; i <= 4; i++) {
            if (servers[i] != null && servers[i].process.isAlive()) {
                freeze(i, false);
            }
        }
        PistoreProcess.closeAll(gateways.toArray(new PistoreProcess[0]));
        PistoreProcess.closeAll(servers);
    }
}
