package io.pistore.engine.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class CachingVolumeTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    private static byte[][] read(Volume v, long lba, int n) throws Exception {
        byte[] d = new byte[n * 512];
        byte[] m = new byte[n * 8];
        v.read(lba, n, ScatterList.wrap(d), ScatterList.wrap(m));
        return new byte[][] {d, m};
    }

    @Test
    void readsWritesAndZeroesMatchTheVolumeBehind() throws Exception {
        MemoryVolume inner = new MemoryVolume("c", F, 256);
        CachingVolume v = new CachingVolume(inner, 64 * 1024);
        Random r = new Random(5);
        for (int round = 0; round < 500; round++) {
            long lba = r.nextInt(250);
            int n = 1 + r.nextInt(6);
            switch (r.nextInt(3)) {
                case 0: {
                    byte[] d = new byte[n * 512];
                    byte[] m = new byte[n * 8];
                    r.nextBytes(d);
                    r.nextBytes(m);
                    v.write(lba, n, ScatterList.wrap(d), ScatterList.wrap(m), false);
                    break;
                }
                case 1:
                    v.writeZeroes(lba, n, false);
                    break;
                default: {
                    byte[][] a = read(v, lba, n);
                    byte[][] b = read(inner, lba, n);
                    assertArrayEquals(b[0], a[0], "data at " + lba);
                    assertArrayEquals(b[1], a[1], "metadata at " + lba);
                }
            }
        }
    }

    @Test
    void concurrentReadersNeverLeaveAStaleCopyBehind() throws Exception {
        MemoryVolume inner = new MemoryVolume("c", F, 64);
        CachingVolume v = new CachingVolume(new SlowReads(inner), 8 * (512 + 8 + 64)); // 8 blocks: constant misses
        java.util.concurrent.atomic.AtomicIntegerArray acked = new java.util.concurrent.atomic.AtomicIntegerArray(64);
        ExecutorService ex = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int tt = t;
                fs.add(ex.submit(() -> { // writers: each owns half the blocks, values only grow
                    for (int gen = 1; gen <= 300; gen++) {
                        for (int b = tt; b < 64; b += 2) {
                            byte[] d = new byte[512];
                            ByteBuffer.wrap(d).putInt(0, gen);
                            v.write(b, 1, ScatterList.wrap(d), ScatterList.wrap(new byte[8]), false);
                            acked.set(b, gen);
                        }
                    }
                    return null;
                }));
            }
            for (int t = 0; t < 2; t++) {
                fs.add(ex.submit(() -> { // readers: fill the cache after misses, as fast as they can
                    Random r = new Random();
                    for (int i = 0; i < 3000; i++) {
                        int lba = r.nextInt(60);
                        int n = 1 + r.nextInt(4);
                        int[] floor = new int[n];
                        for (int k = 0; k < n; k++) {
                            floor[k] = acked.get(lba + k);
                        }
                        ByteBuffer got = ByteBuffer.wrap(read(v, lba, n)[0]);
                        for (int k = 0; k < n; k++) {
                            int seen = got.getInt(k * 512);
                            if (seen < floor[k]) {
                                throw new AssertionError("block " + (lba + k) + " read generation " + seen
                                        + " after generation " + floor[k] + " was acknowledged: a stale cached copy");
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            ex.shutdownNow();
        }
        for (int b = 0; b < 64; b++) {
            assertEquals(300, ByteBuffer.wrap(read(v, b, 1)[0]).getInt(0), "cached block " + b);
            assertArrayEquals(read(inner, b, 1)[0], read(v, b, 1)[0]);
        }
    }

    /** Reads that take a while after fetching their bytes: widens the window a fill could go stale in. */
    private static final class SlowReads implements Volume {
        private final Volume v;

        SlowReads(Volume v) {
            this.v = v;
        }

        @Override public String name() { return v.name(); }
        @Override public BlockFormat format() { return v.format(); }
        @Override public long blockCount() { return v.blockCount(); }

        @Override
        public void read(long lba, int blocks, ScatterList data, ScatterList metadata) throws java.io.IOException {
            v.read(lba, blocks, data, metadata);
            java.util.concurrent.locks.LockSupport.parkNanos(50_000); // not a synchronisation: the widened window
        }

        @Override
        public void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua) throws java.io.IOException {
            v.write(lba, blocks, data, metadata, fua);
        }

        @Override public void writeZeroes(long lba, int blocks, boolean fua) throws java.io.IOException { v.writeZeroes(lba, blocks, fua); }
        @Override public void flush() { }
        @Override public void close() { }
    }
}
