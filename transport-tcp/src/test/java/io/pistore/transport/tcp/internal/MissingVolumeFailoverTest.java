package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.VolumeInfo;
import io.pistore.testkit.Eventually;
import io.pistore.transport.tcp.TcpConfig;
import java.io.IOException;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A host given a list of peers treats a peer without the volume it uses as a reason to move to
 * another: at connect (the volume named in the connect options), when the peer answers
 * NO_SUCH_VOLUME, and when it reconnects; bounded, once every peer of the list is without it. Three
 * real targets on loopback serve one shared memory volume; each can drop it (lists nothing and
 * answers NO_SUCH_VOLUME, as a peer whose replica was deleted).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MissingVolumeFailoverTest {
    /** A peer that may have dropped the volume. */
    static final class Peer implements TargetHandler {
        final MemoryHandler volume;
        volatile boolean gone;

        Peer(MemoryHandler volume) {
            this.volume = volume;
        }

        @Override
        public List<VolumeInfo> volumes() {
            return gone ? List.of() : volume.volumes();
        }

        @Override
        public void execute(BlockRequest r, io.pistore.spi.PiDuty checked, Consumer<Completion> done) {
            if (gone) {
                done.accept(Completion.failure(Status.NO_SUCH_VOLUME, "no such volume '" + r.volume() + "'"));
            } else {
                volume.execute(r, checked, done);
            }
        }
    }

    TcpTransport host;
    final TcpTransport[] targets = new TcpTransport[3];
    final Peer[] peers = new Peer[3];
    final String[] addresses = new String[3];
    final MemoryHandler shared = new MemoryHandler(ReconnectTest.F, 64);
    LogCapture log;

    @BeforeEach
    void setUp() throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.reconnectDelayMillis = 20;
        cfg.reconnectMaxDelayMillis = 200;
        cfg.connectTimeoutMillis = 2000;
        cfg.pathStates = false; // the answers move the host here; the path states case is its own test below
        host = new TcpTransport(cfg);
        log = new LogCapture();
        for (int i = 0; i < 3; i++) {
            peers[i] = new Peer(shared);
            targets[i] = new TcpTransport(TcpConfig.defaults());
            addresses[i] = targets[i].listen("127.0.0.1:0", peers[i]).address();
        }
    }

    @AfterEach
    void tearDown() {
        host.close();
        for (TcpTransport t : targets) {
            t.close();
        }
        log.close();
    }

    private String list() {
        return String.join(",", addresses);
    }

    private static String peerOf(HostQueue q) {
        return ((TcpReconnectingQueue) q).peer();
    }

    @Test
    void aPeerThatAnswersNoSuchVolumeIsLeftForTheNextThatHasIt() throws Exception {
        byte[] data = new byte[4096];
        new Random(5).nextBytes(data);
        try (HostConnection c = host.connect(list(), new ConnectOptions(2, 4))) {
            assertEquals(addresses[0], peerOf(c.queue(0)));
            assertEquals(Status.SUCCESS, ReconnectTest.write(c.queue(0), 7, data).status());
            peers[0].gone = true; // its replica deleted while the host is connected
            for (int q = 0; q < 2; q++) {
                Completion moving = ReconnectTest.read(c.queue(q), 7, new byte[4096]);
                assertEquals(Status.TRANSPORT_ERROR, moving.status(), moving.toString());
                assertTrue(moving.message().contains(addresses[0] + " has no volume v"), moving.message());
                byte[] back = new byte[4096];
                ReconnectTest.readUntilBack(c.queue(q), 7, back);
                assertArrayEquals(data, back, "queue " + q);
                assertEquals(addresses[1], peerOf(c.queue(q)), "queue " + q);
            }
            assertNotNull(log.awaitInfo(5000, "failed over from " + addresses[0] + " to " + addresses[1] + " (queue 0)",
                    ": " + addresses[0] + " has no volume v"), log.all().toString());
        }
    }

    @Test
    void withPathStatesAPeerThatLosesTheVolumeCostsTheHostNoError() throws Exception {
        byte[] data = new byte[4096];
        new Random(6).nextBytes(data);
        host.close();
        TcpConfig cfg = TcpConfig.defaults();
        cfg.reconnectDelayMillis = 20;
        cfg.reconnectMaxDelayMillis = 200;
        host = new TcpTransport(cfg); // path states on, the default
        try (HostConnection c = host.connect(list(), new ConnectOptions(2, 4))) {
            assertEquals(Status.SUCCESS, ReconnectTest.write(c.queue(0), 7, data).status());
            peers[0].gone = true;
            for (int q = 0; q < 2; q++) {
                byte[] back = new byte[4096];
                Completion r = ReconnectTest.read(c.queue(q), 7, back);
                assertEquals(Status.SUCCESS, r.status(), "queue " + q + ": " + r);
                assertArrayEquals(data, back, "queue " + q);
                assertNotEquals(addresses[0], peerOf(c.queue(q)), "queue " + q);
            }
        }
    }

    @Test
    void connectPassesOverAPeerWithoutTheNamedVolume() throws Exception {
        peers[0].gone = true;
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4).volume(MemoryHandler.VOLUME))) {
            assertEquals(addresses[1], peerOf(c.queue(0)));
            assertEquals(List.of(MemoryHandler.VOLUME), c.volumes().stream().map(VolumeInfo::name).toList());
            assertEquals(Status.SUCCESS, ReconnectTest.write(c.queue(0), 1, new byte[4096]).status());
            assertNotNull(log.awaitInfo(5000, "connected to " + addresses[1] + ", passing over " + addresses[0]
                    + ": no volume v there"), log.all().toString());
        }
        // without a name, the first peer that answers, as before
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4))) {
            assertEquals(addresses[0], peerOf(c.queue(0)));
            assertEquals(List.of(), c.volumes());
        }
    }

    @Test
    void connectUsesTheFirstPeerWhenNoneHasTheNamedVolume() throws Exception {
        for (Peer p : peers) {
            p.gone = true;
        }
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4).volume(MemoryHandler.VOLUME))) {
            assertEquals(addresses[0], peerOf(c.queue(0)));
            assertEquals(List.of(), c.volumes(), "the application then says there is no such volume, as before");
        }
    }

    @Test
    void onceEveryPeerIsWithoutTheVolumeTheHostGetsNoSuchVolume() throws Exception {
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4))) {
            HostQueue q = c.queue(0);
            assertEquals(Status.SUCCESS, ReconnectTest.write(q, 1, new byte[4096]).status());
            for (Peer p : peers) {
                p.gone = true; // deleted everywhere
            }
            AtomicInteger moves = new AtomicInteger();
            Completion r = Eventually.until("the queue to settle", () -> ReconnectTest.read(q, 1, new byte[4096]), x -> {
                if (x.status() != Status.TRANSPORT_ERROR) {
                    return true;
                }
                moves.incrementAndGet();
                return false;
            });
            assertEquals(Status.NO_SUCH_VOLUME, r.status(), r.toString());
            assertTrue(moves.get() >= 1, "it moved at least once");
            // settled: the next requests answer NO_SUCH_VOLUME at once, the queue no longer moves
            long reconnects = c.reconnects();
            for (int i = 0; i < 5; i++) {
                Completion again = ReconnectTest.read(q, 1, new byte[4096]);
                assertEquals(Status.NO_SUCH_VOLUME, again.status(), again.toString());
            }
            assertEquals(reconnects, c.reconnects());
            assertNotNull(log.awaitInfo(5000, "passed over", "it has no volume v"), log.all().toString());
        }
    }

    @Test
    void thePeersFoundWithoutTheVolumeAreForgottenOnceItAnswers() throws Exception {
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4))) {
            HostQueue q = c.queue(0);
            assertEquals(Status.SUCCESS, ReconnectTest.write(q, 2, new byte[4096]).status());
            peers[0].gone = true;
            ReconnectTest.readUntilBack(q, 2, new byte[4096]); // on the second peer, which answers: the first is forgotten
            assertEquals(addresses[1], peerOf(q));
            peers[0].gone = false; // the first has it again; the second and third lose it
            peers[1].gone = true;
            peers[2].gone = true;
            ReconnectTest.readUntilBack(q, 2, new byte[4096]);
            assertEquals(addresses[0], peerOf(q), "back to the first, not settled without the volume");
        }
    }

    @Test
    void oneAddressIsNotLeftOnNoSuchVolume() throws Exception {
        try (HostConnection c = host.connect(addresses[0], new ConnectOptions(1, 4))) {
            HostQueue q = c.queue(0);
            assertEquals(Status.SUCCESS, ReconnectTest.write(q, 3, new byte[4096]).status());
            peers[0].gone = true;
            Completion r = ReconnectTest.read(q, 3, new byte[4096]);
            assertEquals(Status.NO_SUCH_VOLUME, r.status(), r.toString());
            assertEquals(0, c.reconnects());
            assertEquals(addresses[0], peerOf(q));
        }
    }

    @Test
    void connectFailureStillNamesEachPeer() throws IOException {
        // unchanged by the volume name: no peer answering is one line naming each
        for (TcpTransport t : targets) {
            t.close();
        }
        try {
            host.connect(list(), new ConnectOptions(1, 4).volume(MemoryHandler.VOLUME)).close();
        } catch (IOException e) {
            assertTrue(e.getMessage().startsWith("cannot connect to any peer of tcp target " + list() + ": "
                    + addresses[0] + ": "), e.getMessage());
            return;
        }
        throw new AssertionError("connected to closed targets");
    }
}
