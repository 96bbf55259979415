package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.PathState;
import io.pistore.spi.Status;
import io.pistore.testkit.Eventually;
import io.pistore.testkit.PathStatePeer;
import io.pistore.testkit.RoundTripWriter;
import io.pistore.transport.tcp.TcpConfig;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Path states over tcp: three real targets on loopback serve one shared memory volume, as a
 * replicated volume's peers do, and the test says which one leads (optimized; the others
 * non-optimized). A host given the list watches every peer and sends its I/O to the leader, moving
 * when the leader changes or dies, while a writer checks that no request fails and every read
 * returns what was written.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class PathStatesTest {
    TcpTransport host;
    final TcpTransport[] targets = new TcpTransport[3];
    final String[] addresses = new String[3];
    final MemoryHandler shared = new MemoryHandler(ReconnectTest.F, 64);
    final AtomicInteger leader = new AtomicInteger(1);
    LogCapture log;

    @BeforeEach
    void setUp() throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.reconnectDelayMillis = 20;
        cfg.reconnectMaxDelayMillis = 200;
        host = new TcpTransport(cfg);
        log = new LogCapture();
        for (int i = 0; i < 3; i++) {
            targets[i] = new TcpTransport(TcpConfig.defaults());
            addresses[i] = targets[i].listen("127.0.0.1:0", new PathStatePeer(shared, i, leader)).address();
        }
    }

    @AfterEach
    void tearDown() {
        host.close();
        for (TcpTransport t : targets) {
            if (t != null) {
                t.close();
            }
        }
        log.close();
    }

    private String list() {
        return String.join(",", addresses);
    }

    private static String peerOf(HostConnection c, int q) {
        return ((TcpReconnectingQueue) c.queue(q)).peer();
    }

    @Test
    void theHostSendsItsIoToTheLeaderAndFollowsItWithoutAnError() throws Exception {
        try (HostConnection c = host.connect(list(), new ConnectOptions(2, 4))) {
            assertEquals(addresses[0], peerOf(c, 0), "the first peer that answers");
            RoundTripWriter w = new RoundTripWriter(c, MemoryHandler.VOLUME, 4096, 32);
            try {
                for (int q = 0; q < 2; q++) {
                    int queue = q;
                    Eventually.await("queue " + q + " on the leader", () -> addresses[1].equals(peerOf(c, queue)));
                }
                assertNotNull(log.awaitInfo(5000, "moved from " + addresses[0] + " to " + addresses[1] + " (queue 0)",
                        addresses[1] + " is optimized for v", "is non-optimized"), log.all().toString());
                w.roundTrips(20);
                leader.set(2); // a leadership transfer
                for (int q = 0; q < 2; q++) {
                    int queue = q;
                    Eventually.await("queue " + q + " on the new leader", () -> addresses[2].equals(peerOf(c, queue)));
                }
                w.roundTrips(20);
                leader.set(0); // the leader dies; another is elected
                targets[2].close();
                targets[2] = null;
                for (int q = 0; q < 2; q++) {
                    int queue = q;
                    Eventually.await("queue " + q + " on the leader after the kill",
                            () -> addresses[0].equals(peerOf(c, queue)));
                }
                w.roundTrips(20);
            } finally {
                w.close();
            }
            assertEquals(List.of(), w.failures(), "no request failed");
            assertTrue(((TcpHostConnection) c).moves() >= 4, "moves " + ((TcpHostConnection) c).moves());
            assertEquals(PathState.OPTIMIZED, ((TcpHostConnection) c).paths().state(0, MemoryHandler.VOLUME));
            assertEquals(PathState.INACCESSIBLE, ((TcpHostConnection) c).paths().state(2, MemoryHandler.VOLUME));
        }
    }

    @Test
    void withoutALeaderTheHostStaysWhereItIs() throws Exception {
        leader.set(PathStatePeer.NO_LEADER);
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4))) {
            TcpHostConnection t = (TcpHostConnection) c;
            for (int p = 0; p < 3; p++) {
                int peer = p;
                Eventually.await("peer " + p + " reported", () -> t.paths().state(peer, MemoryHandler.VOLUME) != null);
                assertEquals(PathState.INACCESSIBLE, t.paths().state(p, MemoryHandler.VOLUME));
            }
            assertEquals(Status.SUCCESS, ReconnectTest.write(c.queue(0), 3, new byte[4096]).status());
            assertEquals(addresses[0], peerOf(c, 0));
            assertEquals(0, t.moves());
        }
    }

    @Test
    void oneAddressIsNotWatched() throws Exception {
        try (HostConnection c = host.connect(addresses[0], new ConnectOptions(1, 4))) {
            assertNull(((TcpHostConnection) c).paths());
            assertEquals(Status.SUCCESS, ReconnectTest.write(c.queue(0), 3, new byte[4096]).status());
        }
    }

    @Test
    void peersThatDoNotReportPathStatesAreUsedAsBefore() throws Exception {
        for (int i = 0; i < 3; i++) {
            targets[i].close();
            TcpConfig old = TcpConfig.defaults();
            old.pathStates = false; // as a pistore without them: the feature is not granted
            targets[i] = new TcpTransport(old);
            addresses[i] = targets[i].listen("127.0.0.1:0", new PathStatePeer(shared, i, leader)).address();
        }
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4))) {
            byte[] data = new byte[4096];
            new Random(3).nextBytes(data);
            assertEquals(Status.SUCCESS, ReconnectTest.write(c.queue(0), 4, data).status());
            byte[] back = new byte[4096];
            assertEquals(Status.SUCCESS, ReconnectTest.read(c.queue(0), 4, back).status());
            assertArrayEquals(data, back);
            assertEquals(addresses[0], peerOf(c, 0), "no state, no move");
            assertNull(((TcpHostConnection) c).paths().state(1, MemoryHandler.VOLUME), "peer 1 said nothing");
        }
    }
}
