package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.PiDuty;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.tcp.TcpConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A host asks a running target for its volumes again (VOLUMES on each queue's connection): a volume
 * created, deleted or grown since the host connected is then served as the target has it, on every
 * queue, with the ids of that queue's own connection.
 */
class VolumeRelistTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);

    /** A target whose volumes the test adds, drops and replaces while hosts are connected. */
    static final class Shelf implements TargetHandler {
        final Map<String, MemoryHandler> byName = new ConcurrentSkipListMap<>();

        MemoryHandler put(String name, BlockFormat f, long blocks) {
            MemoryHandler h = new MemoryHandler(name, f, blocks);
            byName.put(name, h);
            return h;
        }

        @Override
        public List<VolumeInfo> volumes() {
            List<VolumeInfo> l = new ArrayList<>();
            for (MemoryHandler h : byName.values()) {
                l.addAll(h.volumes());
            }
            return l;
        }

        @Override
        public void execute(BlockRequest r, PiDuty duty, Consumer<Completion> done) {
            MemoryHandler h = byName.get(r.volume());
            if (h == null) {
                done.accept(Completion.failure(Status.NO_SUCH_VOLUME, "no volume " + r.volume() + " here"));
                return;
            }
            h.execute(r, duty, done);
        }
    }

    TcpTransport target;
    TcpTransport host;
    Shelf shelf;
    TargetListener listener;

    @BeforeEach
    void setUp() throws Exception {
        target = new TcpTransport(TcpConfig.defaults());
        host = new TcpTransport(TcpConfig.defaults());
        shelf = new Shelf();
        shelf.put("v", F, 64);
        listener = target.listen("127.0.0.1:0", shelf);
    }

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    static Completion write(HostConnection c, int q, String volume, long lba, byte[] data) throws Exception {
        return c.queue(q).submit(BlockRequest.write(volume, lba, 1, ScatterList.wrap(data), null,
                Protection.insertStrip(lba), false)).get(10, TimeUnit.SECONDS);
    }

    static Completion read(HostConnection c, int q, String volume, long lba, byte[] into) throws Exception {
        return c.queue(q).submit(BlockRequest.read(volume, lba, 1, ScatterList.wrap(into), null,
                Protection.insertStrip(lba))).get(10, TimeUnit.SECONDS);
    }

    static List<String> names(List<VolumeInfo> l) {
        List<String> n = new ArrayList<>();
        for (VolumeInfo v : l) {
            n.add(v.name());
        }
        return n;
    }

    @Test
    void aVolumeCreatedAfterConnectIsServedOnEveryQueueOnceRelisted() throws Exception {
        try (HostConnection c = host.connect(listener.address(), new ConnectOptions(2, 4))) {
            MemoryHandler x = shelf.put("x", BlockFormat.of(512, 8), 32);
            assertEquals(List.of("v"), names(c.volumes()), "not heard of until asked");
            Completion unknown = write(c, 0, "x", 1, new byte[512]);
            assertEquals(Status.NO_SUCH_VOLUME, unknown.status(), unknown.toString());

            assertEquals(List.of("v", "x"), names(c.relistVolumes().get(10, TimeUnit.SECONDS)));
            assertEquals(List.of("v", "x"), names(c.volumes()));
            Random rnd = new Random(7);
            for (int q = 0; q < 2; q++) {
                byte[] d = new byte[512];
                rnd.nextBytes(d);
                Completion w = write(c, q, "x", 3 + q, d);
                assertEquals(Status.SUCCESS, w.status(), "queue " + q + ": " + w);
                byte[] back = new byte[512];
                assertEquals(Status.SUCCESS, read(c, q, "x", 3 + q, back).status());
                assertArrayEquals(d, back, "queue " + q);
                assertTrue(x.written.containsKey(3L + q), "stored in x's handler, not another volume's");
            }
            assertTrue(shelf.byName.get("v").written.isEmpty(), "nothing reached v");
        }
    }

    @Test
    void aDeletedVolumeIsGoneAndAGrownOneServesItsNewBlocksOnceRelisted() throws Exception {
        shelf.put("x", F, 16);
        try (HostConnection c = host.connect(listener.address(), new ConnectOptions(1, 4))) {
            shelf.byName.remove("x");
            shelf.put("v", F, 128); // grown
            Completion beyond = write(c, 0, "v", 100, new byte[4096]);
            assertFalse(beyond.isSuccess(), "the host still knows 64 blocks: " + beyond);

            List<VolumeInfo> now = c.relistVolumes().get(10, TimeUnit.SECONDS);
            assertEquals(List.of(new VolumeInfo("v", 128, F)), now);
            byte[] d = new byte[4096];
            new Random(3).nextBytes(d);
            assertEquals(Status.SUCCESS, write(c, 0, "v", 100, d).status());
            byte[] back = new byte[4096];
            assertEquals(Status.SUCCESS, read(c, 0, "v", 100, back).status());
            assertArrayEquals(d, back);
            Completion gone = write(c, 0, "x", 1, new byte[4096]);
            assertEquals(Status.NO_SUCH_VOLUME, gone.status(), gone.toString());
        }
    }

    @Test
    void relistsAtOnceShareOneAnswerAndTheQueueGoesOn() throws Exception {
        try (HostConnection c = host.connect(listener.address(), new ConnectOptions(1, 4))) {
            shelf.put("x", F, 8);
            List<java.util.concurrent.CompletableFuture<List<VolumeInfo>>> all = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                all.add(c.relistVolumes());
            }
            byte[] d = new byte[4096];
            assertEquals(Status.SUCCESS, write(c, 0, "v", 2, d).status(), "block requests pass beside them");
            for (java.util.concurrent.CompletableFuture<List<VolumeInfo>> f : all) {
                assertEquals(List.of("v", "x"), names(f.get(10, TimeUnit.SECONDS)));
            }
        }
    }
}
