package io.pistore.frontend.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.testkit.Eventually;
import io.pistore.testkit.ForwardingHostConnection;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The frontend sends a request again when its connection to the target was lost (TRANSPORT_ERROR),
 * until it succeeds or the resend deadline passes: the client sees its write, read, flush, trim and
 * write-zeroes succeed across an outage shorter than the deadline, EIO after a longer one, and EIO
 * at once with the deadline 0; a flush is sent again only where the server is told the target keeps
 * every write it acknowledged (the peers of a replicated volume). The outage is a host connection whose queues fail every request with
 * TRANSPORT_ERROR while it is "down", as a tcp or rdma host queue does while it reconnects.
 */
@Timeout(60)
class NbdResendTest {
    static final int READ = 0;
    static final int WRITE = 1;
    static final int FLUSH = 3;
    static final int TRIM = 4;
    static final int WRITE_ZEROES = 6;
    static final int EIO = 5;

    /** A host connection that fails every request with TRANSPORT_ERROR while {@link #down} is set. */
    static final class OutageConnection extends ForwardingHostConnection {
        final AtomicBoolean down = new AtomicBoolean();
        final AtomicInteger refused = new AtomicInteger();
        /** How often the host "reconnected" (the test says when). */
        final AtomicInteger reconnects = new AtomicInteger();

        OutageConnection(HostConnection real) {
            super(real);
        }

        @Override
        public long reconnects() {
            return reconnects.get();
        }

        @Override
        protected CompletableFuture<Completion> submit(HostQueue q, BlockRequest request) {
            if (down.get()) {
                refused.incrementAndGet();
                return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR,
                        "connection to the target lost; reconnecting"));
            }
            return q.submit(request);
        }
    }

    @TempDir
    Path dir;

    VolumeStore store;
    BlockTransport transport;
    TargetListener listener;
    OutageConnection host;
    NbdServer server;

    @BeforeEach
    void start() throws IOException {
        store = VolumeStore.open(dir);
        store.create("a", BlockFormat.of(4096, 8), 256);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        host = new OutageConnection(transport.connect(listener.address(), new ConnectOptions(1, 64)));
    }

    private void serve(long resendMillis) throws IOException {
        serve(resendMillis, true);
    }

    private void serve(long resendMillis, boolean resendFlushes) throws IOException {
        server = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().handshakeTimeoutMillis(2000)
                .resendMillis(resendMillis).resendFlushes(resendFlushes));
    }

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.close();
        }
        host.close();
        listener.close();
        transport.close();
        store.close();
    }

    private NbdTestClient connect() throws IOException {
        NbdTestClient c = NbdTestClient.open(server.address());
        c.go("a");
        return c;
    }

    /**
     * Ends the outage, on another thread, once the host connection has refused {@code refusals} more
     * requests than {@code before}: the request met the outage and was sent again.
     */
    private CompletableFuture<Void> upAfterRefusals(int before, int refusals) {
        CompletableFuture<Void> up = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                Eventually.await(refusals + " refusals in the outage", () -> host.refused.get() >= before + refusals);
                host.down.set(false);
                up.complete(null);
            } catch (Throwable e) {
                up.completeExceptionally(e);
            }
        }, "outage-end");
        t.setDaemon(true);
        t.start();
        return up;
    }

    @Test
    void everyKindOfRequestRidesOverAnOutageShorterThanTheDeadline() throws Exception {
        serve(30_000);
        try (NbdTestClient c = connect()) {
            byte[] d = NbdServerTest.random(8192, 7);
            byte[] ones = NbdServerTest.random(4096, 8);
            assertEquals(0, c.write(0, ones));
            assertEquals(0, c.write(4096 * 10, ones));
            int[] kinds = {WRITE, READ, FLUSH, TRIM, WRITE_ZEROES};
            for (int kind : kinds) {
                host.down.set(true);
                int before = host.refused.get();
                CompletableFuture<Void> up = upAfterRefusals(before, 2);
                switch (kind) {
                    case WRITE -> assertEquals(0, c.write(4096, d), "write across the outage");
                    case READ -> assertArrayEquals(d, c.read(4096, 8192), "read across the outage");
                    case FLUSH -> assertEquals(0, c.command(FLUSH, 0, 0, 0), "flush across the outage");
                    case TRIM -> assertEquals(0, c.command(TRIM, 0, 0, 4096), "trim across the outage");
                    default -> assertEquals(0, c.command(WRITE_ZEROES, 0, 4096 * 10, 4096),
                            "write-zeroes across the outage");
                }
                up.join();
                assertTrue(host.refused.get() > before, "the request met the outage (kind " + kind + ")");
            }
            assertArrayEquals(new byte[4096], c.read(4096 * 10, 4096), "zeroed across the outage");
            assertArrayEquals(d, c.read(4096, 8192));
            assertTrue(server.resends() >= kinds.length, "resends " + server.resends());
            assertEquals(0, server.resendsGivenUp());
        }
    }

    /**
     * Without {@code resendFlushes} (a single target, which may have lost writes replied before it
     * died and not flushed) a flush that met the outage is EIO at once; writes still ride over it.
     */
    @Test
    void aFlushIsNotSentAgainUnlessTheTargetKeepsWhatItAcknowledged() throws Exception {
        serve(30_000, false);
        try (NbdTestClient c = connect()) {
            host.down.set(true);
            assertEquals(EIO, c.command(FLUSH, 0, 0, 0));
            assertEquals(1, host.refused.get(), "the flush was not sent again");
            CompletableFuture<Void> up = upAfterRefusals(host.refused.get(), 2);
            assertEquals(0, c.write(0, new byte[4096]), "a write is sent again");
            up.join();
            assertEquals(0, c.command(FLUSH, 0, 0, 0));
        }
    }

    /**
     * A gateway to one remote target: a write replied and not flushed before the host reconnected may
     * be lost (the target restarted), so the next flush of that volume is EIO, once; writes replied
     * after the reconnect, FUA writes and flushed writes are not held against a flush.
     */
    @ParameterizedTest(name = "one remote target: {0}")
    @ValueSource(booleans = {true, false})
    void theFirstFlushAfterAReconnectThatFollowsUnflushedWritesIsEio(boolean single) throws Exception {
        server = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().handshakeTimeoutMillis(2000)
                .resendMillis(30_000).singleRemoteTarget(single));
        int fua = 1;
        try (NbdTestClient c = connect()) {
            byte[] d = NbdServerTest.random(4096, 9);
            assertEquals(0, c.write(0, d));
            assertEquals(0, c.command(FLUSH, 0, 0, 0));
            host.reconnects.incrementAndGet();
            assertEquals(0, c.command(FLUSH, 0, 0, 0), "flushed before the reconnect: nothing at stake");

            assertEquals(0, c.write(4096, d));
            host.reconnects.incrementAndGet(); // the target restarted, the host reconnected
            assertEquals(single ? EIO : 0, c.command(FLUSH, 0, 0, 0), "replied before the reconnect, never flushed");
            assertEquals(0, c.command(FLUSH, 0, 0, 0), "said once");

            assertEquals(0, c.write(8192, d, fua));
            assertEquals(0, c.write(12288, d));
            assertEquals(0, c.command(FLUSH, 0, 0, 0));
            assertEquals(0, c.write(16384, d, fua));
            host.reconnects.incrementAndGet();
            assertEquals(0, c.command(FLUSH, 0, 0, 0), "a FUA write is durable once replied");
            assertEquals(0, c.write(20480, d));
            assertEquals(0, c.command(FLUSH, 0, 0, 0), "replied after the last reconnect");
            assertArrayEquals(d, c.read(4096, 4096), "the data itself is untouched");
        }
    }

    @Test
    void anOutageLongerThanTheDeadlineEndsInEio() throws Exception {
        serve(300);
        try (NbdTestClient c = connect()) {
            host.down.set(true);
            assertEquals(EIO, c.write(0, new byte[4096]));
            assertTrue(host.refused.get() >= 2, "sent again before giving up: " + host.refused.get());
            assertEquals(1, server.resendsGivenUp());
            host.down.set(false);
            assertEquals(0, c.write(0, new byte[4096]), "the connection serves again once the target is back");
        }
    }

    @Test
    void withTheDeadlineZeroATransportErrorIsEioAtOnce() throws Exception {
        serve(0);
        try (NbdTestClient c = connect()) {
            host.down.set(true);
            assertEquals(EIO, c.write(0, new byte[4096]));
            assertEquals(1, host.refused.get(), "not sent again");
            assertEquals(0, server.resends());
        }
    }
}
