package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * No client sees an error when one peer of three fails, whatever it is doing: one cluster of three
 * {@code serve} processes (tcp; n2 leads before each fault) with, at once, a tcp host following path
 * states (reads, writes, write-zeroes, flushes; on the leader), and an NBD gateway given every peer
 * with fio (writes with crc32c verify read back as it goes, an fsync every 8 writes, trims) and
 * nbdcopy (an image with holes, sent as write-zeroes, written right after the fault and read back).
 * One test per failure kind: kill -9 of the leader (the peer both clients use), of a follower, of the
 * follower a gateway without path states uses; SIGSTOP of the leader and of a follower for 5 s. Each
 * asserts no request failed, every acknowledged write reads back, and the stall (from the fault to
 * the completion of each request waiting across it) within {@link #STALL_BOUND_MS}.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PeerFaultMatrixTest {
    /** The election timeout's upper end plus the margin a host needs to find and reach the new leader. */
    static final long STALL_BOUND_MS = FaultCluster.ELECTION_MAX_MS + 6000;
    private static final long FREEZE_MS = 5000;

    @TempDir
    static Path dir;

    private static FaultCluster cluster;
    private static String uri;
    private static BlockTransport transport;
    private static HostConnection connection;
    private static BlockDevice host;
    private static BlockTransport followerTransport;
    private static HostConnection followerConnection;
    private static BlockDevice followerHost;

    @BeforeAll
    static void start() throws Exception {
        NbdFaultLoad.assumeTools();
        cluster = FaultCluster.start(dir, "tcp", "32MiB");
        uri = "nbd://" + cluster.gateway(cluster.targets).awaitNbdListening() + "/" + FaultCluster.VOLUME;
        transport = Transports.find("tcp").create();
        connection = transport.connect(cluster.targets, new ConnectOptions(1, 8));
        host = BlockDevice.open(connection, FaultCluster.VOLUME);
        followerTransport = Transports.find("tcp").create(io.pistore.spi.TransportOptions.of(
                java.util.Map.of("tcp.pathStates", "false")));
        followerConnection = followerTransport.connect(cluster.targetsFrom(1), new ConnectOptions(1, 8));
        followerHost = BlockDevice.open(followerConnection, FaultCluster.VOLUME);
    }

    @AfterAll
    static void stop() throws Exception {
        if (connection != null) {
            connection.close();
        }
        if (followerConnection != null) {
            followerConnection.close();
        }
        if (followerTransport != null) {
            followerTransport.close();
        }
        if (transport != null) {
            transport.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    @Order(1)
    void aFollowerFrozenForFiveSeconds() throws Exception {
        fault(3, "SIGSTOP follower", uri);
    }

    @Test
    @Order(2)
    void theLeaderFrozenForFiveSeconds() throws Exception {
        fault(2, "SIGSTOP leader", uri);
    }

    @Test
    @Order(3)
    void aFollowerKilled() throws Exception {
        fault(3, "kill -9 follower", uri);
    }

    @Test
    @Order(4)
    void theLeaderTheClientsUseKilled() throws Exception {
        fault(2, "kill -9 leader", uri);
    }

    /** A gateway without path states stays on the first peer of its list, a follower: that peer is killed. */
    @Test
    @Order(5)
    void theFollowerAGatewayUsesKilled() throws Exception {
        String onFollower = "nbd://" + cluster.gateway(cluster.targetsFrom(1), "tcp.pathStates=false")
                .awaitNbdListening() + "/" + FaultCluster.VOLUME;
        fault(1, "kill -9 the gateway's follower", onFollower);
    }

    /**
     * With n2 leading: the clients run, peer {@code victim} fails ({@code what} says how), the
     * clients run on until the fault is over and then some; nothing fails, everything verifies.
     */
    private void fault(int victim, String what, String fioUri) throws Exception {
        assertEquals(2, cluster.leader(), "n2 leads before the fault");
        boolean freeze = what.startsWith("SIGSTOP");
        long seed = what.hashCode();
        assertNull(NbdFaultLoad.copyAndReadBack(uri, dir, seed, false), "nbdcopy before the fault");
        NbdFaultLoad.Fio fio = new NbdFaultLoad.Fio(fioUri, dir, (int) ((freeze ? FREEZE_MS : 0) / 1000) + 8,
                Integer.toHexString(what.hashCode()));
        MixedClient tcp = new MixedClient("tcp host", host, 256, 64, 2, seed).start();
        // a host without path states stays on n1, a follower, forwarding; not run when n1 is the victim
        // (its requests in flight there would fail with a transport error: it does not send them again)
        MixedClient onFollower = victim == 1 ? null
                : new MixedClient("tcp host on a follower", followerHost, 320, 64, 2, seed + 7).start();
        NbdFaultLoad.Result f;
        long faultAt;
        String copied;
        try {
            tcp.awaitMore(40);
            faultAt = System.nanoTime();
            if (freeze) {
                cluster.freeze(victim, true);
            } else {
                cluster.kill(victim);
            }
            CompletableFuture<String> copy = CompletableFuture.supplyAsync(() -> {
                try {
                    return NbdFaultLoad.copyAndReadBack(uri, dir, seed + 1, true);
                } catch (Exception e) {
                    return e.toString();
                }
            });
            if (freeze) {
                Thread.sleep(FREEZE_MS); // the fault's length, not a synchronisation
                cluster.freeze(victim, false);
            }
            tcp.awaitMore(40);
            if (onFollower != null) {
                onFollower.awaitMore(20);
            }
            copied = copy.get(180, TimeUnit.SECONDS);
            f = fio.finish();
        } finally {
            tcp.stopAndVerify();
            if (onFollower != null) {
                onFollower.stopAndVerify();
            }
        }
        long stall = tcp.stallMillisAfter(faultAt);
        String figures = what + ": tcp host " + tcp.counts() + ", longest " + stall + " ms after the fault; " + f;
        if (onFollower != null) {
            long s = onFollower.stallMillisAfter(faultAt);
            figures += "; tcp host on n1 " + onFollower.counts() + ", longest " + s + " ms";
            stall = Math.max(stall, s);
            assertEquals(List.of(), onFollower.errors, what);
        }
        System.out.println("peer fault matrix: " + figures);
        assertEquals(List.of(), tcp.errors, what);
        assertNull(copied, what + ": nbdcopy of an image with holes right after the fault");
        assertTrue(stall <= STALL_BOUND_MS, what + ": the tcp host stalled " + stall + " ms");
        assertTrue(f.longestMillis() <= STALL_BOUND_MS, what + ": " + f);
        Figures.record("one peer fails, every client (" + what + ")", "3 serve processes (tcp), election 300-600 ms; a "
                + "tcp host and an NBD gateway (fio, nbdcopy) running: no error, all verified; " + figures);
        cluster.restore(2);
    }
}
