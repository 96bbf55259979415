package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pistore.integrity.BlockFormat;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.testkit.Eventually;
import io.pistore.transport.tcp.TcpConfig;
import org.junit.jupiter.api.Test;

/** I/O threads: a fixed number started at once, or one per channel up to a ceiling (the default). */
class EventLoopGroupTest {
    @Test
    void aFixedGroupStartsEveryThreadAndDealsChannelsInTurn() {
        EventLoopGroup g = new EventLoopGroup(3, false, 0, 0, true);
        try {
            assertEquals(3, g.loops().length);
            EventLoop[] l = g.loops();
            assertSame(l[0], g.next());
            assertSame(l[1], g.next());
            assertSame(l[2], g.next());
            assertSame(l[0], g.next());
        } finally {
            g.shutdown();
        }
    }

    @Test
    void aGrowingGroupStartsAThreadPerChannelUpToItsCeilingThenSharesThem() {
        EventLoopGroup g = new EventLoopGroup(2, true, 0, 0, true);
        try {
            assertEquals(0, g.loops().length, "no channel, no thread");
            EventLoop a = g.next();
            assertEquals(1, g.loops().length);
            EventLoop b = g.next();
            assertEquals(2, g.loops().length);
            assertSame(a, g.next(), "at the ceiling, in turn from the first");
            assertSame(b, g.next());
            assertEquals(2, g.loops().length);
        } finally {
            g.shutdown();
        }
        assertThrows(IllegalArgumentException.class, () -> new EventLoopGroup(0, true, 0, 0, true));
    }

    /**
     * A channel whose handling throws is closed alone, told why; the loop and its other channels go
     * on (a failure used to end the I/O thread, and with it every connection and listener on it).
     */
    @Test
    void aChannelWhoseHandlingFailsIsClosedAloneAndTheLoopGoesOn() throws Exception {
        EventLoopGroup g = new EventLoopGroup(1, false, 0, 0, true);
        java.nio.channels.Pipe bad = java.nio.channels.Pipe.open();
        java.nio.channels.Pipe good = java.nio.channels.Pipe.open();
        java.util.List<String> closed = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicInteger bytes = new java.util.concurrent.atomic.AtomicInteger();
        try {
            EventLoop loop = g.next();
            bad.source().configureBlocking(false);
            good.source().configureBlocking(false);
            java.util.concurrent.CompletableFuture<Void> registered = new java.util.concurrent.CompletableFuture<>();
            loop.execute(() -> {
                try {
                    loop.register(bad.source(), java.nio.channels.SelectionKey.OP_READ, new Selectable() {
                        @Override
                        public void onSelect(java.nio.channels.SelectionKey key) {
                            throw new IllegalStateException("a bug");
                        }

                        @Override
                        public void onLoopClose(String reason) {
                            closed.add(reason);
                        }
                    });
                    loop.register(good.source(), java.nio.channels.SelectionKey.OP_READ, new Selectable() {
                        @Override
                        public void onSelect(java.nio.channels.SelectionKey key) {
                            try {
                                int n = good.source().read(java.nio.ByteBuffer.allocate(64));
                                bytes.addAndGet(Math.max(0, n));
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        }

                        @Override
                        public void onLoopClose(String reason) {
                            closed.add("good: " + reason);
                        }
                    });
                    registered.complete(null);
                } catch (java.io.IOException e) {
                    registered.completeExceptionally(e);
                }
            });
            registered.get(10, java.util.concurrent.TimeUnit.SECONDS);
            bad.sink().write(java.nio.ByteBuffer.wrap(new byte[] {1}));
            good.sink().write(java.nio.ByteBuffer.wrap(new byte[] {1}));
            Eventually.await("the failing channel closed and the other served",
                    () -> !closed.isEmpty() && bytes.get() == 1);
            assertEquals(java.util.List.of("its handling failed: java.lang.IllegalStateException: a bug"), closed);
            org.junit.jupiter.api.Assertions.assertFalse(bad.source().isOpen(), "the failing channel is closed");
            good.sink().write(java.nio.ByteBuffer.wrap(new byte[] {2, 3}));
            Eventually.await("the loop to go on serving", () -> bytes.get() == 3);
            assertEquals(java.util.List.of("its handling failed: java.lang.IllegalStateException: a bug"), closed);
        } finally {
            g.shutdown();
            bad.sink().close();
            good.sink().close();
            good.source().close();
        }
    }

    /** Defaults: the listener and each connection, host and target side, get a thread while CPUs last. */
    @Test
    void byDefaultATransportStartsThreadsAsConnectionsOpen() throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        assertEquals(0, cfg.ioThreads);
        int cpus = TcpConfig.autoIoThreadCeiling();
        TcpTransport t = new TcpTransport(cfg);
        try {
            assertEquals(0, t.group().loops().length);
            MemoryHandler h = new MemoryHandler(BlockFormat.of(4096, 8), 64);
            try (TargetListener l = t.listen("127.0.0.1:0", h)) {
                assertEquals(1, t.group().loops().length, "the listener's");
                try (HostConnection c = t.connect(l.address(), new ConnectOptions(3, 4))) {
                    int want = Math.min(1 + 3 + 3, cpus); // listener, three host and three target connections
                    Eventually.await(want + " event loops", () -> t.group().loops().length >= want);
                    assertEquals(want, t.group().loops().length);
                    assertEquals(3, c.queueCount());
                }
            }
        } finally {
            t.close();
        }
    }
}
