package io.pistore.engine.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.PiDuty;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Requests that wait for the disk complete off the caller's thread (a transport's I/O thread). */
class TargetServiceThreadsTest {
    @TempDir
    Path dir;

    private static String completingThread(TargetService t, BlockRequest r) throws Exception {
        CompletableFuture<String> where = new CompletableFuture<>();
        t.execute(r, PiDuty.of(r.protection()), c -> {
            assertEquals(Status.SUCCESS, c.status(), c.toString());
            where.complete(Thread.currentThread().getName());
        });
        return where.get(30, TimeUnit.SECONDS);
    }

    @Test
    void flushAndFuaWaitOnDiskThreadsOtherRequestsRunInline() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("v", BlockFormat.of(4096, 8), 16);
            TargetService t = new TargetService(s);
            String me = Thread.currentThread().getName();
            ScatterList one = ScatterList.wrap(new byte[4096]);
            assertTrue(completingThread(t, BlockRequest.flush("v")).startsWith("pistore-disk-wait"));
            assertTrue(completingThread(t, BlockRequest.write("v", 1, 1, one, null, Protection.insertStrip(1), true))
                    .startsWith("pistore-disk-wait"));
            assertEquals(me, completingThread(t, BlockRequest.write("v", 2, 1, one, null, Protection.insertStrip(2), false)));
            assertEquals(me, completingThread(t, BlockRequest.read("v", 2, 1, one, null, Protection.insertStrip(2))));
        }
        try (VolumeStore m = VolumeStore.inMemory()) {
            m.create("v", BlockFormat.of(4096, 8), 16);
            TargetService t = new TargetService(m);
            assertEquals(Thread.currentThread().getName(), completingThread(t, BlockRequest.flush("v")),
                    "memory volumes never wait");
        }
    }

    @Test
    void waitsRunOnTheThreadsOfTheOwnerAndAServiceEndsOnlyThreadsOfItsOwn() throws Exception {
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.create("v", BlockFormat.of(4096, 8), 16);
            TargetThreads threads = new TargetThreads();
            try (TargetService t = new TargetService(s, line -> { }, threads)) {
                assertTrue(completingThread(t, BlockRequest.flush("v")).startsWith("pistore-disk-wait"));
            }
            assertTrue(!threads.diskWaits().isShutdown(), "the owner's threads outlive a service that used them");
            try (TargetService t = new TargetService(s, line -> { }, threads)) {
                assertTrue(completingThread(t, BlockRequest.flush("v")).startsWith("pistore-disk-wait"));
            }
            threads.close();
            assertTrue(threads.diskWaits().isTerminated() && threads.peerWaits().isTerminated());

            TargetService own = new TargetService(s);
            assertTrue(completingThread(own, BlockRequest.flush("v")).startsWith("pistore-disk-wait"));
            own.close();
            assertThrows(java.util.concurrent.RejectedExecutionException.class,
                    () -> own.execute(BlockRequest.flush("v"), PiDuty.NONE, c -> { }), "its own threads ended with it");
        }
    }

    /** A memory volume "r" that says it waits for peers; its flushes record their thread in {@code flushedOn}. */
    private static final class PeerVolume implements io.pistore.engine.volume.Volume {
        private final io.pistore.engine.volume.MemoryVolume inner;
        private final boolean flushReturnsAtOnce;
        private final java.util.List<String> flushedOn;

        PeerVolume(BlockFormat f, boolean flushReturnsAtOnce, java.util.List<String> flushedOn) {
            this.inner = new io.pistore.engine.volume.MemoryVolume("r", f, 16);
            this.flushReturnsAtOnce = flushReturnsAtOnce;
            this.flushedOn = flushedOn;
        }

        public String name() { return inner.name(); }
        public BlockFormat format() { return inner.format(); }
        public long blockCount() { return inner.blockCount(); }
        public void read(long lba, int n, ScatterList d, ScatterList m) throws java.io.IOException { inner.read(lba, n, d, m); }
        public void write(long lba, int n, ScatterList d, ScatterList m, boolean fua) throws java.io.IOException {
            inner.write(lba, n, d, m, fua);
        }
        public void writeZeroes(long lba, int n, boolean fua) throws java.io.IOException { inner.writeZeroes(lba, n, fua); }
        public void flush() { flushedOn.add(Thread.currentThread().getName()); }
        public void close() { }
        @Override
        public boolean waitsForPeers() { return true; }
        @Override
        public boolean flushReturnsAtOnce() { return flushReturnsAtOnce; }
    }

    @Test
    void everyRequestOfAVolumeThatWaitsForPeersCompletesOnAPeerWaitThread() throws Exception {
        BlockFormat f = BlockFormat.of(4096, 8);
        io.pistore.engine.volume.Volume remote = new PeerVolume(f, false, new java.util.concurrent.CopyOnWriteArrayList<>());
        try (VolumeStore m = VolumeStore.inMemory()) {
            m.attach(remote);
            m.create("local", f, 16);
            TargetService t = new TargetService(m);
            ScatterList one = ScatterList.wrap(new byte[4096]);
            assertTrue(completingThread(t, BlockRequest.write("r", 2, 1, one, null, Protection.insertStrip(2), false))
                    .startsWith("pistore-peer-wait"));
            assertTrue(completingThread(t, BlockRequest.read("r", 2, 1, one, null, Protection.insertStrip(2)))
                    .startsWith("pistore-peer-wait"));
            assertTrue(completingThread(t, BlockRequest.flush("r")).startsWith("pistore-peer-wait"));
            assertEquals(Thread.currentThread().getName(), completingThread(t, BlockRequest.write("local", 2, 1, one, null,
                    Protection.insertStrip(2), false)), "other volumes as before");
        }
    }
    @Test
    void aFlushThatReturnsAtOnceIsAnsweredWhereItArrivesOnADurableStoreToo() throws Exception {
        BlockFormat f = BlockFormat.of(4096, 8);
        java.util.List<String> flushedOn = new java.util.concurrent.CopyOnWriteArrayList<>();
        io.pistore.engine.volume.Volume replicated = new PeerVolume(f, true, flushedOn);
        try (VolumeStore s = VolumeStore.open(dir)) {
            s.attach(replicated);
            s.create("local", f, 16);
            TargetService t = new TargetService(s);
            String me = Thread.currentThread().getName();
            assertEquals(me, completingThread(t, BlockRequest.flush("r")), "no hand-off for a flush with nothing to wait for");
            assertEquals(java.util.List.of(me), flushedOn, "the volume's flush was called, on the caller's thread");
            assertTrue(completingThread(t, BlockRequest.writeZeroes("r", 1, 1, false)).startsWith("pistore-peer-wait"),
                    "its other requests still wait off the caller's thread");
            assertTrue(completingThread(t, BlockRequest.flush("local")).startsWith("pistore-disk-wait"),
                    "a file volume's flush still waits for the disk");
        }
    }

    /** A volume whose writes complete later, when the test says, on a thread of its own. */
    private static final class LaterVolume implements io.pistore.engine.volume.Volume {
        final io.pistore.engine.volume.MemoryVolume inner;
        final java.util.List<CompletableFuture<Void>> pending = new java.util.concurrent.CopyOnWriteArrayList<>();
        final java.util.List<String> startedOn = new java.util.concurrent.CopyOnWriteArrayList<>();

        LaterVolume(BlockFormat f) {
            inner = new io.pistore.engine.volume.MemoryVolume("r", f, 16);
        }

        public String name() { return inner.name(); }
        public BlockFormat format() { return inner.format(); }
        public long blockCount() { return inner.blockCount(); }
        public void read(long lba, int n, ScatterList d, ScatterList m) throws java.io.IOException { inner.read(lba, n, d, m); }
        public void write(long lba, int n, ScatterList d, ScatterList m, boolean fua) {
            throw new AssertionError("a volume that writes asynchronously is not written synchronously");
        }
        public void writeZeroes(long lba, int n, boolean fua) throws java.io.IOException { inner.writeZeroes(lba, n, fua); }
        public void flush() { }
        public void close() { }
        @Override
        public boolean waitsForPeers() { return true; }
        @Override
        public boolean writesAsync() { return true; }
        @Override
        public CompletableFuture<Void> writeAsync(long lba, int n, ScatterList d, ScatterList m, boolean fua) {
            startedOn.add(Thread.currentThread().getName());
            inner.write(lba, n, d, m, fua); // stored (copied) now; answered later
            CompletableFuture<Void> f = new CompletableFuture<>();
            pending.add(f);
            return f;
        }
    }

    @Test
    void writesOfAVolumeThatCompletesThemStartInPlaceAndAreAnsweredWhenTheyComplete() throws Exception {
        BlockFormat f = BlockFormat.of(4096, 8);
        LaterVolume later = new LaterVolume(f);
        try (VolumeStore m = VolumeStore.inMemory()) {
            m.attach(later);
            TargetService t = new TargetService(m);
            byte[] bytes = new byte[4096];
            java.util.Arrays.fill(bytes, (byte) 7);
            CompletableFuture<Completion> answer = new CompletableFuture<>();
            CompletableFuture<String> answeredOn = new CompletableFuture<>();
            t.execute(BlockRequest.write("r", 3, 1, ScatterList.wrap(bytes), null, Protection.insertStrip(3), false), PiDuty.of(Protection.insertStrip(3)),
                    c -> {
                        answeredOn.complete(Thread.currentThread().getName());
                        answer.complete(c);
                    });
            assertEquals(java.util.List.of(Thread.currentThread().getName()), later.startedOn, "started where it arrived");
            assertTrue(!answer.isDone(), "not answered before the volume completes it");
            assertEquals(1, m.activity("r").inFlight(), "inside the volume until it completes");
            Thread completer = new Thread(() -> later.pending.get(0).complete(null), "completer");
            completer.start();
            assertEquals(Status.SUCCESS, answer.get(30, TimeUnit.SECONDS).status());
            assertEquals("completer", answeredOn.get());
            assertEquals(0, m.activity("r").inFlight());
            ScatterList back = ScatterList.wrap(new byte[4096]);
            assertEquals(Status.SUCCESS, t.executeNow(BlockRequest.read("r", 3, 1, back, null, Protection.insertStrip(3)))
                    .status(), "the PI inserted on the way in checks on the way out");

            // A write the volume fails: a media error with its reason.
            CompletableFuture<Completion> failed = new CompletableFuture<>();
            t.execute(BlockRequest.write("r", 4, 1, ScatterList.wrap(bytes), null, Protection.insertStrip(4), false), PiDuty.of(Protection.insertStrip(4)),
                    failed::complete);
            later.pending.get(1).completeExceptionally(new java.io.IOException("no quorum"));
            Completion c = failed.get(30, TimeUnit.SECONDS);
            assertEquals(Status.MEDIA_ERROR, c.status());
            assertTrue(c.toString().contains("no quorum"), c.toString());

            // A write whose PI fails is refused before the volume sees it.
            ScatterList meta = ScatterList.wrap(new byte[8]); // an all-zero tuple: the guard fails
            CompletableFuture<Completion> refused = new CompletableFuture<>();
            t.execute(BlockRequest.write("r", 5, 1, ScatterList.wrap(bytes), meta,
                    Protection.pass(io.pistore.integrity.CheckFlags.ALL, 5, 0, 0), false), PiDuty.of(Protection.pass(io.pistore.integrity.CheckFlags.ALL, 5, 0, 0)), refused::complete);
            assertEquals(Status.GUARD_CHECK, refused.get(30, TimeUnit.SECONDS).status());
            assertEquals(2, later.startedOn.size(), "the refused write never reached the volume");
        }
    }
}
