package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.engine.scrub.Scrubber;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.security.tls.TestPki;
import io.pistore.security.tls.TlsContext;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportOptions;
import io.pistore.testkit.Eventually;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile input against a tcp target that requires TLS with client certificates
 * (docs/PROTOCOL-TCP.md, "TLS"): a seeded fuzzer opens a connection per case and sends a plaintext
 * HELLO (a downgrade, sometimes followed by a valid WRITE), garbage instead of a handshake, a
 * ClientHello cut short, a ClientHello and then nothing (a stall, cut at the connect timeout), a
 * client certificate of another CA, or, after a good handshake, raw bytes between records,
 * well-sealed garbage instead of HELLO, or a valid WRITE whose sealed record has one bit flipped.
 * A well-behaved TLS host writes and verifies its own volume throughout.
 *
 * <p>Checked: every case's connection is ended by the target and the end is logged (the handler's
 * "connection from PEER ended: REASON" line, and a transport warning naming PEER: every case is bad
 * input, a ClientHello or record cut short included);
 * the good host never fails; no case wrote anything (the fuzzed volume has no written block).
 * {@code -Dpistore.fuzz.tlsCases=N} (default 200), {@code -Dpistore.fuzz.seed=S}.
 */
class TcpTlsFuzzTest {
    static final BlockFormat F = BlockFormat.of(512, 8);

    @TempDir
    static Path dir;

    /** Stalls cost a connect timeout each: a few show the cut-off, more would only slow the run. */
    static final int MAX_STALLS = 4;
    int stalls;

    @Test
    void aTlsTargetEndsEveryHostileConnectionWithALogLineAndWritesNothing() throws Exception {
        int cases = Figures.intFlag("pistore.fuzz.tlsCases", 200);
        long seed = Long.getLong("pistore.fuzz.seed", 0x7150L);
        Random r = new Random(seed);
        TestPki pki = TestPki.create(dir.resolve("pki"), "good-host");
        TestPki other = TestPki.create(dir.resolve("other"), "mallory");
        TransportOptions targetOptions = TransportOptions.of(Map.of("tcp.tls", "true",
                "tcp.tlsCert", pki.serverCert().toString(), "tcp.tlsKey", pki.serverKey().toString(),
                "tcp.tlsCa", pki.ca().toString(), "tcp.tlsVerifyClient", "true", "tcp.connectTimeoutMs", "2000"));
        TransportOptions hostOptions = TransportOptions.of(Map.of("tcp.tls", "true",
                "tcp.tlsCert", pki.clientCert().toString(), "tcp.tlsKey", pki.clientKey().toString(),
                "tcp.tlsCa", pki.ca().toString()));
        TlsContext good = TlsContext.client(pki.ca(), pki.clientCert(), pki.clientKey());
        TlsContext mallory = TlsContext.client(pki.ca(), other.clientCert(), other.clientKey());
        List<String> ends = new CopyOnWriteArrayList<>();
        Logger tcpLog = Logger.getLogger("io.pistore.transport.tcp");
        Warnings warnings = new Warnings();
        boolean parents = tcpLog.getUseParentHandlers();
        tcpLog.addHandler(warnings);
        tcpLog.setUseParentHandlers(false); // one warning per case is the point; the build log need not show them
        try (VolumeStore store = VolumeStore.inMemory()) {
            store.create("f", F, 2048);
            store.create("good", BlockFormat.of(4096, 8), 256);
            try (BlockTransport t = Transports.find("tcp").create(targetOptions);
                 TargetListener l = t.listen("127.0.0.1:0", new TargetService(store, ends::add));
                 BlockTransport gt = Transports.find("tcp").create(hostOptions);
                 HostConnection goodHost = gt.connect(l.address(), new ConnectOptions(1, 8))) {
                BlockDevice gd = BlockDevice.open(goodHost, "good");
                int[] byKind = new int[8];
                for (int i = 0; i < cases; i++) {
                    Outcome o = fuzzCase(l.address(), r, good, mallory);
                    byKind[o.kind]++;
                    String end = awaitEnd(ends, o.peer);
                    assertNotNull(end, "case " + i + " (kind " + o.kind + "): no end of " + o.peer + " logged");
                    assertNotNull(warnings.naming(o.peer), "case " + i + " (kind " + o.kind + "): no warning "
                            + "naming " + o.peer + "; its end: " + end);
                    if (i % 50 == 0) {
                        TcpFuzzTest.goodHostRoundTrip(gd, i);
                    }
                }
                TcpFuzzTest.goodHostRoundTrip(gd, cases);
                List<String> bad = new ArrayList<>();
                Scrubber.Report rep = Scrubber.scrub(store.get("f"), e -> bad.add(e.toString()), x -> { });
                long written = rep.blocks - rep.unwrittenBlocks;
                Figures.record("fuzz-tcp-tls", "cases=" + cases + " seed=0x" + Long.toHexString(seed)
                        + " by_kind=" + Arrays.toString(byKind) + " warnings=" + warnings.count()
                        + " good_host_failures=0 blocks_written=" + written);
                assertTrue(rep.clean(), bad.toString());
                assertEquals(0, written, "a hostile connection wrote to the fuzzed volume");
            }
        } finally {
            tcpLog.removeHandler(warnings);
            tcpLog.setUseParentHandlers(parents);
        }
    }

    /** What one case did: its kind and the address the target knows it by. */
    record Outcome(int kind, String peer) {
    }

    Outcome fuzzCase(String address, Random r, TlsContext good, TlsContext mallory) throws Exception {
        int colon = address.lastIndexOf(':');
        String host = address.substring(0, colon);
        int port = Integer.parseInt(address.substring(colon + 1));
        int kind = r.nextInt(8);
        if (kind == 3 && stalls++ >= MAX_STALLS) {
            kind = 1;
        }
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(host, port), 5000);
            s.setSoTimeout(10_000);
            s.setTcpNoDelay(true);
            String peer = s.getLocalAddress().getHostAddress() + ":" + s.getLocalPort();
            DataInputStream in = new DataInputStream(s.getInputStream());
            try {
                switch (kind) {
                    case 0 -> { // a downgrade: plaintext HELLO, sometimes with a valid WRITE behind it
                        byte[] hello = hello();
                        s.getOutputStream().write(r.nextBoolean() ? hello : TcpFuzzTest.concat(hello, write(r, 1)));
                        s.shutdownOutput();
                    }
                    case 1 -> { // garbage, half of it dressed as a TLS handshake record
                        byte[] g = new byte[1 + r.nextInt(600)];
                        r.nextBytes(g);
                        if (r.nextBoolean() && g.length > 5) {
                            g[0] = 0x16;
                            g[1] = 0x03;
                            g[2] = 0x01;
                        }
                        s.getOutputStream().write(g);
                        s.shutdownOutput();
                    }
                    case 2 -> { // a ClientHello cut short, then EOF
                        byte[] ch = new HandTls(s, good.clientEngine(host, port)).firstFlight();
                        s.getOutputStream().write(Arrays.copyOf(ch, 1 + r.nextInt(ch.length - 1)));
                        s.shutdownOutput();
                    }
                    case 3 -> { // a ClientHello, then nothing: the target cuts it at the connect timeout
                        byte[] ch = new HandTls(s, good.clientEngine(host, port)).firstFlight();
                        s.getOutputStream().write(ch);
                    }
                    case 4 -> { // a client certificate of another CA
                        HandTls tls = new HandTls(s, mallory.clientEngine(host, port));
                        tls.handshake();
                        tls.sendSealed(hello());
                        s.shutdownOutput();
                    }
                    default -> {
                        HandTls tls = new HandTls(s, good.clientEngine(host, port));
                        tls.handshake();
                        afterHandshake(kind, tls, r);
                        s.shutdownOutput();
                    }
                }
            } catch (IOException e) {
                // the target ended it while we were still talking
            }
            try {
                TcpFuzzTest.drain(in);
            } catch (AssertionError e) {
                throw new AssertionError("kind " + kind + ", " + peer + ": " + e.getMessage(), e);
            }
            return new Outcome(kind, peer);
        }
    }

    /** Kinds 5 to 7: a good handshake, then raw bytes, sealed garbage, or a damaged sealed WRITE. */
    static void afterHandshake(int kind, HandTls tls, Random r) throws IOException {
        switch (kind) {
            case 5 -> { // bytes that are no TLS record, in the middle of the TLS stream
                byte[] g = new byte[1 + r.nextInt(300)];
                r.nextBytes(g);
                g[0] = (byte) (0x30 + r.nextInt(0x40)); // no record type
                tls.send(g);
            }
            case 6 -> { // well-sealed garbage where HELLO belongs
                byte[] g = new byte[64 + r.nextInt(200)];
                r.nextBytes(g);
                g[0] = 0x7F; // never the magic
                tls.sendSealed(g);
            }
            default -> { // HELLO, then a valid WRITE whose record has one bit flipped
                tls.sendSealed(hello());
                byte[] h = tls.receive(64);
                byte[] list = tls.receive(ByteBuffer.wrap(h).getInt(12));
                int vol = TcpFuzzTest.volumeId(list, "f");
                tls.send(HandTls.flipOneBit(tls.seal(write(r, vol)), r));
            }
        }
    }

    static byte[] hello() {
        byte[] hello = TcpFuzzTest.header(0x01, 0, 0, 0);
        ByteBuffer.wrap(hello).putInt(16, 1 << 20).putShort(20, (short) 8);
        return hello;
    }

    /** A valid WRITE with correct PI to volume {@code vol}. */
    static byte[] write(Random r, int vol) {
        while (true) {
            byte[] f = TcpFuzzTest.validFrame(r, vol, 1);
            if (f[5] == 0x11) {
                return f;
            }
        }
    }

    /** Waits until the handler logged the end of {@code peer}'s connection; the line, or null. */
    static String awaitEnd(List<String> ends, String peer) {
        return awaitLine(ends, "connection from " + peer + " ended: ");
    }

    /** Waits up to 5 s until a line of {@code lines} starts with {@code prefix}; the line, or null. */
    static String awaitLine(List<String> lines, String prefix) {
        Eventually.within(Duration.ofSeconds(5), () -> lines.stream().anyMatch(l -> l.startsWith(prefix)));
        return lines.stream().filter(l -> l.startsWith(prefix)).findFirst().orElse(null);
    }

    /** The transport's warnings. */
    static final class Warnings extends Handler {
        private final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                lines.add(r.getMessage());
            }
        }

        String naming(String peer) {
            for (String l : lines) {
                if (l.contains("closing connection with " + peer + ":")) {
                    return l;
                }
            }
            return null;
        }

        int count() {
            return lines.size();
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    }
}
