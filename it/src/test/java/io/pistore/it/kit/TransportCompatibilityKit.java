package io.pistore.it.kit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.engine.service.TargetService;
import io.pistore.integrity.UnwrittenBlock;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.BlockTransportProvider;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportOptions;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The transport compatibility kit: one suite every transport passes. A subclass names its
 * transport and where to listen; the kit runs a real target (in-memory volumes behind the engine's
 * {@link TargetService}) and a host connection through that transport, in this JVM.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class TransportCompatibilityKit {
    protected static final long BLOCKS = 1024;

    /** The provider name, e.g. {@code local}. */
    protected abstract String transportName();

    /** The transport's settings (default: none). */
    protected TransportOptions transportOptions() {
        return TransportOptions.NONE;
    }

    /** The address to listen on, e.g. {@code 127.0.0.1:0}; the listener reports the real one. */
    protected abstract String listenAddress();

    protected VolumeStore store;
    protected BlockTransport transport;
    protected TargetListener listener;
    protected HostConnection connection;
    protected final Map<String, BlockFormat> formats = new LinkedHashMap<>();

    static Stream<String> volumeNames() {
        return Stream.of("v512_0", "v512_8", "v512_8_ip", "v4096_8", "v4096_8_t2", "v4096_8_t3", "v4096_16_crc64",
                "v4096_16_crc32c", "v4096_64_last", "v4096_16_t3");
    }

    /** The volumes every kit target serves, by name, each of {@link #BLOCKS} blocks. */
    public static Map<String, BlockFormat> kitFormats() {
        Map<String, BlockFormat> m = new LinkedHashMap<>();
        m.put("v512_0", BlockFormat.of(512, 0));
        m.put("v512_8", BlockFormat.of(512, 8));
        m.put("v512_8_ip", BlockFormat.of(512, 8).withGuard(GuardType.IP_CHECKSUM));
        m.put("v4096_8", BlockFormat.of(4096, 8));
        m.put("v4096_8_t2", BlockFormat.of(4096, 8).withType(PiType.TYPE_2));
        m.put("v4096_8_t3", BlockFormat.of(4096, 8).withType(PiType.TYPE_3));
        m.put("v4096_16_crc64", BlockFormat.of(4096, 16));
        m.put("v4096_16_crc32c", BlockFormat.of(4096, 16).withGuard(GuardType.CRC32C));
        m.put("v4096_64_last", BlockFormat.of(4096, 64, GuardType.CRC64, PiType.TYPE_1, PiLocation.LAST));
        m.put("v4096_16_t3", BlockFormat.of(4096, 16).withType(PiType.TYPE_3));
        return m;
    }

    /** An in-memory store with the kit's volumes. */
    public static VolumeStore kitStore() throws java.io.IOException {
        VolumeStore s = VolumeStore.inMemory();
        for (Map.Entry<String, BlockFormat> e : kitFormats().entrySet()) {
            s.create(e.getKey(), e.getValue(), BLOCKS);
        }
        return s;
    }

    @BeforeEach
    void startTarget() throws Exception {
        formats.putAll(kitFormats());
        BlockTransportProvider p = Transports.find(transportName(), transportOptions());
        transport = p.create(transportOptions());
        listener = startListener(transport);
        connection = connect(new ConnectOptions(4, 16));
    }

    /**
     * Starts the target the kit talks to. By default: in this JVM, the kit's volumes in memory
     * behind the engine's {@link TargetService}, listening on {@link #listenAddress()}.
     */
    protected TargetListener startListener(BlockTransport t) throws Exception {
        store = kitStore();
        return t.listen(listenAddress(), new TargetService(store));
    }

    /** Connects to the kit's target; a subclass may wrap the connection (a different submit path). */
    protected HostConnection connect(ConnectOptions options) throws java.io.IOException {
        return transport.connect(listener.address(), options);
    }

    @AfterEach
    void stopTarget() throws Exception {
        if (connection != null) connection.close();
        if (listener != null) listener.close();
        if (transport != null) transport.close();
        if (store != null) store.close();
    }

    /**
     * Checks, after a round trip on {@code vol}, that the transport took the path it claims for the
     * volume's format (a transport with several paths overrides it: rdma's integrity MRs or software
     * PI); nothing by default.
     */
    protected void assertPathRan(String vol, BlockFormat f) {
    }

    protected BlockDevice device(String name) {
        return BlockDevice.open(connection, name);
    }

    protected static byte[] random(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    /** Splits an array into segments of random sizes, alternating heap and direct buffers. */
    protected static ScatterList fragmented(byte[] a, Random r, int maxSeg) {
        List<ByteBuffer> segs = new ArrayList<>();
        int off = 0;
        while (off < a.length) {
            int n = Math.min(a.length - off, 1 + r.nextInt(maxSeg));
            ByteBuffer b = r.nextBoolean() ? ByteBuffer.allocateDirect(n) : ByteBuffer.allocate(n);
            b.put(a, off, n).flip();
            segs.add(b);
            off += n;
        }
        return ScatterList.of(segs);
    }

    private static Completion get(CompletableFuture<Completion> f) throws Exception {
        return f.get(60, TimeUnit.SECONDS);
    }

    protected static PiContext hostContext(BlockFormat f, long lba, int app) {
        return PiContext.builder(f).initialRefTag(lba & f.guard().refTagMask()).appTag(app).build();
    }

    // ------------------------------------------------------------------ discovery

    @Test
    void discoveryListsEveryVolumeWithItsFormat() {
        Map<String, VolumeInfo> seen = new LinkedHashMap<>();
        for (VolumeInfo v : connection.volumes()) {
            seen.put(v.name(), v);
        }
        assertEquals(formats.keySet(), seen.keySet());
        for (Map.Entry<String, BlockFormat> e : formats.entrySet()) {
            assertEquals(e.getValue(), seen.get(e.getKey()).format(), e.getKey());
            assertEquals(BLOCKS, seen.get(e.getKey()).blockCount());
        }
    }

    // ------------------------------------------------------------------ round trips

    @ParameterizedTest
    @MethodSource("volumeNames")
    void insertStripRoundTrip(String vol) throws Exception {
        BlockDevice d = device(vol);
        int ds = d.format().dataSize();
        Random r = new Random(vol.hashCode());
        byte[] data = random(r, 8 * ds);
        d.writeSync(17, ByteBuffer.wrap(data));
        ByteBuffer back = ByteBuffer.allocateDirect(8 * ds);
        d.readSync(17, back);
        byte[] got = new byte[8 * ds];
        back.get(0, got);
        assertArrayEquals(data, got);
        assertPathRan(vol, d.format());
    }

    @ParameterizedTest
    @MethodSource("volumeNames")
    void passRoundTripKeepsTheHostsMetadata(String vol) throws Exception {
        BlockDevice d = device(vol);
        BlockFormat f = d.format();
        if (f.metadataSize() == 0) {
            return; // pass mode needs metadata; covered by insertStripRoundTrip
        }
        Random r = new Random(vol.hashCode() + 1);
        int n = 5;
        long lba = 100;
        byte[] data = random(r, n * f.dataSize());
        byte[] meta = random(r, n * f.metadataSize()); // bytes outside the tuple are the host's own
        PiContext ctx = hostContext(f, lba, 0x1234);
        Pi.generate(ctx, ScatterList.wrap(data), ScatterList.wrap(meta), n);
        Protection p = Protection.pass(CheckFlags.ALL, ctx.initialRefTag(), 0x1234, 0xFFFF);
        d.writeSync(lba, ByteBuffer.wrap(data), ByteBuffer.wrap(meta), p);
        byte[] data2 = new byte[data.length];
        byte[] meta2 = new byte[meta.length];
        d.readSync(lba, ByteBuffer.wrap(data2), ByteBuffer.wrap(meta2), p);
        assertArrayEquals(data, data2);
        assertArrayEquals(meta, meta2);
        assertEquals(null, Pi.verify(ctx, ScatterList.wrap(data2), ScatterList.wrap(meta2), n));
        assertPathRan(vol, f);
    }

    // ------------------------------------------------------------------ check flags

    @ParameterizedTest
    @MethodSource("volumeNames")
    void badGuardOnWriteIsRefusedAndStoresNothing(String vol) throws Exception {
        BlockDevice d = device(vol);
        BlockFormat f = d.format();
        if (!f.hasPi()) {
            return;
        }
        Random r = new Random(vol.hashCode() + 2);
        int n = 4;
        long lba = 200;
        byte[] before = random(r, n * f.dataSize());
        d.writeSync(lba, ByteBuffer.wrap(before));
        byte[] data = random(r, n * f.dataSize());
        byte[] meta = new byte[n * f.metadataSize()];
        PiContext ctx = hostContext(f, lba, 0);
        Pi.generate(ctx, ScatterList.wrap(data), ScatterList.wrap(meta), n);
        data[2 * f.dataSize() + 7] ^= 0x10; // block 2's data changes after its PI was made
        Protection p = Protection.pass(CheckFlags.ALL, ctx.initialRefTag(), 0, 0xFFFF);
        Completion c = get(d.write(lba, ScatterList.wrap(data), ScatterList.wrap(meta), p, false));
        assertEquals(Status.GUARD_CHECK, c.status(), c.toString());
        assertEquals(lba + 2, c.errorLba());
        assertNotNull(c.piError());
        assertEquals(PiErrorKind.GUARD, c.piError().kind());
        assertTrue(c.piError().expected() != c.piError().actual());
        byte[] after = new byte[before.length];
        d.readSync(lba, ByteBuffer.wrap(after));
        assertArrayEquals(before, after, "a failing write must store nothing");
    }

    @ParameterizedTest
    @MethodSource("volumeNames")
    void checkFlagsChooseWhatIsChecked(String vol) throws Exception {
        BlockDevice d = device(vol);
        BlockFormat f = d.format();
        if (!f.hasPi()) {
            return;
        }
        Random r = new Random(vol.hashCode() + 3);
        int n = 3;
        long lba = 300;
        byte[] data = random(r, n * f.dataSize());
        byte[] meta = new byte[n * f.metadataSize()];
        PiContext ctx = hostContext(f, lba, 0x00AB);
        Pi.generate(ctx, ScatterList.wrap(data), ScatterList.wrap(meta), n);
        // Wrong app tag expectation: only the app check notices, and the mask can hide it.
        Protection wrongApp = Protection.pass(CheckFlags.APP, ctx.initialRefTag(), 0x00AC, 0xFFFF);
        Completion c = get(d.write(lba, ScatterList.wrap(data), ScatterList.wrap(meta), wrongApp, false));
        assertEquals(Status.APP_TAG_CHECK, c.status(), c.toString());
        assertEquals(lba, c.errorLba());
        Protection masked = Protection.pass(CheckFlags.APP, ctx.initialRefTag(), 0x00AC, 0xFF00);
        assertEquals(Status.SUCCESS, get(d.write(lba, ScatterList.wrap(data), ScatterList.wrap(meta), masked, false)).status());
        Protection guardOnly = Protection.pass(CheckFlags.GUARD, ctx.initialRefTag(), 0x00AC, 0xFFFF);
        assertEquals(Status.SUCCESS, get(d.write(lba, ScatterList.wrap(data), ScatterList.wrap(meta), guardOnly, false)).status());
        // Wrong initial ref tag: the ref check fails (Types 1 and 2) or is never done (Type 3).
        Protection wrongRef = Protection.pass(CheckFlags.REF, ctx.initialRefTag() + 1, 0, 0);
        Completion cr = get(d.write(lba, ScatterList.wrap(data), ScatterList.wrap(meta), wrongRef, false));
        if (f.type() == PiType.TYPE_3) {
            assertEquals(Status.SUCCESS, cr.status(), cr.toString());
        } else {
            assertEquals(Status.REF_TAG_CHECK, cr.status(), cr.toString());
            assertEquals(ctx.initialRefTag() + 1, cr.piError().expected());
            assertEquals(ctx.initialRefTag(), cr.piError().actual());
        }
        // No checks at all: a bad guard is stored as is, and a later checked read reports it.
        meta[f.tupleOffsetInMetadata()] ^= 1;
        Protection none = Protection.pass(CheckFlags.NONE, ctx.initialRefTag(), 0, 0);
        assertEquals(Status.SUCCESS, get(d.write(lba, ScatterList.wrap(data), ScatterList.wrap(meta), none, false)).status());
        Completion rc = get(d.read(lba, ScatterList.wrap(new byte[data.length]), ScatterList.wrap(new byte[meta.length]),
                Protection.pass(CheckFlags.GUARD, ctx.initialRefTag(), 0, 0)));
        assertEquals(Status.GUARD_CHECK, rc.status(), rc.toString());
        assertEquals(lba, rc.errorLba());
        Completion strip = get(d.read(lba, ScatterList.wrap(new byte[data.length])));
        assertEquals(Status.GUARD_CHECK, strip.status(), "a stripped read checks too: " + strip);
        assertPathRan(vol, f);
    }

    // ------------------------------------------------------------------ error statuses

    @Test
    void badRequestsGetTheirStatusAndChangeNothing() throws Exception {
        BlockDevice d = device("v4096_8");
        byte[] keep = random(new Random(7), 4096);
        d.writeSync(BLOCKS - 1, ByteBuffer.wrap(keep));
        ScatterList one = ScatterList.wrap(new byte[4096]);
        assertEquals(Status.LBA_OUT_OF_RANGE, get(d.write(BLOCKS, one)).status());
        assertEquals(Status.LBA_OUT_OF_RANGE, get(d.write(-1, one)).status());
        assertEquals(Status.LBA_OUT_OF_RANGE,
                get(d.write(BLOCKS - 1, ScatterList.wrap(new byte[2 * 4096]))).status());
        assertEquals(Status.LBA_OUT_OF_RANGE, get(d.writeZeroes(BLOCKS - 1, 2)).status());
        assertEquals(Status.INVALID_FIELD, get(d.submit(BlockRequest.write("v4096_8", 0, 0, ScatterList.of(), null,
                d.insertStrip(0), false))).status());
        assertEquals(Status.INVALID_FIELD, get(d.submit(BlockRequest.write("v4096_8", 0, 2, one, null,
                d.insertStrip(0), false))).status(), "data shorter than the block count");
        assertEquals(Status.INVALID_FIELD, get(d.submit(BlockRequest.write("v4096_8", 0, 1, one, null,
                Protection.pass(CheckFlags.ALL, 0, 0, 0), false))).status(), "pass without metadata");
        assertEquals(Status.INVALID_FIELD, get(d.submit(BlockRequest.write("v4096_8", 0, 1, one,
                ScatterList.wrap(new byte[7]), Protection.pass(CheckFlags.ALL, 0, 0, 0), false))).status());
        assertEquals(Status.INVALID_FIELD, get(d.submit(BlockRequest.write("v4096_8", 0, 1, one, null,
                Protection.insertStrip(1L << 40), false))).status(), "ref tag wider than 32 bits");
        assertEquals(Status.NO_SUCH_VOLUME, get(d.submit(BlockRequest.write("nope", 0, 1, one, null,
                d.insertStrip(0), false))).status());
        byte[] after = new byte[4096];
        d.readSync(BLOCKS - 1, ByteBuffer.wrap(after));
        assertArrayEquals(keep, after);
    }

    // ------------------------------------------------------------------ zeroes and deallocate

    @ParameterizedTest
    @MethodSource("volumeNames")
    void zeroedAndDeallocatedBlocksReadAsZeroWithEscapedPi(String vol) throws Exception {
        BlockDevice d = device(vol);
        BlockFormat f = d.format();
        Random r = new Random(vol.hashCode() + 4);
        int n = 4;
        d.writeSync(500, ByteBuffer.wrap(random(r, n * f.dataSize())));
        assertEquals(Status.SUCCESS, get(d.writeZeroes(500, 2)).status());
        assertEquals(Status.SUCCESS, get(d.deallocate(502, 1)).status());
        byte[] got = random(r, n * f.dataSize());
        d.readSync(500, ByteBuffer.wrap(got)); // strip with all checks
        assertArrayEquals(new byte[3 * f.dataSize()], Arrays.copyOf(got, 3 * f.dataSize()));
        if (f.metadataSize() > 0) {
            byte[] data = new byte[f.dataSize()];
            byte[] meta = new byte[f.metadataSize()];
            d.readSync(501, ByteBuffer.wrap(data), ByteBuffer.wrap(meta),
                    Protection.pass(CheckFlags.ALL, 501, 0x5555, 0xFFFF));
            assertArrayEquals(UnwrittenBlock.metadata(f), meta);
        }
    }

    // ------------------------------------------------------------------ concurrency

    @Test
    void concurrentWritersAcrossQueuesLoseNothing() throws Exception {
        BlockDevice d = device("v4096_8");
        int threads = 4;
        int perThread = 64;
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int tt = t;
                fs.add(ex.submit(() -> {
                    Random r = new Random(tt);
                    List<CompletableFuture<Completion>> pending = new ArrayList<>();
                    for (int i = 0; i < perThread; i++) {
                        long lba = tt * perThread + i;
                        byte[] b = new byte[4096];
                        Arrays.fill(b, (byte) lba);
                        b[0] = (byte) tt;
                        CompletableFuture<Completion> f;
                        while (true) {
                            f = d.submit(tt, BlockRequest.write("v4096_8", lba, 1, ScatterList.wrap(b), null,
                                    d.insertStrip(lba), false));
                            Completion c = f.getNow(null);
                            if (c == null || c.status() != Status.QUEUE_FULL) break;
                            Thread.onSpinWait();
                        }
                        pending.add(f);
                    }
                    for (CompletableFuture<Completion> f : pending) {
                        Completion c = f.join();
                        if (!c.isSuccess()) throw new AssertionError(c.toString());
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
        for (int t = 0; t < threads; t++) {
            for (int i = 0; i < perThread; i++) {
                long lba = t * perThread + i;
                byte[] b = new byte[4096];
                d.readSync(lba, ByteBuffer.wrap(b));
                assertEquals((byte) t, b[0], "lba " + lba);
                assertEquals((byte) lba, b[4095], "lba " + lba);
            }
        }
    }

    // ------------------------------------------------------------------ scatter lists

    @ParameterizedTest
    @MethodSource("volumeNames")
    void largeFragmentedScatterListsRoundTrip(String vol) throws Exception {
        BlockDevice d = device(vol);
        BlockFormat f = d.format();
        Random r = new Random(vol.hashCode() + 5);
        int n = (256 * 1024) / f.dataSize();
        byte[] data = random(r, n * f.dataSize());
        byte[] meta = new byte[n * f.metadataSize()];
        PiContext ctx = hostContext(f, 100, 0);
        if (f.hasPi()) {
            Pi.generate(ctx, ScatterList.wrap(data), ScatterList.wrap(meta), n);
        }
        ScatterList dl = fragmented(data, r, 3000);
        ScatterList ml = f.metadataSize() == 0 ? null : fragmented(meta, r, 5);
        Protection p = f.hasPi() ? Protection.pass(CheckFlags.ALL, ctx.initialRefTag(), 0, 0xFFFF) : Protection.NONE;
        Completion c = get(d.write(100, dl, ml, p, true));
        assertEquals(Status.SUCCESS, c.status(), c.toString());
        byte[] back = new byte[data.length];
        ScatterList bl = fragmented(back, r, 777);
        byte[] mback = new byte[meta.length];
        ScatterList mbl = f.metadataSize() == 0 ? null : fragmented(mback, r, 3);
        Completion rc = get(d.read(100, bl, mbl, p));
        assertEquals(Status.SUCCESS, rc.status(), rc.toString());
        assertArrayEquals(data, bl.toArray());
        if (mbl != null) {
            assertArrayEquals(meta, mbl.toArray());
        }
        assertPathRan(vol, f);
    }

    @Test
    void flushAndFuaComplete() throws Exception {
        BlockDevice d = device("v4096_16_crc64");
        assertEquals(Status.SUCCESS, get(d.flush()).status());
        byte[] data = random(new Random(9), 4096);
        byte[] meta = new byte[16];
        PiContext ctx = hostContext(d.format(), 3, 0);
        Pi.generate(ctx, ScatterList.wrap(data), ScatterList.wrap(meta), 1);
        assertEquals(Status.SUCCESS, get(d.write(3, ScatterList.wrap(data), ScatterList.wrap(meta),
                Protection.pass(CheckFlags.ALL, 3, 0, 0xFFFF), true)).status());
    }

    // ------------------------------------------------------------------ close while busy

    @Test
    void closeWhileBusyCompletesEveryRequestAndTheTargetGoesOn() throws Exception {
        BlockDevice d = device("v4096_8");
        List<CompletableFuture<Completion>> all = new ArrayList<>();
        byte[] b = new byte[4096];
        for (int i = 0; i < 200; i++) {
            all.add(d.submit(i % connection.queueCount(), BlockRequest.write("v4096_8", i % BLOCKS, 1,
                    ScatterList.wrap(b), null, d.insertStrip(i % BLOCKS), false)));
        }
        connection.close();
        for (CompletableFuture<Completion> f : all) {
            Completion c = f.get(30, TimeUnit.SECONDS);
            assertTrue(c.isSuccess() || c.status() == Status.TRANSPORT_ERROR || c.status() == Status.QUEUE_FULL,
                    c.toString());
        }
        Completion after = d.submit(0, BlockRequest.flush("v4096_8")).get(30, TimeUnit.SECONDS);
        assertEquals(Status.TRANSPORT_ERROR, after.status(), "a closed connection refuses new requests");
        connection = connect(new ConnectOptions(1, 4));
        BlockDevice again = BlockDevice.open(connection, "v4096_8");
        again.writeSync(1, ByteBuffer.wrap(b));
        byte[] back = new byte[4096];
        again.readSync(1, ByteBuffer.wrap(back));
        assertArrayEquals(b, back);
    }

    @Test
    void queueDepthIsBoundedAndNothingIsLost() throws Exception {
        connection.close();
        connection = connect(new ConnectOptions(1, 2));
        BlockDevice d = device("v512_8");
        List<CompletableFuture<Completion>> all = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            all.add(d.submit(0, BlockRequest.read("v512_8", i, 1, ScatterList.wrap(new byte[512]), null,
                    d.insertStrip(i))));
            assertTrue(connection.queue(0).inFlight() <= 2, "in flight beyond the depth");
        }
        for (CompletableFuture<Completion> f : all) {
            Completion c = f.get(30, TimeUnit.SECONDS);
            if (!c.isSuccess() && c.status() != Status.QUEUE_FULL) {
                fail(c.toString());
            }
        }
    }
}
