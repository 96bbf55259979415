package io.pistore.engine.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
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
        t.execute(r, false, c -> {
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
    void everyRequestOfAVolumeThatWaitsForPeersCompletesOnAPeerWaitThread() throws Exception {
        BlockFormat f = BlockFormat.of(4096, 8);
        io.pistore.engine.volume.MemoryVolume inner = new io.pistore.engine.volume.MemoryVolume("r", f, 16);
        io.pistore.engine.volume.Volume remote = new io.pistore.engine.volume.Volume() {
            public String name() { return inner.name(); }
            public BlockFormat format() { return inner.format(); }
            public long blockCount() { return inner.blockCount(); }
            public void read(long lba, int n, ScatterList d, ScatterList m) throws java.io.IOException { inner.read(lba, n, d, m); }
            public void write(long lba, int n, ScatterList d, ScatterList m, boolean fua) throws java.io.IOException {
                inner.write(lba, n, d, m, fua);
            }
            public void writeZeroes(long lba, int n, boolean fua) throws java.io.IOException { inner.writeZeroes(lba, n, fua); }
            public void flush() { }
            public void close() { }
            @Override
            public boolean waitsForPeers() { return true; }
        };
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
}
