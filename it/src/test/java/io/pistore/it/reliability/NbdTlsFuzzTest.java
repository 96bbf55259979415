package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.Transports;
import io.pistore.engine.scrub.Scrubber;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.frontend.nbd.NbdServer;
import io.pistore.frontend.nbd.NbdTls;
import io.pistore.integrity.BlockFormat;
import io.pistore.security.tls.TestPki;
import io.pistore.security.tls.TlsContext;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.testkit.Eventually;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile input against an NBD server that requires TLS with client certificates (docs/NBD.md,
 * "TLS"): a seeded fuzzer opens a connection per case and sends garbage before STARTTLS, plaintext
 * options (a downgrade: NBD_OPT_EXPORT_NAME, NBD_OPT_GO, NBD_OPT_LIST, then requests), garbage
 * instead of the TLS handshake after the STARTTLS reply, a ClientHello and then nothing (a stall,
 * cut at the handshake timeout), a client certificate of another CA, or, after a good handshake,
 * raw bytes between records, well-sealed garbage instead of options, or a valid NBD_CMD_WRITE
 * whose sealed record has one bit flipped. A well-behaved TLS client writes and verifies its own
 * export throughout.
 *
 * <p>Checked: every case's connection ends with the server's "connection ended" line naming it;
 * the good client never fails; no case wrote anything (the fuzzed volume has no written block).
 * {@code -Dpistore.fuzz.tlsCases=N} (default 200), {@code -Dpistore.fuzz.seed=S}.
 */
class NbdTlsFuzzTest {
    static final int OPT_EXPORT_NAME = 1;
    static final int OPT_LIST = 3;
    static final int OPT_STARTTLS = 5;
    static final int OPT_GO = 7;
    static final int MAX_STALLS = 4;

    @TempDir
    static Path dir;

    int stalls;

    @Test
    void aTlsNbdServerEndsEveryHostileConnectionWithALogLineAndWritesNothing() throws Exception {
        int cases = Figures.intFlag("pistore.fuzz.tlsCases", 200);
        long seed = Long.getLong("pistore.fuzz.seed", 0x4E7L);
        Random r = new Random(seed);
        TestPki pki = TestPki.create(dir.resolve("pki"), "good-client");
        TestPki other = TestPki.create(dir.resolve("other"), "mallory");
        TlsContext good = TlsContext.client(pki.ca(), pki.clientCert(), pki.clientKey());
        TlsContext mallory = TlsContext.client(pki.ca(), other.clientCert(), other.clientKey());
        List<String> lines = new CopyOnWriteArrayList<>();
        try (VolumeStore store = VolumeStore.inMemory()) {
            store.create("f", BlockFormat.of(512, 8), NbdFuzzTest.VOLUME_BYTES / 512);
            store.create("good", BlockFormat.of(4096, 8), 256);
            try (BlockTransport t = Transports.find("local").create();
                 TargetListener l = t.listen("", new TargetService(store));
                 HostConnection host = t.connect(l.address(), new ConnectOptions(2, 64))) {
                NbdServer server = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options()
                        .handshakeTimeoutMillis(2000)
                        .tls(NbdTls.REQUIRE, TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true))
                        .log(lines::add));
                try (NbdFuzzTest.GoodClient goodClient = goodClient(server.address(), good, lines)) {
                    int[] byKind = new int[8];
                    for (int i = 0; i < cases; i++) {
                        String[] o = fuzzCase(server.address(), r, good, mallory);
                        int kind = Integer.parseInt(o[0]);
                        byKind[kind]++;
                        String end = awaitEnd(lines, o[1]);
                        assertNotNull(end, "case " + i + " (kind " + kind + "): no end of " + o[1] + " logged");
                        if (i % 50 == 0) {
                            goodClient.roundTrip(i);
                        }
                    }
                    goodClient.roundTrip(cases);
                    List<String> bad = new ArrayList<>();
                    Scrubber.Report rep = Scrubber.scrub(store.get("f"), e -> bad.add(e.toString()), x -> { });
                    long written = rep.blocks - rep.unwrittenBlocks;
                    Figures.record("fuzz-nbd-tls", "cases=" + cases + " seed=0x" + Long.toHexString(seed)
                            + " by_kind=" + Arrays.toString(byKind) + " good_client_failures=0 blocks_written=" + written);
                    assertTrue(rep.clean(), bad.toString());
                    assertEquals(0, written, "a hostile connection wrote to the fuzzed volume");
                } finally {
                    server.close();
                }
            }
        }
    }

    /** The well-behaved client, over TLS; when the server refuses it, the server's log says why. */
    static NbdFuzzTest.GoodClient goodClient(InetSocketAddress a, TlsContext as, List<String> log) throws Exception {
        try {
            return new NbdFuzzTest.GoodClient(startTls(a, as), "good", true);
        } catch (IOException e) {
            // the server logs why it refused on its own thread: the report waits a while for that line
            Eventually.within(Duration.ofSeconds(5), () -> log.stream().anyMatch(l -> l.contains(" connection ended: ")));
            throw new AssertionError("the good client was refused: " + e + "; server log: " + log, e);
        }
    }

    /** Greeting, flags, NBD_OPT_STARTTLS and its reply, then the TLS handshake: the TLS socket. */
    static Socket startTls(InetSocketAddress a, TlsContext as) throws IOException {
        Socket s = NbdFuzzTest.connect(a);
        plaintextStartTls(s);
        return as.clientSocket(s, a.getHostString(), a.getPort());
    }

    /** Greeting, flags, NBD_OPT_STARTTLS; checks the ACK. */
    static void plaintextStartTls(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        in.readFully(new byte[18]);
        out.write(new byte[] {0, 0, 0, 3});
        out.write(NbdFuzzTest.option(OPT_STARTTLS, new byte[0]));
        out.flush();
        byte[] reply = new byte[20];
        in.readFully(reply);
        ByteBuffer b = ByteBuffer.wrap(reply);
        assertEquals(0x3e889045565a9L, b.getLong(), "option reply magic");
        assertEquals(OPT_STARTTLS, b.getInt());
        assertEquals(1, b.getInt(), "NBD_REP_ACK");
        assertEquals(0, b.getInt());
    }

    /** Runs one case; returns {kind, the peer as the server names it}. */
    String[] fuzzCase(InetSocketAddress a, Random r, TlsContext good, TlsContext mallory) throws Exception {
        int kind = r.nextInt(8);
        if (kind == 3 && stalls++ >= MAX_STALLS) {
            kind = 2;
        }
        try (Socket s = NbdFuzzTest.connect(a)) {
            String peer = s.getLocalAddress().getHostAddress() + ":" + s.getLocalPort();
            DataInputStream in = new DataInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            try {
                switch (kind) {
                    case 0 -> { // garbage before STARTTLS: instead of the flags, or after them
                        in.readFully(new byte[18]);
                        if (r.nextBoolean()) {
                            out.write(new byte[] {0, 0, 0, 3});
                        }
                        byte[] g = new byte[1 + r.nextInt(200)];
                        r.nextBytes(g);
                        out.write(g);
                        out.flush();
                        s.shutdownOutput();
                    }
                    case 1 -> downgrade(s, in, out, r);
                    case 2 -> { // STARTTLS acknowledged, then garbage instead of a ClientHello
                        plaintextStartTls(s);
                        byte[] g = new byte[1 + r.nextInt(600)];
                        r.nextBytes(g);
                        if (r.nextBoolean() && g.length > 5) {
                            g[0] = 0x16;
                            g[1] = 0x03;
                            g[2] = 0x01;
                        }
                        out.write(g);
                        out.flush();
                        s.shutdownOutput();
                    }
                    case 3 -> { // a ClientHello, then nothing: cut at the handshake timeout
                        plaintextStartTls(s);
                        out.write(new HandTls(s, good.clientEngine(a.getHostString(), a.getPort())).firstFlight());
                        out.flush();
                    }
                    case 4 -> { // a client certificate of another CA
                        plaintextStartTls(s);
                        HandTls tls = new HandTls(s, mallory.clientEngine(a.getHostString(), a.getPort()));
                        tls.handshake();
                        tls.sendSealed(NbdFuzzTest.option(OPT_EXPORT_NAME, "f".getBytes(StandardCharsets.US_ASCII)));
                        s.shutdownOutput();
                    }
                    default -> {
                        plaintextStartTls(s);
                        HandTls tls = new HandTls(s, good.clientEngine(a.getHostString(), a.getPort()));
                        tls.handshake();
                        afterHandshake(kind, tls, r);
                        s.shutdownOutput();
                    }
                }
            } catch (IOException e) {
                // the server ended it while we were still talking
            }
            try {
                NbdFuzzTest.drain(in);
            } catch (AssertionError e) {
                throw new AssertionError("kind " + kind + ", " + peer + ": " + e.getMessage(), e);
            }
            return new String[] {Integer.toString(kind), peer};
        }
    }

    /** Plaintext options on a server that requires TLS, then a plaintext write. */
    static void downgrade(Socket s, DataInputStream in, OutputStream out, Random r) throws IOException {
        in.readFully(new byte[18]);
        out.write(new byte[] {0, 0, 0, 3});
        byte[] name = "f".getBytes(StandardCharsets.US_ASCII);
        switch (r.nextInt(3)) {
            case 0 -> out.write(NbdFuzzTest.option(OPT_EXPORT_NAME, name)); // ends the session
            case 1 -> out.write(NbdFuzzTest.option(OPT_GO, ByteBuffer.allocate(4 + name.length + 2)
                    .putInt(name.length).put(name).putShort((short) 0).array())); // NBD_REP_ERR_TLS_REQD
            default -> out.write(NbdFuzzTest.option(OPT_LIST, new byte[0])); // NBD_REP_ERR_TLS_REQD
        }
        byte[] data = new byte[4096];
        r.nextBytes(data);
        out.write(TcpFuzzTest.concat(NbdFuzzTest.request(0, 1, 1, 0, 4096), data)); // as if it were transmitting
        out.flush();
        s.shutdownOutput();
    }

    /** Kinds 5 to 7: a good handshake, then raw bytes, sealed garbage, or a damaged sealed write. */
    static void afterHandshake(int kind, HandTls tls, Random r) throws IOException {
        switch (kind) {
            case 5 -> { // bytes that are no TLS record, in the middle of the TLS stream
                byte[] g = new byte[1 + r.nextInt(300)];
                r.nextBytes(g);
                g[0] = (byte) (0x30 + r.nextInt(0x40));
                tls.send(g);
            }
            case 6 -> { // well-sealed garbage where an option belongs
                byte[] g = new byte[16 + r.nextInt(200)];
                r.nextBytes(g);
                g[0] = 0x7F; // never IHAVEOPT
                tls.sendSealed(g);
            }
            default -> { // NBD_OPT_EXPORT_NAME, then a valid write whose record has one bit flipped
                tls.sendSealed(NbdFuzzTest.option(OPT_EXPORT_NAME, "f".getBytes(StandardCharsets.US_ASCII)));
                tls.receive(10); // size and transmission flags (no zeroes)
                byte[] data = new byte[4096];
                r.nextBytes(data);
                long offset = 4096L * r.nextInt(NbdFuzzTest.VOLUME_BYTES / 4096);
                byte[] write = TcpFuzzTest.concat(NbdFuzzTest.request(0, 1, 1, offset, 4096), data);
                tls.send(HandTls.flipOneBit(tls.seal(write), r));
            }
        }
    }

    /** Waits until the server logged the end of {@code peer}'s connection; the line, or null. */
    static String awaitEnd(List<String> lines, String peer) {
        return TcpTlsFuzzTest.awaitLine(lines, "nbd: " + peer + " connection ended: ");
    }
}
