package io.pistore.engine.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code submitMayCompleteOnCaller} on the local transport: inline, and never recursing without bound. */
class LocalInlineSubmitTest {
    private VolumeStore store;
    private BlockTransport transport;
    private TargetListener listener;
    private HostConnection connection;
    private BlockDevice device;

    @BeforeEach
    void start() throws Exception {
        store = VolumeStore.inMemory();
        store.create("v", BlockFormat.of(512, 8), 64);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        connection = transport.connect(listener.address(), new ConnectOptions(1, 8));
        device = BlockDevice.open(connection, "v");
    }

    @AfterEach
    void stop() throws Exception {
        connection.close();
        listener.close();
        transport.close();
        store.close();
    }

    @Test
    void aRequestRunsAndCompletesOnTheCallersThreadBeforeSubmitReturns() {
        byte[] data = new byte[512];
        new Random(1).nextBytes(data);
        String[] where = new String[1];
        device.submitMayCompleteOnCaller(BlockRequest.write("v", 3, 1, ScatterList.wrap(data), null,
                device.insertStrip(3), false), c -> {
                    assertEquals(Status.SUCCESS, c.status(), c.toString());
                    where[0] = Thread.currentThread().getName();
                });
        assertEquals(Thread.currentThread().getName(), where[0], "completed inline, before submit returned");
        byte[] back = new byte[512];
        Completion[] read = new Completion[1];
        device.submitMayCompleteOnCaller(BlockRequest.read("v", 3, 1, ScatterList.wrap(back), null,
                device.insertStrip(3)), c -> read[0] = c);
        assertEquals(Status.SUCCESS, read[0].status(), String.valueOf(read[0]));
        assertArrayEquals(data, back, "PI inserted, then checked and stripped, inline");
        assertEquals(0, connection.queue(0).inFlight());
    }

    /**
     * A caller that submits its next request from inside the completion, 200 000 times (the chain
     * that overflowed the stack when every request ran inline): the nesting stays at most two deep
     * (one inline completion on the caller's stack, a nested request queued to the worker, whose
     * completion runs the next one inline on the worker's stack), and every request completes.
     */
    @Test
    void chainingFromTheCompletionNestsAtMostTwoLevels() throws Exception {
        int total = 200_000;
        AtomicInteger done = new AtomicInteger();
        AtomicInteger maxDepth = new AtomicInteger();
        ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);
        AtomicInteger onCaller = new AtomicInteger();
        Thread caller = Thread.currentThread();
        CompletableFuture<Void> finished = new CompletableFuture<>();
        ScatterList buf = ScatterList.wrap(new byte[512]);
        java.util.concurrent.atomic.AtomicReference<Consumer<Completion>> next = new java.util.concurrent.atomic.AtomicReference<>();
        next.set(c -> {
            int[] d = depth.get();
            d[0]++;
            try {
                maxDepth.accumulateAndGet(d[0], Math::max);
                if (Thread.currentThread() == caller) {
                    onCaller.incrementAndGet();
                }
                if (!c.isSuccess()) {
                    finished.completeExceptionally(new AssertionError(c.toString()));
                    return;
                }
                int n = done.incrementAndGet();
                if (n == total) {
                    finished.complete(null);
                } else {
                    long lba = n % 64;
                    device.submitMayCompleteOnCaller(BlockRequest.read("v", lba, 1, buf, null, device.insertStrip(lba)),
                            next.get());
                }
            } catch (Throwable t) {
                finished.completeExceptionally(t);
            } finally {
                d[0]--;
            }
        });
        device.submitMayCompleteOnCaller(BlockRequest.read("v", 0, 1, buf, null, device.insertStrip(0)), next.get());
        finished.get(120, TimeUnit.SECONDS);
        assertEquals(total, done.get());
        assertEquals(1, onCaller.get(), "only the first request completes on the caller: the nested one is "
                + "completed by the worker, never by the caller, however fast the worker is");
        assertTrue(maxDepth.get() <= 2, "completions nested " + maxDepth.get() + " deep");
    }

    @Test
    void inlineRequestsCountAgainstTheQueueDepth() throws Exception {
        java.util.List<Consumer<Completion>> held = new java.util.ArrayList<>();
        io.pistore.spi.TargetHandler holding = new io.pistore.spi.TargetHandler() {
            @Override
            public java.util.List<io.pistore.spi.VolumeInfo> volumes() {
                return java.util.List.of(new io.pistore.spi.VolumeInfo("h", 8, BlockFormat.of(512, 8)));
            }

            @Override
            public void execute(BlockRequest r, io.pistore.spi.PiDuty checked, Consumer<Completion> done) {
                held.add(done); // completes later, as a target waiting for a disk would
            }
        };
        try (TargetListener l = transport.listen("", holding);
             HostConnection small = transport.connect(l.address(), new ConnectOptions(1, 1))) {
            BlockDevice d = BlockDevice.open(small, "h");
            Completion[] first = new Completion[1];
            Completion[] second = new Completion[1];
            d.submitMayCompleteOnCaller(BlockRequest.flush("h"), c -> first[0] = c);
            assertEquals(1, held.size(), "the handler ran on this thread");
            assertEquals(null, first[0]);
            d.submitMayCompleteOnCaller(BlockRequest.flush("h"), c -> second[0] = c);
            assertEquals(Status.QUEUE_FULL, second[0].status(), "depth 1: the second request is refused at once");
            held.get(0).accept(Completion.success());
            held.get(0).accept(Completion.success());
            assertEquals(Status.SUCCESS, first[0].status());
            assertEquals(0, small.queue(0).inFlight(), "a second completion of one request is ignored");
        }
    }
}
