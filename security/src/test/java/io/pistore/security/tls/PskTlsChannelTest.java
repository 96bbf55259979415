package io.pistore.security.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.TlsClientProtocol;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A PskTlsChannel server over loopback against a Bouncy Castle PSK client: TLS 1.3 and 1.2, and the refusals. */
@Timeout(60)
class PskTlsChannelTest {
    static final byte[] ALICE = java.util.HexFormat.of().parseHex("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
    static final PskKeys KEYS = PskKeys.parse(List.of("alice:" + java.util.HexFormat.of().formatHex(ALICE), "bob:0102030405060708"), "test");

    SocketChannel serverSide;
    Socket clientSide;

    @BeforeEach
    void connect() throws Exception {
        try (ServerSocketChannel l = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            clientSide = new Socket();
            clientSide.connect(l.getLocalAddress());
            serverSide = l.accept();
        }
        serverSide.configureBlocking(false);
        clientSide.setSoTimeout(20_000);
    }

    @AfterEach
    void close() throws IOException {
        serverSide.close();
        clientSide.close();
    }

    /** The server's handshake on another thread; the client's here; the server channel once both are done. */
    PskTlsChannel handshake(PskTestClient client) throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, KEYS);
        CompletableFuture<Void> sh = TlsChannelTest.handshakeInBackground(s, serverSide);
        TlsClientProtocol c = client.connect(clientSide);
        sh.get(20, TimeUnit.SECONDS);
        protocols.add(c);
        return s;
    }

    final List<TlsClientProtocol> protocols = new java.util.ArrayList<>();

    /** The server's handshake failure when {@code client} connects (the client fails too, or is cut off). */
    String refusal(PskTestClient client) throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, KEYS);
        CompletableFuture<Void> ch = CompletableFuture.runAsync(() -> {
            try {
                TlsClientProtocol p = client.connect(clientSide);
                p.getInputStream().read(); // TLS 1.3: a refusal may come after the client's Finished
            } catch (IOException e) {
                // expected either way
            }
        });
        SSLException e = assertThrows(SSLException.class, () -> s.handshake(TlsChannelTest.waiter(serverSide)));
        serverSide.close();
        ch.get(20, TimeUnit.SECONDS);
        return e.getMessage();
    }

    @Test
    void tls13CarriesBytesBothWaysAndNamesTheIdentity() throws Exception {
        PskTlsChannel s = handshake(PskTestClient.tls13("alice", ALICE));
        TlsClientProtocol c = protocols.get(0);
        assertEquals("alice", s.peerIdentity());
        assertEquals("TLSv1.3", s.protocol());
        assertEquals("TLS_AES_128_GCM_SHA256", s.cipherSuite());

        byte[] up = new byte[1 << 20];
        new Random(7).nextBytes(up);
        CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> readAll(s, serverSide, up.length));
        c.getOutputStream().write(up);
        assertArrayEquals(up, got.get(30, TimeUnit.SECONDS));

        byte[] down = new byte[1 << 20];
        new Random(8).nextBytes(down);
        CompletableFuture<byte[]> back = CompletableFuture.supplyAsync(() -> readFully(c.getInputStream(), down.length));
        ByteBuffer src = ByteBuffer.wrap(down);
        TlsStream.Waiter w = TlsChannelTest.waiter(serverSide);
        while (src.hasRemaining() || s.unsentBytes() > 0) {
            if (s.write(new ByteBuffer[] {src}) == 0 && !s.flush()) {
                w.await(SelectionKey.OP_WRITE);
            }
        }
        assertArrayEquals(down, back.get(30, TimeUnit.SECONDS));

        c.close();
        ByteBuffer b = ByteBuffer.allocate(16);
        int n;
        while ((n = s.read(b)) == 0) {
            w.await(SelectionKey.OP_READ);
        }
        assertEquals(-1, n);
    }

    @Test
    void tls12WithDhePsk() throws Exception {
        echoes(PskTestClient.tls12("bob", new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, CipherSuite.TLS_DHE_PSK_WITH_AES_128_GCM_SHA256),
                "bob", "TLS_DHE_PSK_WITH_AES_128_GCM_SHA256");
    }

    @Test
    void tls12WithDhePskAes256() throws Exception {
        echoes(PskTestClient.tls12("alice", ALICE, CipherSuite.TLS_DHE_PSK_WITH_AES_256_GCM_SHA384),
                "alice", "TLS_DHE_PSK_WITH_AES_256_GCM_SHA384");
    }

    @Test
    void aClientWithoutACommonSuiteIsRefused() throws Exception {
        String m = refusal(PskTestClient.tls12("alice", ALICE, CipherSuite.TLS_PSK_WITH_AES_128_GCM_SHA256));
        assertTrue(m.startsWith("handshake_failure"), m);
    }

    void echoes(PskTestClient client, String identity, String suite) throws Exception {
        PskTlsChannel s = handshake(client);
        assertEquals(identity, s.peerIdentity());
        assertEquals("TLSv1.2", s.protocol());
        assertEquals(suite, s.cipherSuite());
        protocols.get(0).getOutputStream().write("ping".getBytes(StandardCharsets.US_ASCII));
        assertArrayEquals("ping".getBytes(StandardCharsets.US_ASCII), readAll(s, serverSide, 4));
    }

    @Test
    void anUnknownIdentityIsRefusedByName() throws Exception {
        assertEquals("unknown PSK identity 'mallory'", refusal(PskTestClient.tls13("mallory", ALICE)));
    }

    @Test
    void anUnknownIdentityIsRefusedByNameInTls12() throws Exception {
        assertEquals("unknown PSK identity 'mallory'", refusal(PskTestClient.tls12("mallory", ALICE,
                CipherSuite.TLS_DHE_PSK_WITH_AES_128_GCM_SHA256)));
    }

    @Test
    void aWrongKeyIsRefused() throws Exception {
        byte[] wrong = ALICE.clone();
        wrong[0] ^= 1;
        String m = refusal(PskTestClient.tls13("alice", wrong));
        assertTrue(m.startsWith("wrong key for PSK identity 'alice'"), m);
    }

    @Test
    void aWrongKeyIsRefusedInTls12() throws Exception {
        byte[] wrong = ALICE.clone();
        wrong[0] ^= 1;
        String m = refusal(PskTestClient.tls12("alice", wrong, CipherSuite.TLS_DHE_PSK_WITH_AES_128_GCM_SHA256));
        assertTrue(m.startsWith("wrong key for PSK identity 'alice'"), m);
    }

    /**
     * The client of a refused handshake gets the server's alert, so its own error names the reason,
     * rather than a connection that just ends; the server's socket stays open until the client has
     * its answer, so the alert cannot be lost to a reset.
     */
    org.bouncycastle.tls.TlsFatalAlertReceived alertTheClientGets(PskTestClient client) throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, KEYS);
        CompletableFuture<IOException> ch = CompletableFuture.supplyAsync(() -> {
            try {
                TlsClientProtocol p = client.connect(clientSide);
                p.getInputStream().read(); // TLS 1.3: the refusal comes after the client's Finished
                return null;
            } catch (IOException e) {
                return e;
            }
        });
        assertThrows(SSLException.class, () -> s.handshake(TlsChannelTest.waiter(serverSide)));
        IOException e = ch.get(20, TimeUnit.SECONDS);
        assertTrue(e instanceof org.bouncycastle.tls.TlsFatalAlertReceived, "the client got " + e);
        return (org.bouncycastle.tls.TlsFatalAlertReceived) e;
    }

    @Test
    void aRefusedClientIsToldWhyByAnAlert() throws Exception {
        assertEquals(org.bouncycastle.tls.AlertDescription.unknown_psk_identity, alertTheClientGets(PskTestClient.tls12("mallory",
                ALICE, CipherSuite.TLS_DHE_PSK_WITH_AES_128_GCM_SHA256)).getAlertDescription());
        close();
        connect();
        assertEquals(org.bouncycastle.tls.AlertDescription.handshake_failure,
                alertTheClientGets(PskTestClient.tls13("mallory", ALICE)).getAlertDescription());
    }

    @Test
    void aClientThatResetsBeforeItsHelloIsRefusedWithTheSocketsReason() throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, KEYS);
        clientSide.setSoLinger(true, 0);
        clientSide.close(); // a reset, not an orderly end
        SSLException e = assertThrows(SSLException.class, () -> s.handshake(TlsChannelTest.waiter(serverSide)));
        assertEquals("no TLS ClientHello from the client (Connection reset)", e.getMessage());
    }

    @Test
    void aCloseNotifyEndsTheStreamWhileTheSocketStaysOpen() throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, KEYS);
        CompletableFuture<Void> sh = TlsChannelTest.handshakeInBackground(s, serverSide);
        // streams whose close leaves the socket open: the client's close sends close_notify only
        TlsClientProtocol c = new TlsClientProtocol(new java.io.FilterInputStream(clientSide.getInputStream()) {
            @Override
            public void close() {
            }
        }, new java.io.FilterOutputStream(clientSide.getOutputStream()) {
            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                out.write(b, off, len);
            }

            @Override
            public void close() throws IOException {
                flush();
            }
        });
        c.connect(PskTestClient.tls13("alice", ALICE));
        sh.get(20, TimeUnit.SECONDS);
        c.getOutputStream().write("last".getBytes(StandardCharsets.US_ASCII));
        c.close();
        assertTrue(!clientSide.isClosed() && !clientSide.isOutputShutdown());
        assertArrayEquals("last".getBytes(StandardCharsets.US_ASCII), readAll(s, serverSide, 4));
        ByteBuffer b = ByteBuffer.allocate(16);
        TlsStream.Waiter w = TlsChannelTest.waiter(serverSide);
        int n;
        while ((n = s.read(b)) == 0) {
            w.await(SelectionKey.OP_READ);
        }
        assertEquals(-1, n, "close_notify is the end of the stream, whatever the socket does");
        assertEquals(-1, s.read(b), "and it stays ended");
    }

    @Test
    void garbageInsteadOfAClientHelloIsRefused() throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, KEYS);
        OutputStream o = clientSide.getOutputStream();
        o.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        o.flush();
        SSLException e = assertThrows(SSLException.class, () -> s.handshake(TlsChannelTest.waiter(serverSide)));
        assertTrue(e.getMessage().startsWith("no TLS ClientHello from the client"), e.getMessage());
    }

    @Test
    void theSessionIsAPskOneAndPiecesAndGatheredWritesCountExactly() throws Exception {
        PskTlsChannel fresh = new PskTlsChannel(serverSide, KEYS);
        assertTrue(fresh.isHandshaking(), "before it starts");
        assertEquals(null, fresh.peerIdentity());
        PskTlsChannel s = handshake(PskTestClient.tls13("alice", ALICE));
        assertTrue(!s.isHandshaking());
        assertTrue(s.peerIdentityIsPsk());
        TlsClientProtocol c = protocols.get(0);

        c.getOutputStream().write("hello world".getBytes(StandardCharsets.US_ASCII));
        assertArrayEquals("h".getBytes(StandardCharsets.US_ASCII), readAll(s, serverSide, 1));
        assertTrue(s.hasBufferedInput(), "the rest of the record waits here");
        assertArrayEquals("ello world".getBytes(StandardCharsets.US_ASCII), readAll(s, serverSide, 10));
        assertTrue(!s.hasBufferedInput());
        c.getOutputStream().write("12345".getBytes(StandardCharsets.US_ASCII));
        ByteBuffer roomy = ByteBuffer.allocate(100);
        TlsStream.Waiter rw = TlsChannelTest.waiter(serverSide);
        while (roomy.position() < 5) {
            int before = roomy.position();
            int r = s.read(roomy);
            assertEquals(roomy.position() - before, r, "a read into a roomy buffer counts what it put there");
            if (r == 0) {
                rw.await(SelectionKey.OP_READ);
            }
        }

        byte[] data = new byte[150_001];
        new Random(11).nextBytes(data);
        CompletableFuture<byte[]> back = CompletableFuture.supplyAsync(() -> readFully(c.getInputStream(), data.length));
        TlsSessionTest.send(s, serverSide, ByteBuffer.allocate(0), ByteBuffer.wrap(data, 0, 70_000), ByteBuffer.allocate(0),
                ByteBuffer.wrap(data, 70_000, 80_000), ByteBuffer.wrap(data, 150_000, 1));
        assertArrayEquals(data, back.get(30, TimeUnit.SECONDS));
        assertEquals(2, s.write(ByteBuffer.wrap(new byte[] {7, 9})));
        TlsStream.Waiter w = TlsChannelTest.waiter(serverSide);
        while (!s.flush()) {
            w.await(SelectionKey.OP_WRITE);
        }
        assertArrayEquals(new byte[] {7, 9}, readFully(c.getInputStream(), 2));

        s.close();
        assertEquals(-1, c.getInputStream().read(), "close_notify ends the client's stream");
    }

    @Test
    void aClientThatLeavesDuringTheHandshakeIsAnEndNotAnAlert() throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, KEYS);
        clientSide.close();
        java.io.EOFException e = assertThrows(java.io.EOFException.class, () -> s.handshake(TlsChannelTest.waiter(serverSide)));
        assertEquals("connection closed during the TLS handshake", e.getMessage());
        assertTrue(!s.isHandshaking());
    }

    /** TLS 1.2 offering DHE-PSK with AES-256 first, then AES-128. */
    static final class Prefers256 extends org.bouncycastle.tls.PSKTlsClient {
        Prefers256(String identity, byte[] key) {
            super(new org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCryptoProvider().create(new java.security.SecureRandom()),
                    identity.getBytes(StandardCharsets.UTF_8), key);
        }

        @Override
        protected org.bouncycastle.tls.ProtocolVersion[] getSupportedVersions() {
            return org.bouncycastle.tls.ProtocolVersion.TLSv12.only();
        }

        @Override
        protected int[] getSupportedCipherSuites() {
            return new int[] {CipherSuite.TLS_DHE_PSK_WITH_AES_256_GCM_SHA384, CipherSuite.TLS_DHE_PSK_WITH_AES_128_GCM_SHA256};
        }
    }

    @Test
    void theServersOrderOfSuitesWinsOverTheClients() throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, KEYS);
        CompletableFuture<Void> sh = TlsChannelTest.handshakeInBackground(s, serverSide);
        TlsClientProtocol c = new TlsClientProtocol(clientSide.getInputStream(), clientSide.getOutputStream());
        c.connect(new Prefers256("bob", new byte[] {1, 2, 3, 4, 5, 6, 7, 8}));
        sh.get(20, TimeUnit.SECONDS);
        assertEquals("TLS_DHE_PSK_WITH_AES_128_GCM_SHA256", s.cipherSuite());
        assertEquals("bob", s.peerIdentity());
        c.close();
    }

    @Test
    void aTls13ClientWithoutAPreSharedKeyIsToldSo() throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, KEYS);
        CompletableFuture<Void> ch = CompletableFuture.runAsync(() -> {
            try {
                javax.net.ssl.SSLSocket tls = (javax.net.ssl.SSLSocket) javax.net.ssl.SSLContext.getDefault().getSocketFactory()
                        .createSocket(clientSide, "localhost", clientSide.getPort(), true);
                tls.setEnabledProtocols(new String[] {"TLSv1.3"});
                tls.startHandshake();
            } catch (IOException | java.security.GeneralSecurityException e) {
                // refused, as expected
            }
        });
        SSLException e = assertThrows(SSLException.class, () -> s.handshake(TlsChannelTest.waiter(serverSide)));
        assertEquals("handshake_failure(40); the client offered no pre-shared key", e.getMessage(),
                "the alert's name once");
        serverSide.close();
        ch.get(20, TimeUnit.SECONDS);
    }

    @Test
    void aFullSocketTakesNothingMoreUntilTheClientReads() throws Exception {
        PskTlsChannel s = handshake(PskTestClient.tls13("alice", ALICE));
        TlsClientProtocol c = protocols.get(0);
        byte[] chunk = new byte[1 << 20];
        new Random(13).nextBytes(chunk);
        long taken = 0;
        long n;
        do {
            n = s.write(ByteBuffer.wrap(chunk));
            taken += n;
            assertTrue(taken < (1L << 32), "the socket never filled");
        } while (n > 0);
        assertTrue(!s.flush(), "the socket is full: bytes wait");
        assertTrue(s.unsentBytes() > 0);
        assertEquals(0, s.write(ByteBuffer.wrap(chunk)), "nothing more is taken while earlier bytes wait");
        long want = taken;
        CompletableFuture<Long> got = CompletableFuture.supplyAsync(() -> {
            try {
                InputStream in = c.getInputStream();
                byte[] b = new byte[1 << 16];
                long sum = 0;
                while (true) {
                    int r = in.read(b, 0, b.length);
                    if (r < 0) {
                        return sum; // close_notify
                    }
                    for (int i = 0; i < r; i++) {
                        if (b[i] != chunk[(int) ((sum + i) % chunk.length)]) {
                            throw new IOException("byte " + (sum + i) + " differs");
                        }
                    }
                    sum += r;
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        TlsStream.Waiter w = TlsChannelTest.waiter(serverSide);
        while (!s.flush()) {
            w.await(SelectionKey.OP_WRITE);
        }
        assertEquals(0, s.unsentBytes());
        s.close();
        assertEquals(want, got.get(60, TimeUnit.SECONDS), "every byte taken arrived, and not one more");
    }

    static byte[] readAll(TlsStream s, SocketChannel ch, int n) {
        try {
            ByteBuffer b = ByteBuffer.allocate(n);
            TlsStream.Waiter w = TlsChannelTest.waiter(ch);
            while (b.hasRemaining()) {
                int k = s.read(b);
                if (k < 0) {
                    throw new IOException("end of stream after " + b.position());
                }
                if (k == 0) {
                    w.await(SelectionKey.OP_READ);
                }
            }
            return b.array();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static byte[] readFully(InputStream in, int n) {
        try {
            return in.readNBytes(n);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
