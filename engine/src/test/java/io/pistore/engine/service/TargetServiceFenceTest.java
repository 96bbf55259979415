package io.pistore.engine.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.FencedWriteException;
import io.pistore.engine.volume.MemoryVolume;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.PiDuty;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.WriteFence;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A request's write fence reaches the volume through the store's gate, for writes and for zero
 * writes and deallocations, and a volume's refusal of a stale copy is answered FENCED.
 */
class TargetServiceFenceTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);

    /** Refuses a fence older than the newest it saw, as a replicated volume does; records what reached it. */
    private static final class FencingVolume implements Volume {
        final MemoryVolume inner = new MemoryVolume("r", F, 16);
        final List<WriteFence> seen = new CopyOnWriteArrayList<>();
        volatile long newest;

        private void admit(WriteFence f) throws FencedWriteException {
            seen.add(f);
            if (f.epoch() < newest) {
                throw new FencedWriteException("stale copy of " + f);
            }
            newest = f.epoch();
        }

        public String name() { return inner.name(); }
        public BlockFormat format() { return F; }
        public long blockCount() { return inner.blockCount(); }
        public void read(long lba, int n, ScatterList d, ScatterList m) throws IOException { inner.read(lba, n, d, m); }
        public void write(long lba, int n, ScatterList d, ScatterList m, boolean fua) {
            throw new AssertionError("written asynchronously");
        }
        public void writeZeroes(long lba, int n, boolean fua) {
            throw new AssertionError("a request with a fence comes with it");
        }
        public void flush() { }
        public void close() { }
        @Override
        public boolean waitsForPeers() { return true; }
        @Override
        public boolean writesAsync() { return true; }
        @Override
        public CompletableFuture<Void> writeAsync(long lba, int n, ScatterList d, ScatterList m, boolean fua, PiDuty duty,
                WriteFence fence) {
            try {
                admit(fence);
                inner.write(lba, n, d, m, fua);
                return CompletableFuture.completedFuture(null);
            } catch (IOException e) {
                return CompletableFuture.failedFuture(e);
            }
        }
        @Override
        public void writeZeroes(long lba, int n, boolean fua, WriteFence fence) throws IOException {
            admit(fence);
            inner.writeZeroes(lba, n, fua);
        }
    }

    private static Completion run(TargetService t, BlockRequest r) throws Exception {
        CompletableFuture<Completion> c = new CompletableFuture<>();
        t.execute(r, PiDuty.of(r.protection()), c::complete);
        return c.get(30, TimeUnit.SECONDS);
    }

    @Test
    void theFenceReachesTheVolumeAndAStaleCopyIsAnsweredFenced() throws Exception {
        FencingVolume v = new FencingVolume();
        try (VolumeStore m = VolumeStore.inMemory()) {
            m.attach(v);
            TargetService t = new TargetService(m);
            ScatterList one = ScatterList.wrap(new byte[4096]);
            WriteFence newer = new WriteFence(9, 2);
            WriteFence older = new WriteFence(9, 1);
            BlockRequest w = BlockRequest.write("r", 2, 1, one, null, Protection.insertStrip(2), false);
            assertEquals(Status.SUCCESS, run(t, w.withFence(newer)).status());
            Completion stale = run(t, w.withFence(older));
            assertEquals(Status.FENCED, stale.status());
            assertTrue(stale.message().contains("stale copy of fence 9/1"), stale.message());
            assertEquals(Status.FENCED, run(t, BlockRequest.writeZeroes("r", 2, 1, false).withFence(older)).status());
            assertEquals(Status.FENCED, run(t, BlockRequest.deallocate("r", 2, 1).withFence(older)).status());
            assertEquals(Status.SUCCESS, run(t, BlockRequest.writeZeroes("r", 2, 1, false).withFence(newer)).status());
            assertEquals(List.of(newer, older, older, older, newer), v.seen);
        }
    }
}
