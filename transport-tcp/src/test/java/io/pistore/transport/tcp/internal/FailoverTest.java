package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.transport.tcp.TcpConfig;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ServerSocket;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A host given a list of peers ({@code HOST:PORT,HOST:PORT,...}) connects to the first that answers
 * and, when the peer it uses goes away, reconnects to the next one of the list, round robin. The
 * peers here are three targets serving one shared memory volume, as the peers of a replicated volume
 * serve the same data.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FailoverTest {
    TcpTransport host;
    final TcpTransport[] targets = new TcpTransport[3];
    final String[] addresses = new String[3];
    final MemoryHandler shared = new MemoryHandler(ReconnectTest.F, 64);
    LogCapture log;

    @BeforeEach
    void setUp() throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.reconnectDelayMillis = 20;
        cfg.reconnectMaxDelayMillis = 200;
        cfg.connectTimeoutMillis = 2000;
        // the round robin of a host without path states (an rdma host's too); PathStatesTest follows them
        cfg.pathStates = false;
        host = new TcpTransport(cfg);
        log = new LogCapture();
        for (int i = 0; i < 3; i++) {
            addresses[i] = start(i, "127.0.0.1:0");
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

    private String start(int i, String address) throws IOException {
        targets[i] = new TcpTransport(TcpConfig.defaults());
        TargetListener l = targets[i].listen(address, shared);
        return l.address();
    }

    private void stop(int i) {
        targets[i].close();
        targets[i] = null;
    }

    private String list() {
        return String.join(",", addresses);
    }

    @Test
    void theHostFailsOverToTheNextPeerWhenItsPeerDies() throws Exception {
        byte[] data = new byte[4096];
        new Random(11).nextBytes(data);
        try (HostConnection c = host.connect(list(), new ConnectOptions(2, 4))) {
            assertEquals(addresses[0], ((TcpReconnectingQueue) c.queue(0)).peer(), "the first peer that answers");
            assertEquals(Status.SUCCESS, ReconnectTest.write(c.queue(0), 5, data).status());
            stop(0);
            for (int q = 0; q < 2; q++) {
                byte[] back = new byte[4096];
                ReconnectTest.readUntilBack(c.queue(q), 5, back);
                assertArrayEquals(data, back, "queue " + q);
                assertEquals(addresses[1], ((TcpReconnectingQueue) c.queue(q)).peer(), "queue " + q);
            }
            assertNotNull(log.awaitInfo(5000, "failed over from " + addresses[0] + " to " + addresses[1]),
                    log.all().toString());
            assertEquals(2, c.reconnects());
        }
    }

    /**
     * A read reaches the target with the time its frame was in whole (after the host sent it, before
     * the target ran it), which lets a replicated volume share one read index among the reads received
     * together; other requests carry none.
     */
    @Test
    void readsCarryWhenTheTargetHadReceivedThem() throws Exception {
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4))) {
            io.pistore.spi.HostQueue q = c.queue(0);
            assertEquals(Status.SUCCESS, ReconnectTest.write(q, 3, new byte[4096]).status());
            for (int i = 0; i < 5; i++) {
                long before = System.nanoTime();
                assertEquals(Status.SUCCESS, ReconnectTest.read(q, 3, new byte[4096]).status());
                long after = System.nanoTime();
                java.util.List<io.pistore.spi.BlockRequest> reads = received(io.pistore.spi.Operation.READ);
                long at = reads.get(reads.size() - 1).receivedNanos();
                assertTrue(at - before > 0 && after - at > 0, "received " + (at - before) + " ns after the send, "
                        + (after - at) + " ns before the answer");
            }
            assertEquals(0, received(io.pistore.spi.Operation.WRITE).get(0).receivedNanos(), "writes carry none");
        }
    }

    /** The writes a host queue sent, with their fences, as the targets received them. */
    private java.util.List<io.pistore.spi.BlockRequest> received(io.pistore.spi.Operation op) {
        return shared.requests.stream().filter(r -> r.op() == op).toList();
    }

    /**
     * Every write, zero write and deallocation carries the queue's fence and its own number over the
     * wire, reads and flushes none; after a failover the same stream goes on with the next epoch and
     * the next number, and the wire codes
     * of every status, FENCED too, read back as sent.
     */
    @Test
    void writesCarryTheQueuesFenceAndAFailoverMovesItsEpochUp() throws Exception {
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4))) {
            io.pistore.spi.HostQueue q = c.queue(0);
            assertEquals(Status.SUCCESS, ReconnectTest.write(q, 3, new byte[4096]).status());
            assertTrue(q.submit(io.pistore.spi.BlockRequest.writeZeroes(MemoryHandler.VOLUME, 3, 1, false))
                    .get(10, TimeUnit.SECONDS).isSuccess());
            assertTrue(q.submit(io.pistore.spi.BlockRequest.deallocate(MemoryHandler.VOLUME, 3, 1))
                    .get(10, TimeUnit.SECONDS).isSuccess());
            assertTrue(q.submit(io.pistore.spi.BlockRequest.flush(MemoryHandler.VOLUME)).get(10, TimeUnit.SECONDS).isSuccess());
            io.pistore.spi.WriteFence first = ((TcpReconnectingQueue) q).currentFence();
            assertEquals(1, first.epoch());
            // each numbered in the stream, in the order the queue took them
            assertEquals(first.withSeq(1), received(io.pistore.spi.Operation.WRITE).get(0).fence());
            assertEquals(first.withSeq(2), received(io.pistore.spi.Operation.WRITE_ZEROES).get(0).fence());
            assertEquals(first.withSeq(3), received(io.pistore.spi.Operation.DEALLOCATE).get(0).fence());
            assertEquals(null, received(io.pistore.spi.Operation.FLUSH).get(0).fence(), "a flush writes nothing");
            stop(0);
            ReconnectTest.readUntilBack(q, 3, new byte[4096]);
            assertTrue(received(io.pistore.spi.Operation.READ).stream().allMatch(r -> r.fence() == null), "reads carry none");
            assertEquals(Status.SUCCESS, ReconnectTest.write(q, 4, new byte[4096]).status());
            java.util.List<io.pistore.spi.BlockRequest> writes = received(io.pistore.spi.Operation.WRITE);
            assertEquals(new io.pistore.spi.WriteFence(first.key(), 2, 4), writes.get(writes.size() - 1).fence(),
                    "the same stream, the next connection, the next number");
        }
        for (Status st : Status.values()) {
            assertEquals(st, Protocol.status(Protocol.statusCode(st)), st.toString());
        }
    }

    @Test
    void theListIsWalkedRoundRobinPastPeersThatAreDown() throws Exception {
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4))) {
            TcpReconnectingQueue q = (TcpReconnectingQueue) c.queue(0);
            assertEquals(Status.SUCCESS, ReconnectTest.write(q, 1, new byte[4096]).status());
            stop(1); // the next peer is down too: the queue goes on to the third
            stop(0);
            ReconnectTest.readUntilBack(q, 1, new byte[4096]);
            assertEquals(addresses[2], q.peer());
            addresses[0] = start(0, addresses[0]); // back on its address
            stop(2); // after the last peer comes the first again
            ReconnectTest.readUntilBack(q, 1, new byte[4096]);
            assertEquals(addresses[0], q.peer());
            assertNotNull(log.awaitInfo(5000, "failed over from " + addresses[2] + " to " + addresses[0]),
                    log.all().toString());
        }
    }

    @Test
    void connectSkipsPeersThatAreDown() throws Exception {
        stop(0);
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4))) {
            assertEquals(addresses[1], ((TcpReconnectingQueue) c.queue(0)).peer());
            Completion w = ReconnectTest.write(c.queue(0), 2, new byte[4096]);
            assertEquals(Status.SUCCESS, w.status(), w.toString());
        }
    }

    @Test
    void noPeerAnsweringIsOneLineNamingEach() throws Exception {
        for (int i = 0; i < 3; i++) {
            stop(i);
        }
        IOException e = assertThrows(IOException.class, () -> host.connect(list(), ConnectOptions.defaults()));
        assertTrue(e.getMessage().startsWith("cannot connect to any peer of tcp target " + list() + ": "
                + addresses[0] + ": "), e.getMessage());
        assertTrue(e.getMessage().contains("; " + addresses[2] + ": "), e.getMessage());
        assertEquals(-1, e.getMessage().indexOf('\n'), e.getMessage());
    }

    @Test
    void anInterruptedConnectStopsAtOnceInsteadOfWalkingTheList() throws Exception {
        Thread.currentThread().interrupt();
        InterruptedIOException e;
        try {
            e = assertThrows(InterruptedIOException.class, () -> host.connect(list(), ConnectOptions.defaults()));
        } finally {
            assertTrue(Thread.interrupted(), "the interrupt flag is set again for the caller");
        }
        assertEquals("cannot connect to tcp target " + list() + ": interrupted", e.getMessage());
        try (HostConnection c = host.connect(list(), new ConnectOptions(1, 4))) {
            assertEquals(addresses[0], ((TcpReconnectingQueue) c.queue(0)).peer(), "the transport is still usable");
        }
    }

    @Test
    void aMalformedListIsRefusedBeforeConnecting() throws Exception {
        int free;
        try (ServerSocket s = new ServerSocket(0)) {
            free = s.getLocalPort();
        }
        String a = "127.0.0.1:" + free;
        assertEquals("peer 2 of tcp target list '" + a + ",' is empty", refused(a + ","));
        assertEquals("peer 1 of tcp target list '," + a + "' is empty", refused("," + a));
        assertEquals("peer 2 of tcp target list '" + a + ",nohost': a tcp address is host:port, not 'nohost'",
                refused(a + ",nohost"));
        assertEquals("peer 2 of tcp target list '" + a + ",127.0.0.1:99999': port out of range in tcp address "
                + "'127.0.0.1:99999'", refused(a + ",127.0.0.1:99999"));
        assertEquals("peer 127.0.0.1:" + free + " is listed twice in tcp target list '" + a + "," + a + "'",
                refused(a + "," + a));
    }

    private String refused(String target) {
        IOException e = assertThrows(IOException.class, () -> host.connect(target, ConnectOptions.defaults()));
        return e.getMessage();
    }
}
