package io.pistore.transport.rdma.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.PathState;
import io.pistore.spi.Status;
import io.pistore.spi.TransportOptions;
import io.pistore.testkit.Eventually;
import io.pistore.testkit.PathStatePeer;
import io.pistore.testkit.RoundTripWriter;
import io.pistore.transport.rdma.RdmaOptions;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Path states over rdma (the soft NIC, in one process): three targets serve one shared memory volume,
 * as a replicated volume's peers do, and the test says which one leads (optimized; the others
 * non-optimized). A host given the list watches every peer (a held PATH_STATES capsule each) and
 * sends its I/O to the leader, moving when the leader changes or dies, while writers on every queue
 * check that no request fails and every read returns what was written.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaPathStatesTest {
    final RdmaTarget[] targets = new RdmaTarget[3];
    final String[] addresses = new String[3];
    final MemoryTarget shared = new MemoryTarget(RdmaReconnectTest.F, 64);
    final AtomicInteger leader = new AtomicInteger(1);

    @BeforeEach
    void setUp() throws Exception {
        start(true);
    }

    private void start(boolean pathStates) throws Exception {
        for (int i = 0; i < 3; i++) {
            targets[i] = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", new PathStatePeer(shared, i, leader), true, 0,
                    pathStates);
            addresses[i] = targets[i].address();
        }
    }

    @AfterEach
    void tearDown() {
        for (RdmaTarget t : targets) {
            if (t != null) {
                t.close();
            }
        }
    }

    private static RdmaOptions options() {
        return RdmaOptions.of(TransportOptions.of(Map.of("rdma.provider", "soft", "rdma.reconnectDelayMs", "20",
                "rdma.reconnectMaxDelayMs", "200")));
    }

    private RdmaHostConnection connect(String address, int queues) throws Exception {
        return new RdmaHostConnection("soft", new SoftDevice(true), options(), address, new ConnectOptions(queues, 4));
    }

    private static Completion write(RdmaHostConnection c, int q, long lba, byte[] data) throws Exception {
        return RoundTripWriter.write(c.queue(q), MemoryTarget.VOLUME, lba, data);
    }

    private static Completion read(RdmaHostConnection c, int q, long lba, byte[] into) throws Exception {
        return RoundTripWriter.read(c.queue(q), MemoryTarget.VOLUME, lba, into);
    }

    private static void awaitPeer(RdmaHostConnection c, String what, String address) {
        for (int q = 0; q < c.queueCount(); q++) {
            int queue = q;
            Eventually.await("queue " + q + " on " + what + " " + address + " (paths " + c.peerPaths() + ")",
                    () -> address.equals(c.peerOf(queue)));
        }
    }

    @Test
    void theHostSendsItsIoToTheLeaderAndFollowsItWithoutAnError() throws Exception {
        try (RdmaHostConnection c = connect(String.join(",", addresses), 2)) {
            assertEquals(addresses[0], c.peerOf(0), "the first peer that answers");
            RoundTripWriter w = new RoundTripWriter(c, MemoryTarget.VOLUME, 4096, 32);
            try {
                awaitPeer(c, "the leader", addresses[1]);
                w.roundTrips(20);
                leader.set(2); // a leadership transfer
                awaitPeer(c, "the new leader", addresses[2]);
                w.roundTrips(20);
                leader.set(0); // the leader dies; another is elected
                targets[2].close();
                targets[2] = null;
                awaitPeer(c, "the leader after the kill", addresses[0]);
                w.roundTrips(20);
            } finally {
                w.close();
            }
            assertEquals(List.of(), w.failures(), "no request failed");
            assertTrue(c.moves() >= 4, "moves " + c.moves());
            assertEquals(PathState.OPTIMIZED, c.peerPaths().state(0, MemoryTarget.VOLUME));
            Eventually.await("the killed peer unreachable", () -> c.peerPaths().isUnreachable(2));
            assertEquals(PathState.INACCESSIBLE, c.peerPaths().state(2, MemoryTarget.VOLUME));
        }
    }

    @Test
    void withoutALeaderTheHostStaysWhereItIs() throws Exception {
        leader.set(PathStatePeer.NO_LEADER);
        try (RdmaHostConnection c = connect(String.join(",", addresses), 1)) {
            for (int p = 0; p < 3; p++) {
                int peer = p;
                Eventually.await("peer " + p + " reported", () -> c.peerPaths().state(peer, MemoryTarget.VOLUME) != null);
                assertEquals(PathState.INACCESSIBLE, c.peerPaths().state(p, MemoryTarget.VOLUME));
            }
            assertEquals(Status.SUCCESS, write(c, 0, 3, new byte[4096]).status());
            assertEquals(addresses[0], c.peerOf(0));
            assertEquals(0, c.moves());
        }
    }

    @Test
    void oneAddressIsNotWatched() throws Exception {
        try (RdmaHostConnection c = connect(addresses[0], 1)) {
            assertNull(c.peerPaths());
            assertEquals(Status.SUCCESS, write(c, 0, 3, new byte[4096]).status());
        }
    }

    @Test
    void peersThatDoNotReportPathStatesAreUsedAsBefore() throws Exception {
        tearDown();
        start(false); // as a pistore without them: PATH_STATES is an unknown opcode there
        try (RdmaHostConnection c = connect(String.join(",", addresses), 1)) {
            byte[] data = new byte[4096];
            new Random(3).nextBytes(data);
            assertEquals(Status.SUCCESS, write(c, 0, 4, data).status());
            byte[] back = new byte[4096];
            assertEquals(Status.SUCCESS, read(c, 0, 4, back).status());
            assertArrayEquals(data, back);
            assertEquals(addresses[0], c.peerOf(0), "no state, no move");
            assertNull(c.peerPaths().state(1, MemoryTarget.VOLUME), "peer 1 said nothing");
            assertTrue(!c.peerPaths().isUnreachable(1), "nor is it unreachable");
        }
    }
}
