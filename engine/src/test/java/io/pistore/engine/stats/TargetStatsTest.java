package io.pistore.engine.stats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.PiDuty;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TargetStatsTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    private static Completion run(TargetHandler h, BlockRequest r, boolean checkedInTransport) throws Exception {
        CompletableFuture<Completion> f = new CompletableFuture<>();
        PiDuty d = PiDuty.of(r.protection());
        h.execute(r, checkedInTransport ? d.checkedBy(PiDuty.Hop.WIRE) : d, f::complete);
        return f.get(10, TimeUnit.SECONDS);
    }

    @Test
    void countsRequestsBytesLatencyAndFuaByOperation() throws Exception {
        try (VolumeStore store = VolumeStore.inMemory()) {
            store.create("v", F, 64);
            TargetStats stats = new TargetStats(1); // every request timed
            TargetHandler h = stats.measure("tcp", new TargetService(store));
            byte[] data = new byte[4 * 512];
            assertEquals(Status.SUCCESS, run(h, BlockRequest.write("v", 0, 4, ScatterList.wrap(data), null,
                    Protection.insertStrip(F, 0), true), false).status());
            assertEquals(Status.SUCCESS, run(h, BlockRequest.read("v", 0, 4, ScatterList.wrap(new byte[4 * 512]), null,
                    Protection.insertStrip(F, 0)), false).status());
            assertEquals(Status.SUCCESS, run(h, BlockRequest.flush("v"), false).status());
            assertEquals(Status.LBA_OUT_OF_RANGE, run(h, BlockRequest.read("v", 63, 4,
                    ScatterList.wrap(new byte[4 * 512]), null, Protection.insertStrip(F, 63)), false).status());

            VolumeCounters v = stats.transport("tcp").volume("v");
            assertEquals(1, v.requests(Operation.WRITE));
            assertEquals(2, v.requests(Operation.READ));
            assertEquals(1, v.requests(Operation.FLUSH));
            assertEquals(2048, v.bytes(Operation.WRITE));
            assertEquals(2048, v.bytes(Operation.READ), "a failed read moves no bytes");
            assertEquals(1, v.failures(Operation.READ, Status.LBA_OUT_OF_RANGE));
            assertEquals(1, v.fuaWrites());
            assertEquals(0, v.inFlight());
            long inBuckets = 0;
            for (long n : v.latencyBuckets(Operation.READ)) {
                inBuckets += n;
            }
            assertEquals(2, inBuckets, "every read has one latency");
        }
    }

    @Test
    void countsEveryRequestAndTimesASampleOfThem() throws Exception {
        try (VolumeStore store = VolumeStore.inMemory()) {
            store.create("v", F, 64);
            TargetStats stats = new TargetStats(8);
            TargetHandler h = stats.measure("local", new TargetService(store));
            int n = 800;
            for (int i = 0; i < n; i++) {
                assertEquals(Status.SUCCESS, run(h, BlockRequest.read("v", i % 64, 1,
                        ScatterList.wrap(new byte[512]), null, Protection.insertStrip(F, i % 64)), false).status());
            }
            VolumeCounters v = stats.transport("local").volume("v");
            assertEquals(n, v.requests(Operation.READ), "every request is counted");
            assertEquals(n * 512L, v.bytes(Operation.READ));
            assertEquals(0, v.inFlight());
            long timed = 0;
            for (long b : v.latencyBuckets(Operation.READ)) {
                timed += b;
            }
            // one in 8 at random: about 100 of 800; none or all would take odds below 1e-40
            assertTrue(timed > 0 && timed < n, timed + " of " + n + " timed");
        }
    }

    @Test
    void refusesALatencySampleOutOfRange() {
        assertThrows(IllegalArgumentException.class, () -> new TargetStats(0));
        assertThrows(IllegalArgumentException.class, () -> new TargetStats(1025));
    }

    @Test
    void placesPiErrorsByWhereTheyWereCaught() throws Exception {
        try (VolumeStore store = VolumeStore.inMemory()) {
            Volume vol = store.create("v", F, 64);
            TargetStats stats = new TargetStats();
            TargetHandler h = stats.measure("local", new TargetService(store));

            // a write whose data changed after its PI was made: the engine refuses it (target)
            byte[] data = new byte[512];
            byte[] meta = new byte[8];
            PiContext ctx = PiContext.builder(F).initialRefTag(F.refTagOf(5)).build();
            Pi.generate(ctx, ScatterList.wrap(data), ScatterList.wrap(meta), 1);
            data[7] ^= 1;
            Completion w = run(h, BlockRequest.write("v", 5, 1, ScatterList.wrap(data), ScatterList.wrap(meta),
                    Protection.pass(CheckFlags.ALL, F.refTagOf(5), 0, 0xFFFF), false), false);
            assertEquals(Status.GUARD_CHECK, w.status());

            // the same block stored as it is, behind the engine's back: a read finds it bad (rest)
            vol.write(5, 1, ScatterList.wrap(data), ScatterList.wrap(meta), false);
            Completion r = run(h, BlockRequest.read("v", 5, 1, ScatterList.wrap(new byte[512]), null,
                    Protection.insertStrip(F, 5)), false);
            assertEquals(Status.GUARD_CHECK, r.status());

            // the transport's own catch
            h.piErrorInTransport("v", Operation.WRITE, PiErrorKind.REF_TAG);

            VolumeCounters v = stats.transport("local").volume("v");
            assertEquals(1, v.piErrors(PiErrorKind.GUARD, PiErrorPlace.TARGET));
            assertEquals(1, v.piErrors(PiErrorKind.GUARD, PiErrorPlace.REST));
            assertEquals(1, v.piErrors(PiErrorKind.REF_TAG, PiErrorPlace.WIRE));
            assertEquals(0, v.piErrors(PiErrorKind.APP_TAG, PiErrorPlace.TARGET));
            assertEquals(1, v.failures(Operation.WRITE, Status.GUARD_CHECK));
        }
    }

    @Test
    void countsConnectionsOpenAndOpened() {
        TargetStats stats = new TargetStats();
        TargetHandler h = stats.measure("tcp", new TargetService(VolumeStore.inMemory()));
        h.connected("a");
        h.connected("b");
        h.disconnected("a", "closed by peer");
        assertEquals(1, stats.transport("tcp").connectionsOpen());
        assertEquals(2, stats.transport("tcp").connectionsOpened());
    }

    /** A measured host connection serves metadata-only reads exactly where the connection it wraps does. */
    @Test
    void aMeasuredHostConnectionReadsMetadataOnlyAsItsConnectionDoes() {
        TargetStats stats = new TargetStats();
        for (boolean serves : new boolean[] {true, false}) {
            io.pistore.spi.HostConnection c = new io.pistore.spi.HostConnection() {
                @Override
                public java.util.List<io.pistore.spi.VolumeInfo> volumes() {
                    return java.util.List.of();
                }

                @Override
                public int queueCount() {
                    return 0;
                }

                @Override
                public io.pistore.spi.HostQueue queue(int index) {
                    throw new IndexOutOfBoundsException(index);
                }

                @Override
                public boolean readsMetadataOnly() {
                    return serves;
                }

                @Override
                public void close() {
                }
            };
            assertEquals(serves, stats.measureHost("tcp", c).readsMetadataOnly());
        }
    }

    @Test
    void latencyBucketsRunFromOneMicrosecondToTenSeconds() {
        assertEquals(0, LatencyBuckets.indexOf(0));
        assertEquals(0, LatencyBuckets.indexOf(1_000));
        assertEquals(1, LatencyBuckets.indexOf(1_001));
        assertEquals(1_000L, LatencyBuckets.upperNanos(0));
        assertEquals(10_000_000_000L, LatencyBuckets.upperNanos(LatencyBuckets.finiteCount() - 1));
        assertEquals(LatencyBuckets.finiteCount(), LatencyBuckets.indexOf(11_000_000_000L), "slower: the last bucket");
        for (int i = 1; i < LatencyBuckets.finiteCount(); i++) {
            assertEquals(i, LatencyBuckets.indexOf(LatencyBuckets.upperNanos(i)));
            assertEquals(i, LatencyBuckets.indexOf(LatencyBuckets.upperNanos(i - 1) + 1));
        }
    }
}
