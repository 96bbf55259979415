package io.pistore.transport.rdma.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TransportOptions;
import io.pistore.spi.VolumeInfo;
import io.pistore.testkit.Eventually;
import io.pistore.transport.rdma.RdmaOptions;
import io.pistore.transport.rdma.verbs.soft.LocalWork;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The rdma host reconnects by itself, as the tcp host does: requests in flight on a lost connection
 * fail with TRANSPORT_ERROR, new ones fail at once while it reconnects, and the queue comes back on
 * the same address or, given a list, on the next peer, with one {@code failed over} line. The dead
 * connection's QP and memory regions are released: after many reconnects the host device holds as
 * many as after the first connect. Each test runs on the in-JVM fabric and on the packet path (the
 * host's device reaching the target over loopback sockets, as across processes).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaReconnectTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);

    /** A {@link MemoryTarget} that, while {@code hold} is set, keeps requests unanswered. */
    static final class HoldingTarget implements TargetHandler {
        final MemoryTarget memory = new MemoryTarget(F, 64);
        volatile boolean hold;
        final List<BlockRequest> held = new CopyOnWriteArrayList<>();

        @Override
        public List<VolumeInfo> volumes() {
            return memory.volumes();
        }

        @Override
        public void execute(BlockRequest r, io.pistore.spi.PiDuty duty, Consumer<Completion> done) {
            if (hold) {
                held.add(r);
                return;
            }
            memory.execute(r, duty, done);
        }
    }

    /** The rdma transport's log lines in this JVM. */
    static final class RdmaLog extends Handler implements AutoCloseable {
        final List<String> lines = new CopyOnWriteArrayList<>();
        private final Logger logger = Logger.getLogger("io.pistore.transport.rdma");

        RdmaLog() {
            logger.addHandler(this);
        }

        @Override
        public void publish(LogRecord r) {
            lines.add(r.getMessage());
        }

        long count(String what) {
            return lines.stream().filter(l -> l.contains(what)).count();
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }

    private static SoftDevice hostDevice(boolean packets) {
        return new SoftDevice(true, LocalWork.INLINE, packets);
    }

    /** Fast reconnects, without path states: the answers and losses move the host here ({@code RdmaPathStatesTest} follows them). */
    private static RdmaOptions fastReconnect() {
        return RdmaOptions.of(TransportOptions.of(Map.of("rdma.provider", "soft", "rdma.reconnectDelayMs", "10",
                "rdma.reconnectMaxDelayMs", "200", "rdma.pathStates", "false")));
    }

    private static CompletableFuture<Completion> write(RdmaHostConnection c, long lba, byte fill) {
        return write(c, 0, lba, fill);
    }

    private static CompletableFuture<Completion> write(RdmaHostConnection c, int queue, long lba, byte fill) {
        byte[] d = new byte[4096];
        Arrays.fill(d, fill);
        return c.queue(queue).submit(BlockRequest.write(MemoryTarget.VOLUME, lba, 1, ScatterList.wrap(d), null,
                Protection.insertStrip(lba), false));
    }

    /** Writes until one succeeds (the queue reconnects meanwhile); a hang guard, not a speed claim. */
    private static void writeUntilAcked(RdmaHostConnection c, long lba, byte fill) throws Exception {
        writeUntilAcked(c, 0, lba, fill);
    }

    private static void writeUntilAcked(RdmaHostConnection c, int queue, long lba, byte fill) throws Exception {
        Eventually.until("a write acknowledged after the reconnect", Duration.ofSeconds(60),
                () -> write(c, queue, lba, fill).get(30, TimeUnit.SECONDS), r -> {
                    if (r.isSuccess()) {
                        return true;
                    }
                    assertEquals(Status.TRANSPORT_ERROR, r.status(), r.toString());
                    return false;
                });
    }

    private static byte[] read(RdmaHostConnection c, long lba) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(4096);
        Completion r = c.queue(0).submit(BlockRequest.read(MemoryTarget.VOLUME, lba, 1, ScatterList.of(b), null,
                Protection.insertStrip(lba))).get(30, TimeUnit.SECONDS);
        assertTrue(r.isSuccess(), r.toString());
        return b.array();
    }

    @ParameterizedTest(name = "packets={0}")
    @ValueSource(booleans = {false, true})
    void aLostConnectionFailsWhatWasInFlightAndTheQueueReconnectsToTheSameAddress(boolean packets) throws Exception {
        SoftDevice hostDev = hostDevice(packets);
        SoftDevice targetDev = new SoftDevice(true);
        HoldingTarget backend = new HoldingTarget();
        RdmaTarget target = new RdmaTarget(targetDev, "127.0.0.1:0", backend, true);
        String address = target.address();
        try (RdmaLog log = new RdmaLog()) {
            RdmaHostConnection host = new RdmaHostConnection("soft", hostDev, fastReconnect(), address,
                    new ConnectOptions(1, 4));
            try {
                writeUntilAcked(host, 1, (byte) 1);
                backend.hold = true;
                CompletableFuture<Completion> inFlight = write(host, 2, (byte) 2);
                Eventually.await("the target to hold the write", () -> !backend.held.isEmpty());
                target.close(); // the target goes away with the write unanswered
                Completion lost = inFlight.get(30, TimeUnit.SECONDS);
                assertEquals(Status.TRANSPORT_ERROR, lost.status(), lost.toString());
                Completion meanwhile = write(host, 3, (byte) 3).get(30, TimeUnit.SECONDS);
                assertEquals(Status.TRANSPORT_ERROR, meanwhile.status(), meanwhile.toString());
                assertTrue(meanwhile.message().contains("reconnecting"), meanwhile.message());

                backend.hold = false;
                target = listenAgain(targetDev, address, backend); // the target is back, same address
                writeUntilAcked(host, 2, (byte) 2);
                assertEquals(1, host.reconnects());
                assertEquals(1, log.count("reconnected to " + address + " (queue 0)"), log.lines.toString());
                assertEquals(0, log.count("failed over"), log.lines.toString());
                byte[] want = new byte[4096];
                Arrays.fill(want, (byte) 2);
                assertArrayEquals(want, read(host, 2));
            } finally {
                host.close();
            }
        } finally {
            target.close();
        }
    }

    @ParameterizedTest(name = "packets={0}")
    @ValueSource(booleans = {false, true})
    void aHostGivenAListFailsOverToTheNextPeerRoundRobin(boolean packets) throws Exception {
        SoftDevice hostDev = hostDevice(packets);
        HoldingTarget[] backends = {new HoldingTarget(), new HoldingTarget(), new HoldingTarget()};
        RdmaTarget[] targets = new RdmaTarget[3];
        SoftDevice[] devs = new SoftDevice[3];
        for (int i = 0; i < 3; i++) {
            devs[i] = new SoftDevice(true);
            targets[i] = new RdmaTarget(devs[i], "127.0.0.1:0", backends[i], true);
        }
        String a = targets[0].address();
        String b = targets[1].address();
        String c = targets[2].address();
        try (RdmaLog log = new RdmaLog()) {
            RdmaHostConnection host = new RdmaHostConnection("soft", hostDev, fastReconnect(), a + "," + b + "," + c,
                    new ConnectOptions(2, 4));
            try {
                assertEquals(a, host.peerOf(0));
                assertEquals(a, host.peerOf(1));
                writeUntilAcked(host, 1, (byte) 1);
                assertEquals(1, backends[0].memory.requests.size());
                // each write carries its queue's fence: one stream, one epoch higher per connection
                io.pistore.spi.WriteFence f0 = backends[0].memory.requests.get(0).fence();
                assertEquals(1, f0.epoch());
                targets[0].close();
                writeUntilAcked(host, 2, (byte) 2);
                assertEquals(b, host.peerOf(0));
                assertTrue(log.count("failed over from " + a + " to " + b + " (queue 0)") == 1, log.lines.toString());
                assertEquals(1, backends[1].memory.requests.size(), "the write went to the next peer");
                io.pistore.spi.WriteFence f1 = backends[1].memory.requests.get(0).fence();
                assertEquals(new io.pistore.spi.WriteFence(f0.key(), 2), new io.pistore.spi.WriteFence(f1.key(), f1.epoch()));
                assertTrue(f0.seq() >= 1 && f1.seq() > f0.seq(), "each write numbered in the stream: " + f0 + ", " + f1);
                targets[1].close(); // then the next: round robin goes on to c
                writeUntilAcked(host, 3, (byte) 3);
                assertEquals(c, host.peerOf(0));
                assertEquals(1, log.count("failed over from " + b + " to " + c + " (queue 0)"), log.lines.toString());
                // queue 1 fails over on its own, the same way (idle, it may see a's loss only when b
                // is closing too, and go on to c at its next attempt)
                writeUntilAcked(host, 1, 4, (byte) 4);
                assertEquals(c, host.peerOf(1), log.lines.toString());
                assertEquals(2, backends[2].memory.requests.size(), "both queues' writes on c");
                io.pistore.spi.WriteFence f2 = backends[2].memory.requests.get(0).fence();
                assertEquals(new io.pistore.spi.WriteFence(f0.key(), 3, f2.seq()), f2);
                assertTrue(f2.seq() > f1.seq(), f2.toString());
                assertTrue(backends[2].memory.requests.get(1).fence().key() != f0.key(), "queue 1 is a stream of its own");
            } finally {
                host.close();
            }
        } finally {
            for (RdmaTarget t : targets) {
                t.close();
            }
        }
    }

    /**
     * A peer that stops answering without closing anything (its NIC acknowledges, its process hangs):
     * after {@code rdma.requestTimeoutMs} the request fails with one line, the connection is treated
     * as lost, and the queue fails over to the next peer of its list, where writes go on. The hung
     * peer never answers, so the write can only be acknowledged by the next one; the checks do not
     * count on the next peer answering within the timeout (a stall of the shared machine may time it
     * out too, and send the queue round the list once more).
     */
    @ParameterizedTest(name = "packets={0}")
    @ValueSource(booleans = {false, true})
    void aPeerThatStopsAnsweringIsLeftAfterTheRequestTimeoutAndTheHostFailsOver(boolean packets) throws Exception {
        SoftDevice hostDev = hostDevice(packets);
        HoldingTarget hung = new HoldingTarget();
        HoldingTarget next = new HoldingTarget();
        RdmaTarget a = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", hung, true);
        RdmaTarget b = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", next, true);
        RdmaOptions o = RdmaOptions.of(TransportOptions.of(Map.of("rdma.provider", "soft", "rdma.requestTimeoutMs",
                "1000", "rdma.reconnectDelayMs", "10", "rdma.reconnectMaxDelayMs", "200", "rdma.pathStates", "false")));
        try (RdmaLog log = new RdmaLog()) {
            RdmaHostConnection host = new RdmaHostConnection("soft", hostDev, o, a.address() + "," + b.address(),
                    new ConnectOptions(1, 4));
            try {
                writeUntilAcked(host, 1, (byte) 1);
                hung.hold = true; // a stays connected and never answers again
                Completion late = write(host, 2, (byte) 2).get(60, TimeUnit.SECONDS); // a hang guard, not a timing
                assertEquals(Status.TRANSPORT_ERROR, late.status(), late.toString());
                assertTrue(late.message().matches("no response to WRITE command 0x[0-9a-f]+ within 1000 ms"),
                        late.message());
                assertTrue(hung.held.size() >= 1, "the write reached a, which kept it");
                writeUntilAcked(host, 2, (byte) 2); // only b answers
                assertTrue(log.count("failed over from " + a.address() + " to " + b.address() + " (queue 0)") >= 1,
                        log.lines.toString());
                byte[] want = new byte[4096];
                Arrays.fill(want, (byte) 2);
                synchronized (next.memory) {
                    assertTrue(next.memory.requests.size() >= 1, "the write went to the next peer");
                    assertArrayEquals(want, Arrays.copyOfRange(next.memory.data, 2 * 4096, 3 * 4096),
                            "b holds the write");
                }
            } finally {
                host.close();
            }
        } finally {
            a.close();
            b.close();
        }
        assertEquals(0, hostDev.liveQps(), "the timed-out queue's QP is released");
    }

    @Test
    void theRequestTimeoutIsAnOptionWithTcpsDefault() {
        assertEquals(30_000, RdmaOptions.of(TransportOptions.NONE).requestTimeoutMillis());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RdmaOptions.of(TransportOptions.of(Map.of("rdma.requestTimeoutMs", "0"))));
        assertTrue(e.getMessage().contains("rdma.requestTimeoutMs") && !e.getMessage().contains("\n"), e.getMessage());
    }

    @Test
    void manyReconnectsLeakNoQpNorMemoryRegionNorThread() throws Exception {
        SoftDevice hostDev = hostDevice(true);
        SoftDevice targetDev = new SoftDevice(true);
        HoldingTarget backend = new HoldingTarget();
        RdmaTarget target = new RdmaTarget(targetDev, "127.0.0.1:0", backend, true);
        String address = target.address();
        int threadsBefore = pollerThreads();
        RdmaHostConnection host = new RdmaHostConnection("soft", hostDev, fastReconnect(), address,
                new ConnectOptions(2, 8));
        try {
            writeUntilAcked(host, 0, (byte) 9); // the integrity MR path, and queue 0's staging stays unused
            int qps = hostDev.liveQps();
            int regions = hostDev.liveRegions();
            assertEquals(2, qps);
            assertTrue(regions > 0);
            for (int round = 1; round <= 25; round++) {
                long before = host.reconnects();
                target.close();
                target = listenAgain(targetDev, address, backend);
                writeUntilAcked(host, round % 64, (byte) round);
                Eventually.await("both queues to reconnect in round " + round, Duration.ofSeconds(60),
                        () -> host.reconnects() >= before + 2);
                assertEquals(qps, hostDev.liveQps(), "QPs after reconnect " + round);
                assertEquals(regions, hostDev.liveRegions(), "memory regions after reconnect " + round);
            }
            assertEquals(threadsBefore + 2, pollerThreads(), "one poller thread per queue");
        } finally {
            host.close();
            target.close();
        }
        assertEquals(0, hostDev.liveQps());
        assertEquals(0, hostDev.liveRegions(), "every MR deregistered at close");
    }

    /**
     * A target on the address a closed one had. The packet listener's port may be held for a moment
     * by the closing connections' sockets, so binding is tried again for a while (a hang guard).
     */
    static RdmaTarget listenAgain(SoftDevice dev, String address, TargetHandler backend) throws Exception {
        return Eventually.until("the address " + address + " to be free again", () -> {
            try {
                return new RdmaTarget(dev, address, backend, true);
            } catch (IOException e) {
                if (!String.valueOf(e.getMessage()).contains("already in use")) {
                    throw e;
                }
                return null;
            }
        }, Objects::nonNull);
    }

    private static int pollerThreads() {
        return (int) Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && t.getName().startsWith("pistore-rdma-host-")).count();
    }

    @Test
    void withReconnectOffALostQueueStaysDown() throws Exception {
        SoftDevice hostDev = hostDevice(false);
        SoftDevice targetDev = new SoftDevice(true);
        HoldingTarget backend = new HoldingTarget();
        RdmaTarget target = new RdmaTarget(targetDev, "127.0.0.1:0", backend, true);
        String address = target.address();
        RdmaHostConnection host = new RdmaHostConnection("soft", hostDev,
                RdmaOptions.of(TransportOptions.of(Map.of("rdma.provider", "soft", "rdma.reconnect", "false"))), address, new ConnectOptions(1, 4));
        try {
            writeUntilAcked(host, 1, (byte) 1);
            target.close();
            target = listenAgain(targetDev, address, backend);
            // three first reconnect delays (100 ms by default): a host that reconnects would have done so
            Thread.sleep(300); // not a synchronisation: the time in which nothing may reconnect
            Completion r = write(host, 1, (byte) 1).get(30, TimeUnit.SECONDS);
            assertEquals(Status.TRANSPORT_ERROR, r.status(), r.toString());
            assertFalse(r.message().contains("reconnecting"), r.message());
            assertEquals(0, host.reconnects());
        } finally {
            host.close();
            target.close();
        }
    }

    @Test
    void aMalformedListIsRefusedInOneLineBeforeAnythingConnects() {
        SoftDevice hostDev = hostDevice(false);
        ConnectOptions o = new ConnectOptions(1, 4);
        IOException e = assertThrows(IOException.class, () -> new RdmaHostConnection("soft", hostDev, fastReconnect(),
                "127.0.0.1:1,", o));
        assertEquals("peer 2 of rdma target list '127.0.0.1:1,' is empty", e.getMessage());
        e = assertThrows(IOException.class, () -> new RdmaHostConnection("soft", hostDev, fastReconnect(),
                "127.0.0.1:1,127.0.0.1:1", o));
        assertEquals("peer 127.0.0.1:1 is listed twice in rdma target list '127.0.0.1:1,127.0.0.1:1'", e.getMessage());
        e = assertThrows(IOException.class, () -> new RdmaHostConnection("soft", hostDev, fastReconnect(),
                "127.0.0.1:1,localhost", o));
        assertEquals("peer 2 of rdma target list '127.0.0.1:1,localhost': an rdma address is HOST:PORT, not 'localhost'", e.getMessage());
        e = assertThrows(IOException.class, () -> new RdmaHostConnection("soft", hostDev, fastReconnect(),
                "localhost", o));
        assertEquals("an rdma address is HOST:PORT, not 'localhost'", e.getMessage(), "one address, the same rule");
        assertEquals(0, hostDev.liveRegions());
    }

    @Test
    void connectSkipsPeersThatAreDownAndNamesEachWhenNoneAnswers() throws Exception {
        SoftDevice hostDev = hostDevice(true);
        SoftDevice targetDev = new SoftDevice(true);
        RdmaTarget target = new RdmaTarget(targetDev, "127.0.0.1:0", new HoldingTarget(), true);
        String up = target.address();
        RdmaTarget gone = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", new HoldingTarget(), true);
        String down = gone.address();
        gone.close();
        try {
            RdmaHostConnection host = new RdmaHostConnection("soft", hostDev, fastReconnect(), down + "," + up,
                    new ConnectOptions(1, 4));
            try {
                assertEquals(up, host.peerOf(0));
                writeUntilAcked(host, 1, (byte) 1);
            } finally {
                host.close();
            }
        } finally {
            target.close();
        }
        IOException e = assertThrows(IOException.class, () -> new RdmaHostConnection("soft", hostDev, fastReconnect(),
                down + "," + up, new ConnectOptions(1, 4)));
        assertTrue(e.getMessage().startsWith("cannot connect to any peer of rdma target " + down + "," + up + ": "
                + down + ": "), e.getMessage());
        assertTrue(e.getMessage().contains("; " + up + ": "), e.getMessage());
        e = assertThrows(IOException.class, () -> new RdmaHostConnection("soft", hostDev, fastReconnect(), down,
                new ConnectOptions(1, 4)));
        assertTrue(e.getMessage().startsWith("cannot connect to rdma target " + down + ": "), e.getMessage());
        assertEquals(-1, e.getMessage().indexOf('\n'), e.getMessage());
        assertEquals(0, hostDev.liveQps());
        assertEquals(0, hostDev.liveRegions());
    }

    @Test
    void anInterruptedConnectStopsAtOnceAndLeavesNothingRegistered() throws Exception {
        SoftDevice hostDev = hostDevice(true);
        RdmaTarget a = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", new HoldingTarget(), true);
        RdmaTarget b = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", new HoldingTarget(), true);
        String list = a.address() + "," + b.address();
        try {
            Thread.currentThread().interrupt();
            InterruptedIOException e;
            try {
                e = assertThrows(InterruptedIOException.class,
                        () -> new RdmaHostConnection("soft", hostDev, fastReconnect(), list, new ConnectOptions(2, 4)));
            } finally {
                assertTrue(Thread.interrupted(), "the interrupt flag is set again for the caller");
            }
            assertEquals("cannot connect to rdma target " + list + ": interrupted", e.getMessage());
            assertEquals(0, hostDev.liveQps());
            assertEquals(0, hostDev.liveRegions());
            RdmaHostConnection host = new RdmaHostConnection("soft", hostDev, fastReconnect(), list,
                    new ConnectOptions(1, 4));
            try {
                assertEquals(a.address(), host.peerOf(0), "the device is still usable");
            } finally {
                host.close();
            }
        } finally {
            a.close();
            b.close();
        }
    }
}
