package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.ReconnectingHostQueue;
import io.pistore.spi.TransportOptions;
import io.pistore.testkit.Eventually;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * No client sees an error when one peer of three fails, whatever it is doing: one cluster of three
 * {@code serve} processes per class (n2 leads before each fault) serving hosts over one transport,
 * with, at once, the transport's hosts (reads, writes, write-zeroes, flushes; none sent again by the
 * test; their first requests after the fault read every block) and an NBD gateway given every peer
 * with fio (writes with crc32c verify read back as it goes, an fsync every 8 writes, trims) and
 * nbdcopy (right after the fault reading back the image it wrote before it, then an image with holes,
 * sent as write-zeroes, written and read back). One test per failure kind: SIGSTOP of a follower and
 * of the leader for 5 s, kill -9 of a follower, of the leader, and of n1 (a follower a client without
 * path states is attached to). Each asserts that no request failed, every acknowledged write reads
 * back, and the stall (from the fault to the completion of each request waiting across it) is within
 * {@link #STALL_BOUND_MS}. The hosts: one following path states (checked to be on the leader before
 * each fault), one without them on n1; the gateway follows path states, or is without them on n1
 * when n1 is the victim.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class PeerFaultMatrix {
    /**
     * The election timeout's upper end plus the margin a host needs to find and reach the new leader
     * (a path-state watch finds a silent peer within 3 s, a left connection drains for 2 s, then the
     * resend; the rest is slack for a loaded machine): below the 10 s operation timeout, at which a
     * request that waited instead of moving on would fail.
     */
    static final long STALL_BOUND_MS = FaultCluster.ELECTION_MAX_MS + 7000;

    /** The class's directory (one cluster per class). */
    Path dir;

    FaultCluster cluster;
    private final Map<String, String> gateways = new HashMap<>();
    private final List<AutoCloseable> hosts = new java.util.ArrayList<>();

    /** The transport the peers serve hosts on. */
    abstract String transport();

    private HostConnection followingConnection;
    private BlockDevice following;
    private BlockDevice onN1;

    /**
     * The hosts that run through a fault of peer {@code victim}, each on its own 64 blocks from
     * {@code lba}: one following path states (so on the leader: the leader's fault is of the peer it
     * uses), one without them on n1 (a follower, forwarding; left out when n1 is the victim, as it
     * does not send again what its lost connection failed).
     */
    private List<MixedClient> clients(int victim, long lba, long seed) throws Exception {
        if (following == null) {
            followingConnection = connect(cluster.targets, Map.of());
            following = BlockDevice.open(followingConnection, FaultCluster.VOLUME);
            onN1 = BlockDevice.open(connect(cluster.targetsFrom(1), Map.of(transport() + ".pathStates", "false")),
                    FaultCluster.VOLUME);
        }
        // the host following path states is on the leader, so a fault of the leader is of its own peer
        ReconnectingHostQueue<?> q = assertInstanceOf(ReconnectingHostQueue.class, followingConnection.queue(0));
        Eventually.await("the host following path states on the leader " + cluster.address(2) + " (it uses "
                + q.peer() + ")", Duration.ofSeconds(60), () -> q.peer().equals(cluster.address(2)));
        List<MixedClient> c = new java.util.ArrayList<>();
        c.add(new MixedClient(transport() + " host (path states)", following, lba, 64, 2, seed));
        if (victim != 1) {
            c.add(new MixedClient(transport() + " host on n1", onN1, lba + 64, 64, 2, seed + 7));
        }
        return c;
    }

    /** The gateway's peer list and options: following path states, or without them on n1 when n1 is the victim. */
    private String[] gatewayFor(int victim) {
        return victim == 1 ? new String[] {cluster.targetsFrom(1), transport() + ".pathStates=false"}
                : new String[] {cluster.targets};
    }

    @BeforeAll
    void startCluster(@TempDir Path classDir) throws Exception {
        dir = classDir;
        NbdFaultLoad.assumeTools();
        cluster = FaultCluster.start(dir, transport(), NbdFaultLoad.VOLUME_SIZE);
    }

    @AfterAll
    void stopCluster() throws Exception {
        for (AutoCloseable h : hosts) {
            h.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** A host's connection over this class's transport with {@code options}, given {@code targets}; closed after the class. */
    private HostConnection connect(String targets, Map<String, String> options) throws Exception {
        BlockTransport t = Transports.find(transport()).create(TransportOptions.of(options));
        hosts.add(0, t);
        HostConnection c = t.connect(targets, new ConnectOptions(1, 8));
        hosts.add(0, c);
        return c;
    }

    /** The NBD URI of a gateway given {@code spec} (peer list, then transport options), started once. */
    private String gateway(String[] spec) throws Exception {
        String key = String.join(" ", spec);
        String uri = gateways.get(key);
        if (uri == null) {
            uri = "nbd://" + cluster.gateway(spec[0], java.util.Arrays.copyOfRange(spec, 1, spec.length))
                    .awaitNbdListening() + "/" + FaultCluster.VOLUME;
            gateways.put(key, uri);
        }
        return uri;
    }

    @Test
    @Order(1)
    void aFollowerFrozenForFiveSeconds() throws Exception {
        fault(3, "SIGSTOP follower");
    }

    @Test
    @Order(2)
    void theLeaderFrozenForFiveSeconds() throws Exception {
        fault(2, "SIGSTOP leader");
    }

    @Test
    @Order(3)
    void aFollowerKilled() throws Exception {
        fault(3, "kill -9 follower");
    }

    @Test
    @Order(4)
    void theLeaderKilled() throws Exception {
        fault(2, "kill -9 leader");
    }

    @Test
    @Order(5)
    void theFollowerAClientUsesKilled() throws Exception {
        fault(1, "kill -9 n1");
    }

    /**
     * With n2 leading: the clients run, peer {@code victim} fails ({@code what} says how), the
     * clients run on until the fault is over and then some; nothing fails, everything verifies.
     */
    private void fault(int victim, String what) throws Exception {
        // the previous fault's victim runs again and has caught up, and n2 leads (an election on a
        // loaded machine may have moved it); the last fault's victim is left down for the class's end
        try {
            cluster.restore(2);
        } catch (AssertionError | IllegalStateException e) {
            printPeers();
            throw e;
        }
        boolean freeze = what.startsWith("SIGSTOP");
        String figures;
        try {
            figures = FaultRound.run(dir, what + ", " + transport(), gateway(gatewayFor(victim)),
                    clients(victim, 256, what.hashCode()), freeze, new FaultRound.Fault() {
                        @Override
                        public void begin() throws Exception {
                            if (freeze) {
                                cluster.freeze(victim, true);
                            } else {
                                cluster.kill(victim);
                            }
                        }
    
                        @Override
                        public void end() {
                            cluster.freeze(victim, false);
                        }
                    }, STALL_BOUND_MS);
        } catch (AssertionError e) {
            printPeers();
            throw e;
        }
        Figures.record("one peer fails, every client (" + what + ", " + transport() + ")", "3 serve processes, election "
                + "600-1200 ms; hosts and an NBD gateway (fio, nbdcopy) running: no error, all verified; " + figures);
    }

    /** What the peers said (the last 60 lines of each), for a failure's cause. */
    private void printPeers() {
        for (int i = 1; i <= 3; i++) {
            List<String> lines = List.of(cluster.output(i).split("\n"));
            System.out.println("n" + i + " said (last 60 lines):\n  "
                    + String.join("\n  ", lines.subList(Math.max(0, lines.size() - 60), lines.size())));
        }
    }
}
