package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.Transports;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.engine.scrub.Scrubber;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Hostile input against the NBD listener (docs/NBD.md): a seeded fuzzer opens a connection per case;
 * it mangles the handshake (client flags, option headers, huge option lengths, unknown options,
 * garbage) or, after a proper NBD_OPT_EXPORT_NAME, sends one to four requests built valid (read,
 * write, flush, trim, write-zeroes, aligned or not) and mutated (bit flips, random offsets, lengths,
 * types and flags, huge lengths, a truncated write payload, a replayed request, garbage), then
 * half-closes and reads until the server closes. A well-behaved NBD client on its own connection
 * writes and verifies throughout.
 *
 * <p>Checked: every case ends (no hang), the server keeps accepting, the good client never fails,
 * the heap stays bounded, the fuzzed volume scrubs clean, and a write whose payload was cut short
 * changes nothing. {@code -Dpistore.fuzz.cases=N} (CI: 3000), {@code -Dpistore.fuzz.seed=S}.
 */
class NbdFuzzTest {
    static final long IHAVEOPT = 0x49484156454F5054L;
    static final int VOLUME_BYTES = 1 << 20;

    @Test
    void theNbdServerSurvivesHostileInputAndStoresNothingItRejected() throws Exception {
        int cases = Figures.intFlag("pistore.fuzz.cases", 3000);
        long seed = Long.getLong("pistore.fuzz.seed", 0x4EBDL);
        Random r = new Random(seed);
        try (VolumeStore store = VolumeStore.inMemory()) {
            store.create("f", BlockFormat.of(512, 8), VOLUME_BYTES / 512);
            store.create("good", BlockFormat.of(4096, 8), 256);
            try (BlockTransport t = Transports.find("local").create();
                 TargetListener l = t.listen("", new TargetService(store));
                 HostConnection host = t.connect(l.address(), new ConnectOptions(2, 64))) {
                NbdServer server = NbdServer.start("127.0.0.1:0", host,
                        new NbdServer.Options().handshakeTimeoutMillis(2000));
                try {
                    InetSocketAddress a = server.address();
                    long heapBefore = TcpFuzzTest.usedHeap();
                    long growth = 0;
                    int replies = 0;
                    try (GoodClient good = new GoodClient(a, "good")) {
                        for (int i = 0; i < cases; i++) {
                            replies += fuzzCase(a, r);
                            if (i % 100 == 0) {
                                good.roundTrip(i);
                            }
                            if (i % 1000 == 999) {
                                growth = Math.max(growth, TcpFuzzTest.usedHeap() - heapBefore);
                            }
                        }
                        good.roundTrip(cases);
                    }
                    growth = Math.max(growth, TcpFuzzTest.usedHeap() - heapBefore);
                    // A write cut short stores nothing.
                    try (GoodClient c = new GoodClient(a, "f")) {
                        byte[] before = c.read(65536, 8192);
                        try (Socket s = connect(a)) {
                            OutputStream out = s.getOutputStream();
                            DataInputStream in = new DataInputStream(s.getInputStream());
                            handshake(out, in, "f");
                            byte[] half = new byte[4096];
                            Arrays.fill(half, (byte) 0xEE);
                            out.write(request(0, 1, 77, 65536, 8192));
                            out.write(half);
                            out.flush();
                            s.shutdownOutput();
                            drain(in);
                        }
                        assertArrayEquals(before, c.read(65536, 8192), "a truncated write changed the volume");
                    }
                    List<String> bad = new ArrayList<>();
                    Scrubber.Report rep = Scrubber.scrub(store.get("f"), e -> bad.add(e.toString()), x -> { });
                    Figures.record("fuzz-nbd", "cases=" + cases + " seed=0x" + Long.toHexString(seed) + " reply_reads="
                            + replies + " server_crashes=0 hangs=0 heap_growth_mib=" + (growth >> 20)
                            + " good_client_failures=0 truncated_write_stored=0 scrub_bad=" + rep.badBlocks);
                    assertTrue(rep.clean(), bad.toString());
                    assertTrue(growth < (256L << 20), "heap grew by " + (growth >> 20) + " MiB");
                } finally {
                    server.close();
                }
            }
        }
    }

    static Socket connect(InetSocketAddress a) throws IOException {
        Socket s = new Socket();
        s.connect(a, 5000);
        s.setSoTimeout(10_000);
        s.setTcpNoDelay(true);
        return s;
    }

    static byte[] option(int opt, byte[] data) {
        ByteBuffer b = ByteBuffer.allocate(16 + data.length);
        b.putLong(IHAVEOPT).putInt(opt).putInt(data.length).put(data);
        return b.array();
    }

    /** Fixed newstyle, no zeroes, NBD_OPT_EXPORT_NAME; returns the export size. */
    static long handshake(OutputStream out, DataInputStream in, String name) throws IOException {
        byte[] greet = new byte[18];
        in.readFully(greet);
        out.write(new byte[] {0, 0, 0, 3});
        out.write(option(1, name.getBytes(StandardCharsets.US_ASCII)));
        out.flush();
        long size = in.readLong();
        in.readShort();
        return size;
    }

    static byte[] request(int flags, int type, long handle, long offset, int length) {
        ByteBuffer b = ByteBuffer.allocate(28);
        b.putInt(0x25609513).putShort((short) flags).putShort((short) type).putLong(handle).putLong(offset).putInt(length);
        return b.array();
    }

    static byte[] validRequest(Random r, long handle) {
        int type = new int[] {0, 1, 3, 4, 6}[r.nextInt(5)];
        boolean aligned = r.nextInt(3) != 0;
        int length = aligned ? 512 * (1 + r.nextInt(16)) : 1 + r.nextInt(9000);
        long offset = aligned ? 512L * r.nextInt(VOLUME_BYTES / 512 - 16) : r.nextInt(VOLUME_BYTES - length);
        if (type == 3) {
            return request(0, 3, handle, 0, 0);
        }
        byte[] h = request(r.nextInt(4) == 0 ? 1 : 0, type, handle, offset, length);
        if (type != 1) {
            return h;
        }
        byte[] payload = new byte[length];
        r.nextBytes(payload);
        return TcpFuzzTest.concat(h, payload);
    }

    static int fuzzCase(InetSocketAddress a, Random r) throws Exception {
        try (Socket s = connect(a)) {
            OutputStream out = s.getOutputStream();
            DataInputStream in = new DataInputStream(s.getInputStream());
            try {
                if (r.nextInt(4) == 0) { // the handshake
                    byte[] greet = new byte[18];
                    in.readFully(greet);
                    switch (r.nextInt(6)) {
                        case 0: out.write(ByteBuffer.allocate(4).putInt(r.nextInt()).array()); break;
                        case 1: out.write(new byte[] {0, 0, 0, 3}); out.write(option(r.nextInt(), new byte[r.nextInt(64)])); break;
                        case 2: out.write(new byte[] {0, 0, 0, 3});
                            out.write(ByteBuffer.allocate(16).putLong(IHAVEOPT).putInt(1 + r.nextInt(8)).putInt(0x7FFF0000 + r.nextInt(0xFFFF)).array());
                            break;
                        case 3: out.write(new byte[] {0, 0, 0, 3}); out.write(Arrays.copyOf(option(7, new byte[] {0, 0, 0, 1, 'f', 0, 0}), r.nextInt(23))); break;
                        case 4: { byte[] g = new byte[1 + r.nextInt(200)]; r.nextBytes(g); out.write(g); break; }
                        default: out.write(new byte[] {0, 0, 0, 3}); byte[] o = option(1, "f".getBytes(StandardCharsets.US_ASCII));
                            o[r.nextInt(o.length)] ^= (byte) (1 << r.nextInt(8)); out.write(o); break;
                    }
                    out.flush();
                    s.shutdownOutput();
                    return drain(in);
                }
                handshake(out, in, "f");
                int n = 1 + r.nextInt(4);
                int victim = r.nextInt(n);
                int how = r.nextInt(8);
                for (int k = 0; k < n; k++) {
                    byte[] f = validRequest(r, k + 1);
                    if (k != victim || how == 0) {
                        out.write(f);
                        continue;
                    }
                    switch (how) {
                        case 1: out.write(f); out.write(f); break; // replayed, same handle
                        case 2: out.write(Arrays.copyOf(f, r.nextInt(f.length))); out.flush(); s.shutdownOutput(); return drain(in);
                        case 3: { ByteBuffer b = ByteBuffer.wrap(Arrays.copyOf(f, 28)); b.putInt(24, 0x7FFF0000 + r.nextInt(0xFFFF)); out.write(b.array()); break; }
                        case 4: { ByteBuffer b = ByteBuffer.wrap(f.clone()); b.putLong(16, r.nextBoolean() ? r.nextLong() : VOLUME_BYTES - 1 + r.nextInt(4096)); out.write(b.array()); break; }
                        case 5: { byte[] m = f.clone(); ByteBuffer.wrap(m).putShort(4, (short) r.nextInt()).putShort(6, (short) r.nextInt(12)); out.write(m); break; }
                        case 6: { byte[] g = new byte[1 + r.nextInt(100)]; r.nextBytes(g); out.write(g); break; }
                        default: { byte[] m = f.clone(); for (int i = 0; i < 1 + r.nextInt(3); i++) { m[r.nextInt(28)] ^= (byte) (1 << r.nextInt(8)); } out.write(m); break; }
                    }
                }
                out.flush();
                s.shutdownOutput();
                return drain(in);
            } catch (SocketException | java.io.EOFException e) {
                return 0; // the server closed while we were still talking
            }
        }
    }

    static int drain(DataInputStream in) throws IOException {
        return TcpFuzzTest.drain(in)[1];
    }

    /** A minimal NBD client: fixed newstyle, export name, simple replies. */
    static final class GoodClient implements AutoCloseable {
        final Socket s;
        final OutputStream out;
        final DataInputStream in;
        long handle = 1000;

        GoodClient(InetSocketAddress a, String export) throws IOException {
            this(connect(a), export, false);
        }

        /** On a socket whose greeting was read already ({@code greeted}: a TLS socket after STARTTLS). */
        GoodClient(Socket s, String export, boolean greeted) throws IOException {
            this.s = s;
            out = s.getOutputStream();
            in = new DataInputStream(s.getInputStream());
            if (greeted) {
                out.write(option(1, export.getBytes(StandardCharsets.US_ASCII)));
                out.flush();
                in.readLong();
                in.readShort();
            } else {
                handshake(out, in, export);
            }
        }

        void expectReply(long h) throws IOException {
            assertEquals(0x67446698, in.readInt(), "reply magic");
            assertEquals(0, in.readInt(), "reply error");
            assertEquals(h, in.readLong(), "reply handle");
        }

        byte[] read(long offset, int len) throws IOException {
            long h = handle++;
            out.write(request(0, 0, h, offset, len));
            out.flush();
            expectReply(h);
            byte[] b = new byte[len];
            in.readFully(b);
            return b;
        }

        void write(long offset, byte[] data) throws IOException {
            long h = handle++;
            out.write(TcpFuzzTest.concat(request(0, 1, h, offset, data.length), data));
            out.flush();
            expectReply(h);
        }

        void roundTrip(int i) throws IOException {
            byte[] d = new byte[4096];
            new Random(i).nextBytes(d);
            long off = 4096L * (i % 256);
            write(off, d);
            assertArrayEquals(d, read(off, 4096), "the good NBD client read back other data");
        }

        @Override
        public void close() throws IOException {
            out.write(request(0, 2, 0, 0, 0));
            out.flush();
            s.close();
        }
    }
}
