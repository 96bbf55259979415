package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.spi.VolumeInfo;
import io.pistore.testkit.Eventually;
import io.pistore.transport.tcp.TcpConfig;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A host queue survives its target going away: requests in flight and during the outage fail with a
 * transport error, the queue reconnects in the background to a target that comes back on the same
 * address, whatever volumes it lists now (one in another format waits for the host to ask again).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReconnectTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);

    TcpTransport host;
    TcpTransport target;
    LogCapture log;

    @BeforeEach
    void setUp() {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.reconnectDelayMillis = 20;
        cfg.reconnectMaxDelayMillis = 200;
        cfg.connectTimeoutMillis = 2000;
        host = new TcpTransport(cfg);
        log = new LogCapture();
    }

    @AfterEach
    void tearDown() {
        host.close();
        if (target != null) {
            target.close();
        }
        log.close();
    }

    TargetListener serve(String address, MemoryHandler h) throws Exception {
        if (target != null) {
            target.close();
        }
        target = new TcpTransport(TcpConfig.defaults());
        return target.listen(address, h);
    }

    static Completion write(HostQueue q, long lba, byte[] data) throws Exception {
        return q.submit(BlockRequest.write(MemoryHandler.VOLUME, lba, 1, ScatterList.wrap(data), null,
                Protection.insertStrip(lba), false)).get(10, TimeUnit.SECONDS);
    }

    static Completion read(HostQueue q, long lba, byte[] into) throws Exception {
        return q.submit(BlockRequest.read(MemoryHandler.VOLUME, lba, 1, ScatterList.wrap(into), null,
                Protection.insertStrip(lba))).get(10, TimeUnit.SECONDS);
    }

    /** Retries {@code lba}'s read until it succeeds; every failure meanwhile must be a transport error. */
    static List<String> readUntilBack(HostQueue q, long lba, byte[] into) throws Exception {
        List<String> failures = new ArrayList<>();
        Eventually.until("lba " + lba + " read back after the reconnect", () -> read(q, lba, into), c -> {
            if (c.isSuccess()) {
                return true;
            }
            assertEquals(Status.TRANSPORT_ERROR, c.status(), c.toString());
            failures.add(c.message());
            return false;
        });
        return failures;
    }

    @Test
    void aRestartedTargetIsReconnectedAndEveryQueueWorksAgain() throws Exception {
        MemoryHandler h = new MemoryHandler(F, 64);
        TargetListener l = serve("127.0.0.1:0", h);
        String address = l.address();
        byte[] data = new byte[4096];
        new Random(5).nextBytes(data);
        try (HostConnection c = host.connect(address, new ConnectOptions(2, 4))) {
            assertEquals(Status.SUCCESS, write(c.queue(0), 3, data).status());
            target.close(); // the target process goes away
            target = null;
            Completion during = read(c.queue(0), 3, new byte[4096]);
            assertEquals(Status.TRANSPORT_ERROR, during.status(), during.toString());
            serve(address, h); // and comes back on the same address, with its volume intact
            for (int q = 0; q < 2; q++) {
                byte[] back = new byte[4096];
                List<String> failures = readUntilBack(c.queue(q), 3, back);
                assertArrayEquals(data, back, "queue " + q);
                for (String m : failures) {
                    assertTrue(m.contains("reconnecting") || m.contains("closed"), m);
                }
            }
            assertNotNull(log.awaitInfo(5000, "reconnected to " + address), log.all().toString());
        }
    }

    @Test
    void aTargetBackWithAVolumeInAnotherFormatIsUsedButThatVolumeWaitsForARelist() throws Exception {
        MemoryHandler h = new MemoryHandler(F, 64);
        TargetListener l = serve("127.0.0.1:0", h);
        String address = l.address();
        try (HostConnection c = host.connect(address, new ConnectOptions(1, 4))) {
            HostQueue q = c.queue(0);
            assertEquals(Status.SUCCESS, write(q, 1, new byte[4096]).status());
            BlockFormat other = BlockFormat.of(4096, 16);
            serve(address, new MemoryHandler(other, 64)); // same name, other format
            List<String> meanwhile = new ArrayList<>();
            Completion refused = Eventually.until("v refused as stale once reconnected", () -> read(q, 1, new byte[4096]),
                    r -> {
                        if (r.status() == Status.TRANSPORT_ERROR) {
                            meanwhile.add(r.message());
                            return false;
                        }
                        return true;
                    });
            assertEquals(Status.NO_SUCH_VOLUME, refused.status(), refused.toString());
            assertTrue(refused.message().endsWith("as this host knew it: open it again"), refused.message());
            assertNotNull(log.awaitInfo(5000, "reconnected to " + address, "it now lists: now v 64 blocks " + other),
                    log.all().toString());
            assertTrue(log.warnings().stream().noneMatch(w -> w.contains("not using it")), log.warnings().toString());
            assertEquals(List.of(new VolumeInfo(MemoryHandler.VOLUME, 64, other)), c.relistVolumes().get(10, TimeUnit.SECONDS));
            byte[] d = new byte[4096];
            new Random(4).nextBytes(d);
            assertEquals(Status.SUCCESS, write(q, 1, d).status(), "asked for again: served in its format");
            byte[] back = new byte[4096];
            assertEquals(Status.SUCCESS, read(q, 1, back).status());
            assertArrayEquals(d, back);
        }
    }

    @Test
    void aTargetBackWithAnotherVolumeBesideIsUsed() throws Exception {
        MemoryHandler h = new MemoryHandler(F, 64);
        TargetListener l = serve("127.0.0.1:0", h);
        String address = l.address();
        byte[] data = new byte[4096];
        new Random(9).nextBytes(data);
        try (HostConnection c = host.connect(address, new ConnectOptions(1, 4))) {
            assertEquals(Status.SUCCESS, write(c.queue(0), 2, data).status());
            VolumeRelistTest.Shelf more = new VolumeRelistTest.Shelf();
            more.byName.put(MemoryHandler.VOLUME, h);
            more.put("x", F, 8);
            target.close();
            target = new TcpTransport(TcpConfig.defaults());
            target.listen(address, more);
            byte[] back = new byte[4096];
            readUntilBack(c.queue(0), 2, back);
            assertArrayEquals(data, back);
            assertNotNull(log.awaitInfo(5000, "reconnected to " + address, "it now lists: new x"), log.all().toString());
            assertEquals(List.of("v", "x"), VolumeRelistTest.names(c.volumes()), "the new connection's list");
        }
    }

    @Test
    void closingTheHostStopsReconnecting() throws Exception {
        MemoryHandler h = new MemoryHandler(F, 64);
        TargetListener l = serve("127.0.0.1:0", h);
        String address = l.address();
        HostConnection c = host.connect(address, new ConnectOptions(1, 4));
        target.close();
        target = null;
        assertEquals(Status.TRANSPORT_ERROR, read(c.queue(0), 1, new byte[4096]).status());
        c.close();
        // A plain socket on the address now counts connection attempts: after close there must be none.
        InetSocketAddress a = Addresses.parse(address);
        AtomicInteger accepted = new AtomicInteger();
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(a);
            s.setSoTimeout(1000); // several reconnect periods (at most 200 ms each here)
            try (Socket ignored = s.accept()) {
                accepted.incrementAndGet();
            } catch (java.net.SocketTimeoutException expected) {
                // nobody came: good
            }
        }
        assertEquals(0, accepted.get(), "a closed host connection kept reconnecting");
        Completion after = c.queue(0).submit(BlockRequest.flush(MemoryHandler.VOLUME)).get(5, TimeUnit.SECONDS);
        assertEquals(Status.TRANSPORT_ERROR, after.status());
        assertFalse(after.message().contains("reconnecting"), after.message());
    }
}
