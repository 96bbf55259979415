package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.PiDuty;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.testkit.Eventually;
import io.pistore.transport.tcp.TcpConfig;
import io.pistore.transport.tcp.TcpTransportProvider;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Behaviour of the transport with a well-behaved peer: ordering, backpressure, digests, PI, idling. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TcpTransportTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);

    TcpTransport transport;
    MemoryHandler handler;
    TargetListener listener;

    @AfterEach
    void stop() {
        if (transport != null) {
            transport.close();
        }
    }

    HostConnection start(TcpConfig cfg, int queues, int depth) throws Exception {
        transport = new TcpTransport(cfg);
        handler = new MemoryHandler(F, 4096);
        listener = transport.listen("127.0.0.1:0", handler);
        return transport.connect(listener.address(), new ConnectOptions(queues, depth));
    }

    static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void theProviderIsFoundByName() {
        BlockTransportProvider p = BlockTransportProvider.all().stream().filter(x -> x.name().equals("tcp")).findFirst()
                .orElseThrow();
        assertTrue(p instanceof TcpTransportProvider);
        assertTrue(p.availability().isAvailable());
        assertTrue(p.capabilities().hardwareGuards().isEmpty(), "PI is checked in software");
    }

    @Test
    void responsesOutOfOrderAreMatchedByCommandId() throws Exception {
        HostConnection c = start(TcpConfig.defaults(), 1, 8);
        for (int i = 0; i < 8; i++) {
            byte[] d = random(i, 4096);
            assertEquals(Status.SUCCESS, c.queue(0).submit(BlockRequest.write("v", i, 1, ScatterList.wrap(d), null,
                    Protection.insertStrip(i), false)).get(10, TimeUnit.SECONDS).status());
        }
        handler.hold = true;
        List<CompletableFuture<Completion>> fs = new ArrayList<>();
        List<byte[]> bufs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            byte[] b = new byte[4096];
            bufs.add(b);
            fs.add(c.queue(0).submit(BlockRequest.read("v", i, 1, ScatterList.wrap(b), null, Protection.insertStrip(i))));
        }
        Eventually.await("the handler to hold all 8 reads", () -> handler.held.size() >= 8);
        handler.hold = false;
        handler.releaseReversed();
        for (int i = 0; i < 8; i++) {
            Completion done = fs.get(i).get(10, TimeUnit.SECONDS);
            assertEquals(Status.SUCCESS, done.status(), done.toString());
            assertArrayEquals(random(i, 4096), bufs.get(i), "read " + i);
        }
    }

    @Test
    void aFullQueueRefusesWithQueueFull() throws Exception {
        HostConnection c = start(TcpConfig.defaults(), 1, 2);
        handler.hold = true;
        CompletableFuture<Completion> a = c.queue(0).submit(BlockRequest.flush("v"));
        CompletableFuture<Completion> b = c.queue(0).submit(BlockRequest.flush("v"));
        Completion full = c.queue(0).submit(BlockRequest.flush("v")).get(1, TimeUnit.SECONDS);
        assertEquals(Status.QUEUE_FULL, full.status());
        assertEquals(2, c.queue(0).inFlight());
        Eventually.await("the handler to hold both flushes", () -> handler.held.size() >= 2);
        handler.hold = false;
        handler.releaseReversed();
        assertEquals(Status.SUCCESS, a.get(10, TimeUnit.SECONDS).status());
        assertEquals(Status.SUCCESS, b.get(10, TimeUnit.SECONDS).status());
        assertEquals(0, c.queue(0).inFlight());
    }

    @Test
    void largeTransfersWithBothDigestsAcrossManySocketBuffers() throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.headerDigest = true;
        cfg.dataDigest = true;
        HostConnection c = start(cfg, 2, 4);
        int n = 300; // 1.2 MB: several fills of the 256 KiB socket buffers
        byte[] d = random(1, n * 4096);
        byte[] m = new byte[n * 8];
        PiContext ctx = PiContext.builder(F).initialRefTag(100).appTag(5).build();
        Pi.generate(ctx, ScatterList.wrap(d), ScatterList.wrap(m), n);
        Protection pass = Protection.pass(CheckFlags.ALL, 100, 5, 0xFFFF);
        assertEquals(Status.SUCCESS, c.queue(1).submit(BlockRequest.write("v", 100, n, ScatterList.wrap(d),
                ScatterList.wrap(m), pass, true)).get(10, TimeUnit.SECONDS).status());
        byte[] d2 = new byte[d.length];
        byte[] m2 = new byte[m.length];
        Completion r = c.queue(0).submit(BlockRequest.read("v", 100, n, ScatterList.wrap(d2), ScatterList.wrap(m2), pass))
                .get(10, TimeUnit.SECONDS);
        assertEquals(Status.SUCCESS, r.status(), r.toString());
        assertArrayEquals(d, d2);
        assertArrayEquals(m, m2);
    }

    /**
     * The target reuses its request objects, buffers and shuttles: a random pipelined mix of good
     * writes, writes whose PI fails the target's check, and reads of 1 to 4 blocks on one queue must
     * each get their own answer (no status, error position, message or byte of an earlier request).
     */
    @Test
    void reusedRequestStateNeverLeaksIntoTheNextRequest() throws Exception {
        HostConnection c = start(TcpConfig.defaults(), 1, 8);
        Random r = new Random(21);
        int blocks = 64;
        byte[] shadow = new byte[blocks * 4096];
        byte[] shadowMeta = new byte[blocks * 8];
        // every block starts with valid PI
        for (int lba = 0; lba < blocks; lba += 4) {
            byte[] d = random(1000 + lba, 4 * 4096);
            byte[] m = new byte[4 * 8];
            Pi.generate(PiContext.builder(F).initialRefTag(lba).build(), ScatterList.wrap(d), ScatterList.wrap(m), 4);
            assertEquals(Status.SUCCESS, c.queue(0).submit(BlockRequest.write("v", lba, 4, ScatterList.wrap(d),
                    ScatterList.wrap(m), Protection.pass(CheckFlags.ALL, lba, 0, 0xFFFF), false)).get(10, TimeUnit.SECONDS)
                    .status());
            System.arraycopy(d, 0, shadow, lba * 4096, d.length);
            System.arraycopy(m, 0, shadowMeta, lba * 8, m.length);
        }
        for (int round = 0; round < 50; round++) {
            List<CompletableFuture<Completion>> fs = new ArrayList<>();
            List<Runnable> checks = new ArrayList<>();
            boolean[] written = new boolean[blocks];
            for (int k = 0; k < 8; k++) {
                int n = 1 + r.nextInt(4);
                int lba = r.nextInt(blocks - n + 1);
                boolean overlaps = false;
                for (int b = lba; b < lba + n; b++) {
                    overlaps |= written[b];
                }
                int kind = overlaps ? 2 : r.nextInt(3); // a read never races a write of the same round
                Protection p = Protection.pass(CheckFlags.ALL, lba, 0, 0xFFFF);
                if (kind < 2) {
                    byte[] d = random(r.nextLong(), n * 4096);
                    byte[] m = new byte[n * 8];
                    Pi.generate(PiContext.builder(F).initialRefTag(lba).build(), ScatterList.wrap(d), ScatterList.wrap(m), n);
                    int bad = kind == 1 ? r.nextInt(n) : -1;
                    if (bad >= 0) {
                        m[bad * 8] ^= 0x01; // the guard of one block
                    } else {
                        System.arraycopy(d, 0, shadow, lba * 4096, d.length);
                        System.arraycopy(m, 0, shadowMeta, lba * 8, m.length);
                        for (int b = lba; b < lba + n; b++) {
                            written[b] = true;
                        }
                    }
                    fs.add(c.queue(0).submit(BlockRequest.write("v", lba, n, ScatterList.wrap(d), ScatterList.wrap(m), p,
                            false)));
                    int at = fs.size() - 1;
                    int l = lba;
                    checks.add(() -> {
                        Completion got = fs.get(at).join();
                        if (bad < 0) {
                            assertEquals(Status.SUCCESS, got.status(), got.toString());
                        } else {
                            assertEquals(Status.GUARD_CHECK, got.status(), got.toString());
                            assertEquals(l + bad, got.errorLba(), got.toString());
                        }
                    });
                } else {
                    byte[] d = new byte[n * 4096];
                    byte[] m = new byte[n * 8];
                    byte[] expectD = java.util.Arrays.copyOfRange(shadow, lba * 4096, (lba + n) * 4096);
                    byte[] expectM = java.util.Arrays.copyOfRange(shadowMeta, lba * 8, (lba + n) * 8);
                    fs.add(c.queue(0).submit(BlockRequest.read("v", lba, n, ScatterList.wrap(d), ScatterList.wrap(m), p)));
                    int at = fs.size() - 1;
                    checks.add(() -> {
                        Completion got = fs.get(at).join();
                        assertEquals(Status.SUCCESS, got.status(), got.toString());
                        assertArrayEquals(expectD, d);
                        assertArrayEquals(expectM, m);
                    });
                }
            }
            CompletableFuture.allOf(fs.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
            checks.forEach(Runnable::run);
        }
    }

    @Test
    void readsAreCheckedByTheHostAndNotByTheTarget() throws Exception {
        HostConnection c = start(TcpConfig.defaults(), 1, 4);
        byte[] d = random(2, 3 * 4096);
        assertEquals(Status.SUCCESS, c.queue(0).submit(BlockRequest.write("v", 50, 3, ScatterList.wrap(d), null,
                Protection.insertStrip(50), false)).get(10, TimeUnit.SECONDS).status());
        BlockRequest w = handler.requests.get(handler.requests.size() - 1);
        assertTrue(w.protection().pract(), "the request reaches the engine as the host sent it");
        assertNotNull(w.metadata(), "the host inserted the PI, the engine gets a request with PI");
        PiDuty wd = handler.duties.get(handler.duties.size() - 1);
        assertEquals(PiDuty.Hop.HOST, wd.generator(), wd.toString());
        assertEquals(PiDuty.Hop.WIRE, wd.checker(), wd.toString());
        assertTrue(wd.left().isNone(), "the wire checked every field: " + wd);
        // the stored PI of block 51 goes bad
        handler.meta[51 * 8 + 1] ^= 0x40;
        byte[] back = new byte[d.length];
        Completion r = c.queue(0).submit(BlockRequest.read("v", 50, 3, ScatterList.wrap(back), null,
                Protection.insertStrip(50))).get(10, TimeUnit.SECONDS);
        assertEquals(Status.GUARD_CHECK, r.status(), r.toString());
        assertEquals(51, r.errorLba());
        assertEquals(PiErrorKind.GUARD, r.piError().kind());
        BlockRequest rr = handler.requests.get(handler.requests.size() - 1);
        assertNotNull(rr.metadata(), "the target asks the engine for the stored PI");
        PiDuty rd = handler.duties.get(handler.duties.size() - 1);
        assertEquals(PiDuty.Hop.HOST, rd.checker(), "the host checks; the engine must not: " + rd);
        assertTrue(rd.left().isNone(), rd.toString());
        // without checks, the stored PI comes back as it is
        byte[] meta = new byte[24];
        Completion r2 = c.queue(0).submit(BlockRequest.read("v", 50, 3, ScatterList.wrap(back),
                ScatterList.wrap(meta), Protection.pass(CheckFlags.NONE, 50, 0, 0))).get(10, TimeUnit.SECONDS);
        assertEquals(Status.SUCCESS, r2.status());
        assertArrayEquals(java.util.Arrays.copyOfRange(handler.meta, 50 * 8, 53 * 8), meta);
    }

    @Test
    void unknownVolumesAndBadBuffersNeverReachTheWire() throws Exception {
        HostConnection c = start(TcpConfig.defaults(), 1, 4);
        assertEquals(Status.NO_SUCH_VOLUME, c.queue(0).submit(BlockRequest.flush("nope")).get(1, TimeUnit.SECONDS).status());
        assertEquals(Status.INVALID_FIELD, c.queue(0).submit(BlockRequest.write("v", 0, 2, ScatterList.wrap(new byte[4096]),
                null, Protection.insertStrip(0), false)).get(1, TimeUnit.SECONDS).status());
        assertEquals(Status.INVALID_FIELD, c.queue(0).submit(BlockRequest.read("v", 0, 1,
                ScatterList.of(ByteBuffer.allocate(4096).asReadOnlyBuffer()), null, Protection.insertStrip(0)))
                .get(1, TimeUnit.SECONDS).status(), "a read into a read-only buffer");
        assertEquals(0, handler.requests.size());
        assertEquals(0, c.queue(0).inFlight());
    }

    @Test
    void connectFromAnIoThreadIsRefusedInsteadOfDeadlocking() throws Exception {
        HostConnection c = start(TcpConfig.defaults(), 1, 4);
        CompletableFuture<String> seen = new CompletableFuture<>();
        c.queue(0).submit(BlockRequest.flush("v")).whenComplete((r, e) -> {
            try {
                transport.connect(listener.address(), new ConnectOptions(1, 1)).close();
                seen.complete("connected");
            } catch (Exception x) {
                seen.complete(x.getMessage());
            }
        });
        String m = seen.get(10, TimeUnit.SECONDS);
        assertTrue(m.contains("must not be called from a tcp I/O thread") || m.equals("connected"), m);
    }

    /**
     * Idle I/O threads block: once the traffic has ended, every loop's probes and waits stop being
     * counted (a loop that kept polling would keep counting probes), and stay so while nothing
     * arrives. The idle threads' CPU time is a figure of the benchmarks' {@code TcpIdleCpuProbe}.
     */
    @Test
    void idleIoThreadsDoNotSpin() throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.spinMicros = 1000;
        cfg.pollMicros = 2000;
        HostConnection c = start(cfg, 2, 4);
        byte[] d = new byte[4096];
        for (int i = 0; i < 200; i++) {
            assertEquals(Status.SUCCESS, c.queue(i & 1).submit(BlockRequest.write("v", i, 1, ScatterList.wrap(d), null,
                    Protection.insertStrip(i), false)).get(10, TimeUnit.SECONDS).status());
        }
        assertTrue(waits().get(0) > 0, "the loops polled during the traffic: " + waits());
        // Blocked: no probe and no wake-up for ten times the longest poll budget.
        Eventually.steady("the I/O threads to block", Duration.ofMillis(20), Eventually.PATIENCE, this::waits);
        assertEquals(Status.SUCCESS, c.queue(0).submit(BlockRequest.write("v", 0, 1, ScatterList.wrap(d), null,
                Protection.insertStrip(0), false)).get(10, TimeUnit.SECONDS).status(), "and serves again after idling");
    }

    /** Probes and blocking waits of the transport's loops, summed. */
    private List<Long> waits() {
        long polls = 0;
        long blocked = 0;
        for (EventLoop l : transport.group().loops()) {
            polls += l.waiting().polls();
            blocked += l.waiting().blockingWaits();
        }
        return List.of(polls, blocked);
    }

    @Test
    void manyQueuesInParallel() throws Exception {
        HostConnection c = start(TcpConfig.defaults(), 4, 16);
        List<CompletableFuture<Completion>> fs = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            byte[] d = ByteBuffer.allocate(4096).putLong(0, i).array();
            fs.add(c.queue(i % 4).submit(BlockRequest.write("v", i, 1, ScatterList.wrap(d), null,
                    Protection.insertStrip(i), false)));
        }
        for (CompletableFuture<Completion> f : fs) {
            assertEquals(Status.SUCCESS, f.get(10, TimeUnit.SECONDS).status());
        }
        for (int i = 0; i < 64; i++) {
            assertEquals(i, ByteBuffer.wrap(handler.data).getLong(i * 4096));
        }
    }

    /**
     * Requests issued from completions run on the I/O thread, as a polling application's do; with a
     * small {@code flushFrames} their frames (and the target's responses) go out in many early
     * flushes, in the middle of a pass that is still reading. Whatever the setting, every write
     * lands and every read returns the slot's last write with its PI.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {0, 1, 3, -1})
    void requestsChainedFromCompletionsSurviveEarlyFlushes(int flushFrames) throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.flushFrames = flushFrames;
        int depth = 16;
        HostConnection c = start(cfg, 1, depth);
        int perSlot = 4; // slot k owns blocks [k * perSlot, (k + 1) * perSlot)
        int opsPerSlot = 150;
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(depth);
        java.util.concurrent.ConcurrentLinkedQueue<String> problems = new java.util.concurrent.ConcurrentLinkedQueue<>();
        for (int k = 0; k < depth; k++) {
            new ChainedSlot(c, k * perSlot, perSlot, opsPerSlot, new Random(500 + k), done, problems).next();
        }
        assertTrue(done.await(60, TimeUnit.SECONDS), "chained requests did not finish");
        assertTrue(problems.isEmpty(), String.join("; ", problems));
        TcpHostQueue q = ((TcpReconnectingQueue) c.queue(0)).connection();
        long early = q.loop.inLoop() ? q.earlyFlushes : runOnLoop(q, () -> q.earlyFlushes);
        if (flushFrames == 0) {
            assertEquals(0, early, "no early flush when switched off");
        } else if (flushFrames == 1) {
            assertTrue(early > 0, "chained requests must go out before the pass ends");
        }
    }

    private static long runOnLoop(TcpHostQueue q, java.util.function.LongSupplier s) throws Exception {
        CompletableFuture<Long> f = new CompletableFuture<>();
        q.loop.execute(() -> f.complete(s.getAsLong()));
        return f.get(10, TimeUnit.SECONDS);
    }

    /** One slot: alternates random writes and checked reads of its own blocks from its completions. */
    private static final class ChainedSlot {
        final HostConnection c;
        final int first;
        final int blocks;
        final Random r;
        final java.util.concurrent.CountDownLatch done;
        final java.util.Collection<String> problems;
        final byte[] shadow;
        final byte[] shadowMeta;
        int left;
        boolean filled;

        ChainedSlot(HostConnection c, int first, int blocks, int ops, Random r, java.util.concurrent.CountDownLatch done,
                    java.util.Collection<String> problems) {
            this.c = c;
            this.first = first;
            this.blocks = blocks;
            this.left = ops;
            this.r = r;
            this.done = done;
            this.problems = problems;
            this.shadow = new byte[blocks * 4096];
            this.shadowMeta = new byte[blocks * 8];
        }

        void next() {
            if (left-- == 0 || !problems.isEmpty()) {
                done.countDown();
                return;
            }
            boolean fill = !filled; // the first write covers all the slot's blocks: reads then find PI
            filled = true;
            int n = fill ? blocks : 1 + r.nextInt(blocks);
            int at = fill ? 0 : r.nextInt(blocks - n + 1);
            int lba = first + at;
            Protection p = Protection.pass(CheckFlags.ALL, lba, 0, 0xFFFF);
            if (fill || r.nextBoolean()) {
                byte[] d = random(r.nextLong(), n * 4096);
                byte[] m = new byte[n * 8];
                Pi.generate(PiContext.builder(F).initialRefTag(lba).build(), ScatterList.wrap(d), ScatterList.wrap(m), n);
                c.queue(0).submit(BlockRequest.write("v", lba, n, ScatterList.wrap(d), ScatterList.wrap(m), p, false))
                        .whenComplete((got, e) -> {
                            if (e != null || got.status() != Status.SUCCESS) {
                                problems.add("write lba " + lba + ": " + (e != null ? e : got));
                            } else {
                                System.arraycopy(d, 0, shadow, at * 4096, d.length);
                                System.arraycopy(m, 0, shadowMeta, at * 8, m.length);
                            }
                            next();
                        });
            } else {
                byte[] d = new byte[n * 4096];
                byte[] m = new byte[n * 8];
                c.queue(0).submit(BlockRequest.read("v", lba, n, ScatterList.wrap(d), ScatterList.wrap(m), p))
                        .whenComplete((got, e) -> {
                            if (e != null || got.status() != Status.SUCCESS) {
                                problems.add("read lba " + lba + ": " + (e != null ? e : got));
                            } else if (!java.util.Arrays.equals(d, 0, d.length, shadow, at * 4096, (at + n) * 4096)
                                    || !java.util.Arrays.equals(m, 0, m.length, shadowMeta, at * 8, (at + n) * 8)) {
                                problems.add("read lba " + lba + " +" + n + ": not what was written");
                            }
                            next();
                        });
            }
        }
    }
}
