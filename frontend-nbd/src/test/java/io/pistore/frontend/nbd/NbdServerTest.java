package io.pistore.frontend.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.service.TargetService;
import io.pistore.integrity.UnwrittenBlock;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportCapabilities;
import io.pistore.testkit.Eventually;
import io.pistore.spi.net.PolitePoll;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The NBD protocol as a client sees it, against file volumes reached through the local transport,
 * with the default options (connections poll for the next request before blocking);
 * {@link NbdServerNoPollTest} runs the same with polling off.
 */
@Timeout(60)
class NbdServerTest {
    static final int OPT_EXPORT_NAME = 1;
    static final int OPT_ABORT = 2;
    static final int OPT_LIST = 3;
    static final int OPT_STARTTLS = 5;
    static final int OPT_INFO = 6;
    static final int REP_ACK = 1;
    static final int REP_SERVER = 2;
    static final int REP_INFO = 3;
    static final int REP_ERR_UNSUP = 0x80000001;
    static final int REP_ERR_INVALID = 0x80000003;
    static final int REP_ERR_UNKNOWN = 0x80000006;
    static final int READ = 0;
    static final int WRITE = 1;
    static final int FLUSH = 3;
    static final int TRIM = 4;
    static final int WRITE_ZEROES = 6;
    static final int BLOCK_STATUS = 7;
    static final int FUA = 1;
    static final int NO_HOLE = 2;
    static final int EIO = 5;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final long A_SIZE = 1 << 20;

    @TempDir
    Path dir;

    VolumeStore store;
    BlockTransport transport;
    TargetListener listener;
    HostConnection host;
    NbdServer server;
    final List<String> log = new java.util.concurrent.CopyOnWriteArrayList<>(); // written by connection threads while a test reads it

    @BeforeEach
    void start() throws IOException {
        store = VolumeStore.open(dir);
        store.create("a", BlockFormat.of(4096, 8), A_SIZE / 4096);
        store.create("b", BlockFormat.of(512, 8), 512);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        host = transport.connect(listener.address(), new ConnectOptions(2, 64));
        server = NbdServer.start("127.0.0.1:0", host, options().handshakeTimeoutMillis(2000).log(log::add));
    }

    /** The server's options before the timeout and log are set (subclasses change how it waits). */
    NbdServer.Options options() {
        return new NbdServer.Options();
    }

    @AfterEach
    void stop() throws IOException {
        server.close();
        host.close();
        listener.close();
        transport.close();
        store.close();
    }

    InetSocketAddress addr() {
        return server.address();
    }

    NbdTestClient connect(String export) throws IOException {
        NbdTestClient c = NbdTestClient.open(addr());
        List<NbdTestClient.OptionReply> r = c.go(export);
        assertEquals(REP_ACK, r.get(r.size() - 1).type(), "GO " + export);
        return c;
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    // ------------------------------------------------------------------ waiting for requests

    /** 200 writes and 200 reads of block-sized data at queue depth 1 on export "a", each checked. */
    static void depthOneTraffic(NbdTestClient c) throws IOException {
        for (int i = 0; i < 200; i++) {
            byte[] d = random(4096, i);
            long off = (i % 64) * 4096L;
            assertEquals(0, c.write(off, d), "write " + i);
            assertArrayEquals(d, c.read(off, 4096), "read " + i);
        }
    }

    @Test
    void aPollingConnectionCatchesRequestsAndStopsPollingWhenIdle() throws Exception {
        // A 10 ms cap: the gaps of this client's depth-1 loop are far shorter, so the loop polls.
        try (NbdServer s = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().spinMicros(10_000));
             NbdTestClient c = NbdTestClient.open(s.address())) {
            List<NbdTestClient.OptionReply> r = c.go("a");
            assertEquals(REP_ACK, r.get(r.size() - 1).type());
            // On a busy machine a round's gaps can all outlast the cap (the thread lost its CPU):
            // more rounds, until one is caught, bounded.
            PolitePoll.Counts w = s.waitCounters();
            for (int round = 0; round < 20 && (w.polls() == 0 || w.caught() == 0); round++) {
                depthOneTraffic(c);
                w = s.waitCounters();
            }
            assertTrue(w.polls() > 0 && w.caught() > 0, "requests caught while polling: " + w);
            // An idle connection neither polls nor wakes: its counters stop, and stay so for 300 ms.
            Eventually.steady("the idle connection to block", Duration.ofMillis(300), Duration.ofSeconds(10),
                    s::waitCounters);
            depthOneTraffic(c); // and serves again after being idle
        }
    }

    @Test
    void theClosingLineKeepsThePollingFiguresForTheDebugLog() throws Exception {
        List<String> info = new java.util.concurrent.CopyOnWriteArrayList<>();
        List<String> debug = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (NbdServer s = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().spinMicros(10_000)
                .log(info::add).debugLog(debug::add))) {
            try (NbdTestClient c = NbdTestClient.open(s.address())) {
                c.go("a");
                depthOneTraffic(c);
            }
            Eventually.await("the connection's closing line", Duration.ofSeconds(10),
                    () -> info.stream().anyMatch(l -> l.contains("connection ended")));
            // the debug line follows the closing line, on the connection's thread
            Eventually.await("the connection's debug line", Duration.ofSeconds(10), () -> !debug.isEmpty());
        }
        String ended = info.stream().filter(l -> l.contains("connection ended")).findFirst().orElseThrow();
        assertTrue(ended.contains("connection ended: closed by the client"), ended);
        assertTrue(info.stream().noneMatch(l -> l.contains("polls")), "no internal figures at info: " + info);
        assertEquals(1, debug.size(), debug.toString());
        assertTrue(debug.get(0).contains("waited for input: polls "), debug.get(0));
    }

    @Test
    void aClientThatVanishesWithRepliesOwedIsNotLoggedAsTheServerStopping() throws Exception {
        NbdTestClient c = connect("a");
        for (int i = 0; i < 64; i++) { // 64 MiB of replies it never reads
            c.request(0, READ, 0, A_SIZE, null);
        }
        c.out.flush();
        c.socket.setSoLinger(true, 0); // gone at once: a reset, no NBD_CMD_DISC
        c.close();
        Eventually.await("the connection's closing line", Duration.ofSeconds(10),
                () -> log.stream().anyMatch(l -> l.contains("connection ended")));
        String ended = log.stream().filter(l -> l.contains("connection ended")).findFirst().orElseThrow();
        assertFalse(ended.contains("server stopping"), "the server did not stop; the client went: " + ended);
        try (NbdTestClient next = connect("a")) {
            assertEquals(4096, next.read(0, 4096).length, "the server serves the next client");
        }
    }

    @Test
    void aConnectionWithPollingOffBlocksForEveryRequest() throws Exception {
        try (NbdServer s = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().spinMicros(0));
             NbdTestClient c = NbdTestClient.open(s.address())) {
            List<NbdTestClient.OptionReply> r = c.go("a");
            assertEquals(REP_ACK, r.get(r.size() - 1).type());
            depthOneTraffic(c);
            PolitePoll.Counts w = s.waitCounters();
            assertEquals(0, w.polls(), "never polls: " + w);
            assertEquals(0, w.caught());
            assertTrue(w.blockingWaits() >= 400, "one blocking wait per depth-1 request: " + w);
        }
    }

    // ------------------------------------------------------------------ handshake

    @Test
    void greetingIsFixedNewstyleAndListNamesEveryVolume() throws IOException {
        try (NbdTestClient c = new NbdTestClient(addr())) {
            assertEquals(3, c.greeting(), "FIXED_NEWSTYLE | NO_ZEROES");
            c.clientFlags(3);
            c.option(OPT_LIST, new byte[0]);
            List<NbdTestClient.OptionReply> r = c.optionReplies();
            assertEquals(3, r.size());
            List<String> names = new ArrayList<>();
            for (NbdTestClient.OptionReply s : r.subList(0, 2)) {
                assertEquals(REP_SERVER, s.type());
                ByteBuffer b = ByteBuffer.wrap(s.data());
                byte[] n = new byte[b.getInt()];
                b.get(n);
                names.add(new String(n, StandardCharsets.UTF_8));
            }
            assertEquals(List.of("a", "b"), names);
            assertEquals(REP_ACK, r.get(2).type());
            c.option(OPT_LIST, new byte[] {1});
            assertEquals(REP_ERR_INVALID, c.optionReply().type(), "LIST takes no data");
        }
    }

    @Test
    void infoReportsSizeFlagsAndBlockSizesThenGoEntersTransmission() throws IOException {
        try (NbdTestClient c = NbdTestClient.open(addr())) {
            c.option(OPT_INFO, NbdTestClient.infoData("a", 3, 1, 2));
            Map<Integer, ByteBuffer> infos = new HashMap<>();
            NbdTestClient.OptionReply last = null;
            for (NbdTestClient.OptionReply r : c.optionReplies()) {
                if (r.type() == REP_INFO) {
                    ByteBuffer b = ByteBuffer.wrap(r.data());
                    infos.put((int) b.getShort(), b);
                }
                last = r;
            }
            assertEquals(REP_ACK, last.type());
            ByteBuffer export = infos.get(0);
            assertEquals(A_SIZE, export.getLong());
            int flags = export.getShort() & 0xFFFF;
            for (int bit : new int[] {0, 2, 3, 5, 6, 8}) {
                assertTrue((flags & (1 << bit)) != 0, "transmission flag bit " + bit + " in 0x"
                        + Integer.toHexString(flags));
            }
            assertTrue((flags & 2) == 0, "not read-only");
            ByteBuffer sizes = infos.get(3);
            assertEquals(1, sizes.getInt(), "minimum: unaligned requests are read-modify-write");
            assertEquals(4096, sizes.getInt(), "preferred: the volume's data block");
            int max = sizes.getInt();
            assertTrue(max >= 1 << 20 && Integer.bitCount(max) == 1, "maximum " + max);
            assertEquals("a", StandardCharsets.UTF_8.decode(infos.get(1)).toString());
            assertTrue(StandardCharsets.UTF_8.decode(infos.get(2)).toString().contains("4096+8"));

            c.option(OPT_INFO, NbdTestClient.infoData("nope", 3));
            NbdTestClient.OptionReply unknown = c.optionReply();
            assertEquals(REP_ERR_UNKNOWN, unknown.type());
            assertTrue(new String(unknown.data(), StandardCharsets.UTF_8).contains("nope"));
            byte[] bad = NbdTestClient.infoData("a", 3);
            bad[3] = 100; // name length past the data
            c.option(OPT_INFO, bad);
            assertEquals(REP_ERR_INVALID, c.optionReply().type());
            c.option(OPT_INFO, new byte[] {0, 0});
            assertEquals(REP_ERR_INVALID, c.optionReply().type(), "too short");
            c.option(OPT_INFO, NbdTestClient.infoData("", 3));
            assertEquals(REP_ERR_UNKNOWN, c.optionReply().type(), "two volumes: no default export");

            List<NbdTestClient.OptionReply> go = c.go("b");
            assertEquals(REP_ACK, go.get(go.size() - 1).type());
            byte[] d = random(1024, 1);
            assertEquals(0, c.write(512, d));
            assertArrayEquals(d, c.read(512, 1024));
        }
    }

    /** LIST_META_CONTEXT / SET_META_CONTEXT option data: export name, then the queries. */
    static byte[] metaData(String export, String... queries) {
        byte[] n = export.getBytes(StandardCharsets.UTF_8);
        int len = 4 + n.length + 4;
        for (String q : queries) {
            len += 4 + q.length();
        }
        ByteBuffer b = ByteBuffer.allocate(len);
        b.putInt(n.length).put(n).putInt(queries.length);
        for (String q : queries) {
            b.putInt(q.length()).put(q.getBytes(StandardCharsets.US_ASCII));
        }
        return b.array();
    }

    /** The (length, flags) pairs of a block status chunk for context 1. */
    static List<long[]> extents(NbdTestClient.Reply r) {
        assertEquals(5, r.type(), "NBD_REPLY_TYPE_BLOCK_STATUS");
        assertEquals(1, r.flags() & 1, "the last chunk");
        ByteBuffer b = ByteBuffer.wrap(r.payload());
        assertEquals(1, b.getInt(), "the id of base:allocation");
        List<long[]> list = new ArrayList<>();
        while (b.hasRemaining()) {
            list.add(new long[] {Integer.toUnsignedLong(b.getInt()), b.getInt()});
        }
        return list;
    }

    static String text(List<long[]> extents) {
        StringBuilder sb = new StringBuilder();
        for (long[] e : extents) {
            sb.append(e[0]).append(':').append(e[1]).append(' ');
        }
        return sb.toString().trim();
    }

    @Test
    void metaContextsAndBlockStatusReportUnwrittenBlocksAsHoles() throws IOException {
        try (NbdTestClient c = NbdTestClient.open(addr())) {
            c.option(9, metaData("a"));
            List<NbdTestClient.OptionReply> list = c.optionReplies();
            assertEquals(2, list.size());
            assertEquals(4, list.get(0).type(), "NBD_REP_META_CONTEXT");
            ByteBuffer ctx = ByteBuffer.wrap(list.get(0).data());
            assertEquals(1, ctx.getInt());
            assertEquals("base:allocation", StandardCharsets.US_ASCII.decode(ctx).toString());
            c.option(9, metaData("a", "qemu:dirty-bitmap:x"));
            assertEquals(REP_ACK, c.optionReply().type(), "an unknown context is simply not listed");
            c.option(10, metaData("a", "base:allocation"));
            assertEquals(REP_ERR_INVALID, c.optionReply().type(), "SET before structured replies");
            c.option(10, new byte[] {0, 0, 0, 9});
            assertEquals(REP_ERR_INVALID, c.optionReply().type());
            assertTrue(c.structuredReplies());
            c.option(10, metaData("nope", "base:allocation"));
            assertEquals(REP_ERR_UNKNOWN, c.optionReply().type());
            c.option(10, metaData("a", "base:allocation"));
            List<NbdTestClient.OptionReply> set = c.optionReplies();
            assertEquals(List.of(4, REP_ACK), List.of(set.get(0).type(), set.get(1).type()));
            assertEquals(REP_ACK, c.go("a").get(2).type());

            // Never written: one hole of the whole request (HOLE|ZERO = 3).
            c.request(0, BLOCK_STATUS, 0, 65536, null);
            assertEquals("65536:3", text(extents(c.reply())));
            // Block 2 written; then [0, 8K) hole, [8K, 12K) data, the rest hole.
            c.request(0, WRITE, 8192, 4096, random(4096, 3));
            assertEquals(0, c.reply().error());
            c.request(0, BLOCK_STATUS, 0, 32768, null);
            assertEquals("8192:3 4096:0 20480:3", text(extents(c.reply())));
            // Unaligned edges are cut at the request's bounds; REQ_ONE: only the first extent.
            c.request(0, BLOCK_STATUS, 100, 10000, null);
            assertEquals("8092:3 1908:0", text(extents(c.reply())));
            c.request(1 << 3, BLOCK_STATUS, 0, 32768, null);
            assertEquals("8192:3", text(extents(c.reply())));
            // Trimmed, the block is a hole again; written with NO_HOLE zeroes, it is data.
            c.request(0, TRIM, 8192, 4096, null);
            assertEquals(0, c.reply().error());
            c.request(0, BLOCK_STATUS, 0, 32768, null);
            assertEquals("32768:3", text(extents(c.reply())));
            c.request(1 << 1, WRITE_ZEROES, 0, 4096, null);
            assertEquals(0, c.reply().error());
            c.request(0, BLOCK_STATUS, 0, 8192, null);
            assertEquals("4096:0 4096:3", text(extents(c.reply())));
            // The last block of the export; past the end and length 0 are EINVAL.
            c.request(0, BLOCK_STATUS, A_SIZE - 4096, 4096, null);
            assertEquals("4096:3", text(extents(c.reply())));
            c.request(0, BLOCK_STATUS, A_SIZE - 4096, 8192, null);
            assertEquals(EINVAL, c.reply().error());
            c.request(0, BLOCK_STATUS, 0, 0, null);
            assertEquals(EINVAL, c.reply().error());
        }
    }

    @Test
    void blockStatusNeedsTheContextAndAContextForAnotherExportIsDropped() throws IOException {
        try (NbdTestClient c = NbdTestClient.open(addr())) {
            assertTrue(c.structuredReplies());
            c.option(10, metaData("b", "base:allocation"));
            assertEquals(4, c.optionReplies().get(0).type());
            assertEquals(REP_ACK, c.go("a").get(2).type());
            c.request(0, BLOCK_STATUS, 0, 4096, null);
            NbdTestClient.Reply r = c.reply();
            assertEquals(EINVAL, r.error(), "selected for b, not for a");
            assertTrue(new String(r.payload(), StandardCharsets.UTF_8).contains("base:allocation"));
        }
        try (NbdTestClient c = connect("a")) {
            c.request(0, BLOCK_STATUS, 0, 4096, null);
            assertEquals(EINVAL, c.reply().error(), "simple replies: no block status");
        }
    }

    @Test
    void unknownOptionsAreRefusedAndTheHandshakeGoesOn() throws IOException {
        try (NbdTestClient c = NbdTestClient.open(addr())) {
            c.option(99, new byte[] {1, 2, 3});
            NbdTestClient.OptionReply r = c.optionReply();
            assertEquals(99, r.option());
            assertEquals(REP_ERR_UNSUP, r.type());
            c.option(OPT_STARTTLS, new byte[0]);
            assertEquals(REP_ERR_UNSUP, c.optionReply().type());
            assertEquals(REP_ACK, c.go("a").get(2).type());
            assertEquals(0, c.command(FLUSH, 0, 0, 0));
        }
    }

    @Test
    void abortIsAcknowledgedAndEndsTheSession() throws IOException {
        try (NbdTestClient c = NbdTestClient.open(addr())) {
            c.option(OPT_ABORT, new byte[0]);
            assertEquals(REP_ACK, c.optionReply().type());
            assertTrue(c.closedByServer());
        }
    }

    @Test
    void exportNameOptionSendsSizeAndFlagsWithOrWithoutZeroes() throws IOException {
        try (NbdTestClient c = NbdTestClient.open(addr())) {
            c.option(OPT_EXPORT_NAME, "a".getBytes(StandardCharsets.UTF_8));
            assertEquals(A_SIZE, c.in.readLong());
            assertTrue((c.in.readUnsignedShort() & 1) != 0);
            byte[] d = random(4096, 2);
            assertEquals(0, c.write(0, d), "no zeroes followed: the next bytes are the write's reply");
            assertArrayEquals(d, c.read(0, 4096));
        }
        try (NbdTestClient c = new NbdTestClient(addr())) {
            c.greeting();
            c.clientFlags(1);
            c.option(OPT_EXPORT_NAME, "b".getBytes(StandardCharsets.UTF_8));
            assertEquals(512 * 512, c.in.readLong());
            c.in.readUnsignedShort();
            c.in.readFully(new byte[124]);
            assertEquals(0, c.command(FLUSH, 0, 0, 0));
        }
        try (NbdTestClient c = NbdTestClient.open(addr())) {
            c.option(OPT_EXPORT_NAME, "missing".getBytes(StandardCharsets.UTF_8));
            assertTrue(c.closedByServer(), "EXPORT_NAME cannot fail with a reply");
        }
    }

    // ------------------------------------------------------------------ commands

    @Test
    void writeReadFlushFuaTrimAndWriteZeroes() throws IOException {
        try (NbdTestClient c = connect("a")) {
            byte[] d = random(3 * 4096, 3);
            assertEquals(0, c.write(4096, d));
            assertArrayEquals(d, c.read(4096, d.length));
            byte[] e = random(4096, 4);
            assertEquals(0, c.write(8 * 4096, e, FUA));
            assertArrayEquals(e, c.read(8 * 4096, 4096));
            assertEquals(0, c.command(FLUSH, 0, 0, 0));

            assertEquals(0, c.command(TRIM, 0, 4096, 4096));
            assertArrayEquals(new byte[4096], c.read(4096, 4096));
            assertArrayEquals(java.util.Arrays.copyOfRange(d, 4096, 3 * 4096), c.read(2 * 4096, 2 * 4096));

            assertEquals(0, c.command(WRITE_ZEROES, 0, 2 * 4096, 4096));
            assertArrayEquals(new byte[4096], c.read(2 * 4096, 4096));
            assertEquals(0, c.command(WRITE_ZEROES, NO_HOLE | FUA, 8 * 4096, 4096));
            assertArrayEquals(new byte[4096], c.read(8 * 4096, 4096));
            assertArrayEquals(java.util.Arrays.copyOfRange(d, 2 * 4096, 3 * 4096), c.read(3 * 4096, 4096));
        }
        // Without NO_HOLE the block reads as unwritten; with NO_HOLE it was written, with real PI.
        Volume v = store.get("a");
        BlockFormat f = v.format();
        byte[] unwritten = UnwrittenBlock.metadata(f);
        assertArrayEquals(unwritten, metadataOf(v, 2));
        assertFalse(java.util.Arrays.equals(unwritten, metadataOf(v, 8)), "NO_HOLE allocates");
        assertArrayEquals(unwritten, metadataOf(v, 1), "trimmed");
    }

    static byte[] metadataOf(Volume v, long lba) throws IOException {
        ByteBuffer d = ByteBuffer.allocate(v.format().dataSize());
        ByteBuffer m = ByteBuffer.allocate(v.format().metadataSize());
        v.read(lba, 1, ScatterList.of(d), ScatterList.of(m));
        return m.array();
    }

    @Test
    void unalignedRequestsAreReadModifyWriteAndKeepNeighbours() throws IOException {
        byte[] model = new byte[4 * 4096];
        try (NbdTestClient c = connect("a")) {
            byte[] base = random(model.length, 5);
            System.arraycopy(base, 0, model, 0, base.length);
            assertEquals(0, c.write(0, base));
            byte[] across = random(300, 6);
            assertEquals(0, c.write(4000, across), "crosses the first block boundary");
            System.arraycopy(across, 0, model, 4000, across.length);
            // Eight pipelined writes to disjoint bytes of one block: none may lose another's bytes.
            List<Long> cookies = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                byte[] part = random(100, 10 + i);
                int off = 2 * 4096 + 7 + i * 500;
                System.arraycopy(part, 0, model, off, part.length);
                cookies.add(c.request(i % 2 == 0 ? FUA : 0, WRITE, off, part.length, part));
            }
            for (int i = 0; i < 8; i++) {
                NbdTestClient.Reply r = c.reply();
                assertEquals(0, r.error());
                assertTrue(cookies.remove(r.cookie()));
            }
            assertArrayEquals(model, c.read(0, model.length));
            assertArrayEquals(java.util.Arrays.copyOfRange(model, 4090, 4190), c.read(4090, 100), "unaligned read");
            assertEquals(0, c.command(WRITE_ZEROES, 0, 3 * 4096 + 10, 4000));
            java.util.Arrays.fill(model, 3 * 4096 + 10, 3 * 4096 + 4010, (byte) 0);
            assertEquals(0, c.command(TRIM, 0, 100, 200), "trim inside one block: nothing to deallocate");
            assertArrayEquals(model, c.read(0, model.length));
        }
    }

    @Test
    void badRequestsGetErrorsAndChangeNothing() throws IOException {
        try (NbdTestClient c = connect("a")) {
            byte[] d = random(4096, 7);
            assertEquals(0, c.write(0, d));
            c.request(0, READ, A_SIZE - 4096, 8192, null);
            assertEquals(EINVAL, c.reply().error(), "read past the end");
            assertEquals(ENOSPC, c.write(A_SIZE - 4096, random(8192, 8)), "write past the end");
            assertEquals(EINVAL, c.write(0, random(4096, 9), 1 << 7), "unknown flag");
            assertEquals(EINVAL, c.write(0, random(4096, 9), NO_HOLE), "NO_HOLE is for WRITE_ZEROES");
            assertEquals(EINVAL, c.command(42, 0, 0, 4096), "unknown command");
            assertEquals(EINVAL, c.command(TRIM, 0, -4096L, 4096), "offset past 2^63");
            assertEquals(ENOSPC, c.command(WRITE_ZEROES, 0, A_SIZE, 1));
            assertArrayEquals(d, c.read(0, 4096), "nothing written by a failed request");
            assertTrue(log.stream().anyMatch(l -> l.contains("unknown command 42")), log.toString());
        }
    }

    @Test
    void writeLargerThanTheMaximumIsRefusedAfterItsPayloadAndTheConnectionGoesOn() throws IOException {
        int max = NbdExport.maxPayload(BlockFormat.of(4096, 8), TransportCapabilities.MAX_TRANSFER_BYTES);
        store.create("c", BlockFormat.of(4096, 8), 2L * max / 4096);
        try (NbdTestClient c = connect("c")) {
            assertEquals(EINVAL, c.write(0, random(max + 4096, 17)), "larger than the advertised maximum");
            c.request(0, READ, 0, max + 4096, null);
            NbdTestClient.Reply r = c.reply(0);
            assertEquals(EINVAL, r.error());
            assertArrayEquals(new byte[4096], c.read(0, 4096), "nothing written");
            byte[] d = random(max, 18);
            assertEquals(0, c.write(max, d), "the maximum itself works");
            assertArrayEquals(d, c.read(max, max));
        }
    }

    @Test
    void structuredRepliesCarryDataChunksAndErrorChunks() throws IOException {
        try (NbdTestClient c = NbdTestClient.open(addr())) {
            assertTrue(c.structuredReplies());
            assertEquals(REP_ACK, c.go("a").get(2).type());
            byte[] d = random(8192, 11);
            assertEquals(0, c.write(4096, d));
            long cookie = c.request(0, READ, 4096, 8192, null);
            NbdTestClient.Reply r = c.reply();
            assertTrue(r.structured() && r.done());
            assertEquals(1, r.type(), "OFFSET_DATA");
            assertEquals(cookie, r.cookie());
            ByteBuffer p = ByteBuffer.wrap(r.payload());
            assertEquals(4096, p.getLong());
            byte[] got = new byte[8192];
            p.get(got);
            assertArrayEquals(d, got);
            c.request(0, READ, A_SIZE, 4096, null);
            NbdTestClient.Reply e = c.reply();
            assertTrue(e.structured() && e.done());
            assertEquals(0x8001, e.type(), "ERROR");
            assertEquals(EINVAL, e.error());
            assertEquals(0, c.command(FLUSH, 0, 0, 0));
        }
    }

    // ------------------------------------------------------------------ PI failures

    /**
     * Flips a bit of block {@code lba}'s stored guard in the volume's metadata file, after a
     * checkpoint has moved every block from the journal there.
     */
    void corruptStoredPi(String volume, long lba) throws IOException {
        store.checkpoint(volume);
        try (FileChannel m = FileChannel.open(dir.resolve(volume + ".meta"), StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            long at = lba * 8;
            m.read(b, at);
            b.put(0, (byte) (b.get(0) ^ 0x01)).rewind();
            m.write(b, at);
        }
    }

    @Test
    void corruptStoredPiIsEioAtTheFirstBadOffsetNeverData() throws IOException {
        byte[] d = random(4 * 4096, 12);
        try (NbdTestClient c = connect("a")) {
            assertEquals(0, c.write(0, d));
            assertEquals(0, c.command(FLUSH, 0, 0, 0));
        }
        corruptStoredPi("a", 2);
        try (NbdTestClient c = NbdTestClient.open(addr())) {
            assertTrue(c.structuredReplies());
            assertEquals(REP_ACK, c.go("a").get(2).type());
            c.request(0, READ, 0, 4 * 4096, null);
            NbdTestClient.Reply r = c.reply();
            assertEquals(0x8002, r.type(), "ERROR_OFFSET, and no data chunk before it");
            assertTrue(r.done());
            ByteBuffer p = ByteBuffer.wrap(r.payload());
            assertEquals(EIO, p.getInt());
            byte[] msg = new byte[p.getShort()];
            p.get(msg);
            String m = new String(msg, StandardCharsets.UTF_8);
            assertTrue(m.contains("lba=2") && m.contains("guard"), m);
            assertEquals(2 * 4096, p.getLong(), "the first byte of the bad block");

            c.request(0, READ, 2 * 4096 + 100, 50, null);
            NbdTestClient.Reply u = c.reply();
            assertEquals(0x8002, u.type());
            assertEquals(2 * 4096 + 100, ByteBuffer.wrap(u.payload(), u.payload().length - 8, 8).getLong(),
                    "inside the request");
            // A partial write into the bad block must read it first: EIO, nothing written.
            c.request(0, WRITE, 2 * 4096 + 10, 10, new byte[10]);
            NbdTestClient.Reply w = c.reply();
            assertEquals(EIO, w.error());
            // The good blocks still read.
            c.request(0, READ, 0, 2 * 4096, null);
            assertEquals(1, c.reply().type());
        }
        try (NbdTestClient c = connect("a")) {
            c.request(0, READ, 4096, 2 * 4096, null);
            NbdTestClient.Reply r = c.reply(2 * 4096);
            assertFalse(r.structured());
            assertEquals(EIO, r.error());
            assertEquals(0, r.payload().length, "no payload after a simple error reply");
            assertArrayEquals(java.util.Arrays.copyOfRange(d, 3 * 4096, 4 * 4096), c.read(3 * 4096, 4096),
                    "the stream is still in step");
            // An aligned overwrite replaces the bad block and its PI.
            byte[] fresh = random(4096, 13);
            assertEquals(0, c.write(2 * 4096, fresh));
            assertArrayEquals(fresh, c.read(2 * 4096, 4096));
        }
        assertTrue(log.stream().anyMatch(l -> l.contains("PI check failed")), log.toString());
    }

    // ------------------------------------------------------------------ malformed input

    @Test
    void malformedFramesEndOnlyTheirConnection() throws IOException {
        try (NbdTestClient good = connect("a")) {
            byte[] d = random(4096, 14);
            assertEquals(0, good.write(0, d));
            try (NbdTestClient c = connect("a")) {
                c.out.writeInt(0x12345678);
                c.out.write(new byte[24]);
                c.out.flush();
                assertTrue(c.closedByServer(), "bad request magic");
            }
            try (NbdTestClient c = connect("a")) {
                c.request(0, WRITE, 0, 64 << 20, null);
                assertTrue(c.closedByServer(), "a 64 MiB write is not read");
            }
            try (NbdTestClient c = NbdTestClient.open(addr())) {
                c.out.writeLong(NbdTestClient.IHAVEOPT);
                c.out.writeInt(OPT_LIST);
                c.out.writeInt(1 << 30);
                c.out.flush();
                assertTrue(c.closedByServer(), "a 1 GiB option is not read");
            }
            try (NbdTestClient c = NbdTestClient.open(addr())) {
                c.out.writeLong(0x1122334455667788L);
                c.out.writeInt(OPT_LIST);
                c.out.writeInt(0);
                c.out.flush();
                assertTrue(c.closedByServer(), "bad option magic");
            }
            try (NbdTestClient c = new NbdTestClient(addr())) {
                c.greeting();
                c.clientFlags(0x80);
                assertTrue(c.closedByServer(), "unknown client flags");
            }
            try (NbdTestClient c = new NbdTestClient(addr())) {
                c.greeting();
                assertTrue(c.closedByServer(), "silent client: handshake timeout");
            }
            assertArrayEquals(d, good.read(0, 4096), "the other connection lives on");
        }
    }

    @Test
    void disconnectAnswersWhatIsInFlightThenCloses() throws IOException {
        try (NbdTestClient c = connect("a")) {
            for (int i = 0; i < 16; i++) {
                c.request(FUA, WRITE, i * 4096L, 4096, random(4096, i));
            }
            c.disconnect();
            for (int i = 0; i < 16; i++) {
                assertEquals(0, c.reply().error());
            }
            assertTrue(c.closedByServer());
        }
        try (NbdTestClient c = connect("a")) {
            assertArrayEquals(random(4096, 15), c.read(15 * 4096, 4096));
        }
    }

    @Test
    void connectionsShareTheVolumes() throws Exception {
        try (NbdTestClient one = connect("a"); NbdTestClient two = connect("a")) {
            byte[] d = random(4096, 16);
            assertEquals(0, one.write(12 * 4096, d));
            assertEquals(0, one.command(FLUSH, 0, 0, 0));
            assertArrayEquals(d, two.read(12 * 4096, 4096));
        }
        // Several clients at once, each pipelining on its own range.
        List<Thread> threads = new ArrayList<>();
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < 4; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try (NbdTestClient c = connect("a")) {
                    for (int round = 0; round < 20; round++) {
                        long off = (id * 32L + round) * 4096;
                        byte[] d = random(4096, id * 1000 + round);
                        c.request(0, WRITE, off, 4096, d);
                        assertEquals(0, c.reply().error());
                        assertArrayEquals(d, c.read(off, 4096));
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        assertTrue(errors.isEmpty(), errors.toString());
    }
}
