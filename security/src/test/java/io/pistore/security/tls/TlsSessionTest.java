package io.pistore.security.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.security.access.ClientIdentity;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a {@link TlsChannel} tells of its session after the handshake, how it hands out records in
 * pieces and gathers writes, what a {@link TlsContext} sets on the JDK's engines and prints, and its
 * blocking client socket; on the JDK's engine, which every machine has.
 */
@Timeout(60)
class TlsSessionTest extends TlsSocketPairFixture {

    /** The client's engine of the last {@link #pair}, for records sealed by hand. */
    SSLEngine clientEngine;

    /** A server and a client channel after a finished handshake. */
    private TlsChannel[] pair(boolean clientCertificate) throws Exception {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), clientCertificate, TlsEngine.JDK);
        TlsContext cc = clientCertificate
                ? TlsContext.client(pki.ca(), pki.clientCert(), pki.clientKey(), TlsEngine.JDK)
                : TlsContext.client(pki.ca(), null, null, TlsEngine.JDK);
        TlsChannel s = new TlsChannel(serverSide, sc.serverEngine());
        clientEngine = cc.clientEngine("localhost", 1);
        TlsChannel c = new TlsChannel(clientSide, clientEngine);
        assertTrue(s.isHandshaking(), "before the handshake starts");
        CompletableFuture<Void> sh = TlsChannelTest.handshakeInBackground(s, serverSide);
        c.handshake(TlsChannelTest.waiter(clientSide));
        sh.get(20, TimeUnit.SECONDS);
        assertFalse(s.isHandshaking());
        assertFalse(c.isHandshaking());
        return new TlsChannel[] {s, c};
    }

    static void send(TlsStream c, SocketChannel ch, ByteBuffer... srcs) throws IOException {
        TlsStream.Waiter w = TlsChannelTest.waiter(ch);
        long total = Arrays.stream(srcs).mapToLong(ByteBuffer::remaining).sum();
        long taken = 0;
        while (Arrays.stream(srcs).anyMatch(ByteBuffer::hasRemaining) || c.unsentBytes() > 0) {
            long n = c.write(srcs);
            taken += n;
            if (n == 0 && !c.flush()) {
                w.await(SelectionKey.OP_WRITE);
            }
        }
        assertEquals(total, taken, "each write says how much of the buffers it took");
        assertEquals(0, c.unsentBytes());
        assertTrue(c.flush(), "nothing waits");
    }

    /** Reads exactly {@code n} bytes with reads of at most {@code piece}. */
    private static byte[] receive(TlsChannel s, SocketChannel ch, int n, int piece) throws IOException {
        TlsStream.Waiter w = TlsChannelTest.waiter(ch);
        ByteBuffer all = ByteBuffer.allocate(n);
        while (all.hasRemaining()) {
            ByteBuffer b = ByteBuffer.allocate(Math.min(piece, all.remaining()));
            int r;
            while ((r = s.read(b)) == 0) {
                w.await(SelectionKey.OP_READ);
            }
            assertTrue(r > 0, "ended early");
            assertEquals(r, b.position(), "the count is what it put there");
            all.put(b.flip());
        }
        return all.array();
    }

    @Test
    void theSessionNamesProtocolSuiteAndPeers() throws Exception {
        TlsChannel[] p = pair(true);
        TlsChannel s = p[0];
        TlsChannel c = p[1];
        assertEquals("TLSv1.3", s.protocol());
        assertEquals("TLS_AES_128_GCM_SHA256", s.cipherSuite(), "the server's first choice");
        assertEquals(s.cipherSuite(), c.cipherSuite());
        assertEquals("CN=alice", s.peerIdentity());
        assertEquals("CN=localhost", c.peerIdentity());
        assertFalse(s.peerIdentityIsPsk());
        assertEquals(List.of("alice"), ClientIdentity.of(s.session()).names());
        assertEquals("alice", ClientIdentity.of(s.session()).commonName());
    }

    @Test
    void aClientWithoutACertificateHasNoIdentity() throws Exception {
        TlsChannel[] p = pair(false);
        assertNull(p[0].peerIdentity());
        assertNull(ClientIdentity.of(p[0].session()));
        assertEquals("CN=localhost", p[1].peerIdentity(), "the server still proves who it is");
    }

    @Test
    void recordsAreHandedOutInPiecesAndWritesGatheredFromSeveralBuffers() throws Exception {
        TlsChannel[] p = pair(false);
        TlsChannel s = p[0];
        TlsChannel c = p[1];
        byte[] a = "first part, ".getBytes();
        byte[] b = "second part".getBytes();
        send(c, clientSide, ByteBuffer.allocate(0), ByteBuffer.wrap(a), ByteBuffer.allocate(0), ByteBuffer.wrap(b));
        byte[] all = new byte[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        byte[] first = receive(s, serverSide, 1, 1);
        assertEquals('f', first[0]);
        assertTrue(s.hasBufferedInput(), "the rest of the record waits here, not in the socket");
        byte[] rest = receive(s, serverSide, all.length - 1, 4);
        assertArrayEquals(Arrays.copyOfRange(all, 1, all.length), rest);
        assertFalse(s.hasBufferedInput());
        assertEquals(0, s.partialRecordBytes());

        // a record of as much as a read buffer holds goes straight into a large enough buffer
        byte[] big = new byte[100_000];
        new java.util.Random(5).nextBytes(big);
        CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> {
            try {
                return receive(s, serverSide, big.length, 1 << 20);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        send(c, clientSide, ByteBuffer.wrap(big, 0, 40_000), ByteBuffer.wrap(big, 40_000, 60_000));
        assertArrayEquals(big, got.get(30, TimeUnit.SECONDS));

        assertEquals(3, c.write(ByteBuffer.wrap("end".getBytes())), "one buffer: all of it taken");
        while (!c.flush()) {
            TlsChannelTest.waiter(clientSide).await(SelectionKey.OP_WRITE);
        }
        assertArrayEquals("end".getBytes(), receive(s, serverSide, 3, 64));
        c.close();
        ByteBuffer after = ByteBuffer.allocate(8);
        TlsStream.Waiter w = TlsChannelTest.waiter(serverSide);
        int n;
        while ((n = s.read(after)) == 0) {
            w.await(SelectionKey.OP_READ);
        }
        assertEquals(-1, n, "close_notify: the end of the stream");
        assertEquals(-1, s.read(after), "and it stays ended");
    }

    @Test
    void aBufferedRecordIsSeenWithoutTheSocket() throws Exception {
        TlsChannel[] p = pair(false);
        TlsChannel s = p[0];
        TlsChannel c = p[1];
        int record = 16_384; // the largest TLS plaintext record
        byte[] data = new byte[3 * record];
        new java.util.Random(9).nextBytes(data);
        CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
            try {
                send(c, clientSide, ByteBuffer.wrap(data));
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        // whole records are read a piece at a time; whenever the channel says it holds input, a read
        // returns bytes without waiting for the socket
        ByteBuffer all = ByteBuffer.allocate(data.length);
        TlsStream.Waiter w = TlsChannelTest.waiter(serverSide);
        int buffered = 0;
        while (all.hasRemaining()) {
            boolean has = s.hasBufferedInput();
            ByteBuffer piece = ByteBuffer.allocate(Math.min(record - 1, all.remaining()));
            int r = s.read(piece);
            if (has) {
                buffered++;
                assertTrue(r > 0, "it said it held input");
            }
            if (r == 0) {
                w.await(SelectionKey.OP_READ);
            }
            all.put(piece.flip());
        }
        sent.get(30, TimeUnit.SECONDS);
        assertArrayEquals(data, all.array());
        assertTrue(buffered > 0, "pieces smaller than a record leave some of it buffered");
        assertFalse(s.hasBufferedInput());
    }

    @Test
    void theJdkEnginesGetTls13TheSuitesInOrderAndHostChecks() {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true, TlsEngine.JDK);
        SSLParameters sp = sc.jdkServerParameters();
        assertEquals(List.of(TlsContext.PROTOCOL), List.of(sp.getProtocols()));
        assertEquals(List.of(TlsContext.SUITES), List.of(sp.getCipherSuites()), "this JDK has all three");
        assertTrue(sp.getUseCipherSuitesOrder());
        assertTrue(sp.getNeedClientAuth());
        assertTrue(sc.requiresClientCertificate());
        assertEquals("TLSv1.3", sc.jdkContext().getProtocol());
        SSLEngine se = sc.serverEngine();
        assertEquals(List.of(TlsContext.SUITES), List.of(se.getSSLParameters().getCipherSuites()));

        TlsContext open = TlsContext.server(pki.serverCert(), pki.serverKey(), null, false, TlsEngine.JDK);
        assertFalse(open.requiresClientCertificate());
        assertFalse(open.jdkServerParameters().getNeedClientAuth());

        TlsContext cc = TlsContext.client(pki.ca(), null, null, TlsEngine.JDK);
        SSLEngine ce = cc.clientEngine("localhost", 1);
        assertTrue(ce.getUseClientMode());
        assertEquals(List.of(TlsContext.PROTOCOL), List.of(ce.getSSLParameters().getProtocols()));
        assertEquals(List.of(TlsContext.SUITES), List.of(ce.getSSLParameters().getCipherSuites()));
        assertEquals("HTTPS", ce.getSSLParameters().getEndpointIdentificationAlgorithm());
        assertThrows(IllegalStateException.class, () -> sc.clientEngine("localhost", 1));
    }

    @Test
    void contextsDescribeThemselvesInOneLine() {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true, TlsEngine.JDK);
        assertTrue(sc.toString().startsWith("certificate CN=localhost (until "), sc.toString());
        assertTrue(sc.toString().endsWith("), client certificates required, engine=jdk"), sc.toString());
        TlsContext open = TlsContext.server(pki.serverCert(), pki.serverKey(), null, false, TlsEngine.JDK);
        assertTrue(open.toString().endsWith("), engine=jdk"), open.toString());
        assertEquals("CA " + pki.ca() + ", certificate CN=alice, engine=jdk",
                TlsContext.client(pki.ca(), pki.clientCert(), pki.clientKey(), TlsEngine.JDK).toString());
        assertEquals("default trust store, engine=jdk", TlsContext.client(null, null, null, TlsEngine.JDK).toString());
    }

    @Test
    void aClientKeyOfAnotherCertificateIsRefused() {
        TlsFileException e = assertThrows(TlsFileException.class,
                () -> TlsContext.client(pki.ca(), pki.clientCert(), pki.serverKey(), TlsEngine.JDK));
        assertTrue(e.getMessage().startsWith("private key " + pki.serverKey() + " does not match certificate "
                + pki.clientCert()), e.getMessage());
        assertEquals("a client certificate needs its private key, and a key its certificate",
                assertThrows(TlsFileException.class, () -> TlsContext.client(pki.ca(), pki.clientCert(), null)).getMessage());
    }

    @Test
    void aBlockingClientSocketHandshakesAndChecksTheServersName() throws Exception {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), null, false, TlsEngine.JDK);
        TlsContext cc = TlsContext.client(pki.ca(), null, null, TlsEngine.JDK);
        assertThrows(IllegalStateException.class, () -> sc.clientSocket(new Socket(), "localhost", 1));
        try (ServerSocketChannel l = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
            Socket plain = new Socket();
            plain.connect(l.getLocalAddress(), 10_000);
            try (SocketChannel accepted = l.accept()) {
                accepted.configureBlocking(false);
                TlsChannel s = new TlsChannel(accepted, sc.serverEngine());
                CompletableFuture<Void> sh = TlsChannelTest.handshakeInBackground(s, accepted);
                try (SSLSocket tls = cc.clientSocket(plain, "localhost", 1)) {
                    sh.get(20, TimeUnit.SECONDS);
                    assertEquals("TLSv1.3", tls.getSession().getProtocol(), "handshaken before it returns");
                    assertTrue(tls.getUseClientMode());
                    assertEquals("HTTPS", tls.getSSLParameters().getEndpointIdentificationAlgorithm());
                    assertEquals(List.of(TlsContext.PROTOCOL), List.of(tls.getSSLParameters().getProtocols()));
                    OutputStream out = tls.getOutputStream();
                    out.write("ping".getBytes());
                    out.flush();
                    assertArrayEquals("ping".getBytes(), receive(s, accepted, 4, 16));
                    send(s, accepted, ByteBuffer.wrap("pong".getBytes()));
                    InputStream in = tls.getInputStream();
                    assertArrayEquals("pong".getBytes(), in.readNBytes(4));
                }
            }
            Socket other = new Socket();
            other.connect(l.getLocalAddress(), 10_000);
            try (SocketChannel accepted = l.accept()) {
                accepted.configureBlocking(false);
                TlsChannel s = new TlsChannel(accepted, sc.serverEngine());
                CompletableFuture<Void> sh = CompletableFuture.runAsync(() -> {
                    try {
                        s.handshake(TlsChannelTest.waiter(accepted));
                    } catch (IOException e) {
                        // the client's alert
                    }
                });
                assertThrows(javax.net.ssl.SSLHandshakeException.class,
                        () -> cc.clientSocket(other, "storage.example", 1), "the certificate names localhost only");
                other.close();
                sh.get(20, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * Writes until the socket takes nothing more (the peer does not read): then a write takes
     * nothing, flush says bytes wait and counts them; once the peer reads, everything taken arrives.
     */
    static void fillTheSocketThenDrain(TlsStream c, SocketChannel ch, TlsStream peer, SocketChannel peerCh)
            throws Exception {
        byte[] chunk = new byte[1 << 20];
        new java.util.Random(13).nextBytes(chunk);
        long taken = 0;
        long n;
        do {
            n = c.write(ByteBuffer.wrap(chunk));
            taken += n;
            assertTrue(taken < (1L << 32), "the socket never filled");
        } while (n > 0);
        assertFalse(c.flush(), "the socket is full: bytes wait");
        assertTrue(c.unsentBytes() > 0);
        assertEquals(0, c.write(ByteBuffer.wrap(chunk)), "nothing more is taken while earlier bytes wait");
        long want = taken;
        CompletableFuture<Long> got = CompletableFuture.supplyAsync(() -> {
            try {
                TlsStream.Waiter w = TlsChannelTest.waiter(peerCh);
                ByteBuffer b = ByteBuffer.allocate(1 << 16);
                long sum = 0;
                long at = 0;
                while (true) {
                    b.clear();
                    int r = peer.read(b);
                    if (r < 0) {
                        return sum; // close_notify
                    }
                    if (r == 0) {
                        w.await(SelectionKey.OP_READ);
                    }
                    for (int i = 0; i < r; i++) {
                        if (b.get(i) != chunk[(int) (at++ % chunk.length)]) {
                            throw new IOException("byte " + (at - 1) + " differs");
                        }
                    }
                    sum += r;
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        });
        TlsStream.Waiter w = TlsChannelTest.waiter(ch);
        while (!c.flush()) {
            w.await(SelectionKey.OP_WRITE);
        }
        assertEquals(0, c.unsentBytes());
        c.close();
        assertEquals(want, got.get(60, TimeUnit.SECONDS), "every byte taken arrived, and not one more");
    }

    @Test
    void aFullSocketTakesNothingMoreUntilThePeerReads() throws Exception {
        TlsChannel[] p = pair(false);
        fillTheSocketThenDrain(p[1], clientSide, p[0], serverSide);
    }

    @Test
    void aRecordCutShortDuringTheHandshakeWaitsForMoreThenIsAnErrorAtTheEnd() throws Exception {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), null, false, TlsEngine.JDK);
        TlsChannel s = new TlsChannel(serverSide, sc.serverEngine());
        clientSide.configureBlocking(true);
        clientSide.write(ByteBuffer.wrap(new byte[] {0x16, 0x03, 0x01}));
        TlsChannelTest.waiter(serverSide).await(SelectionKey.OP_READ);
        assertEquals(SelectionKey.OP_READ, s.handshakeStep(), "three bytes of a record: wait for the rest");
        assertEquals(3, s.partialRecordBytes());
        assertTrue(s.isHandshaking());
        clientSide.close();
        TlsChannelTest.waiter(serverSide).await(SelectionKey.OP_READ);
        javax.net.ssl.SSLException e = assertThrows(javax.net.ssl.SSLException.class, s::handshakeStep);
        assertEquals("connection closed after 3 bytes of a TLS record, during the handshake", e.getMessage());
        assertFalse(s.isHandshaking());
    }

    @Test
    void aTaskTheEngineAsksForBeforeAnythingElseIsRunAndTheHandshakeGoesOn() throws Exception {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), null, false, TlsEngine.JDK);
        TlsContext cc = TlsContext.client(pki.ca(), null, null, TlsEngine.JDK);
        TaskFirstEngine se = new TaskFirstEngine(sc.serverEngine());
        TlsChannel s = new TlsChannel(serverSide, se);
        TlsChannel c = new TlsChannel(clientSide, cc.clientEngine("localhost", 1));
        CompletableFuture<Void> sh = TlsChannelTest.handshakeInBackground(s, serverSide);
        c.handshake(TlsChannelTest.waiter(clientSide));
        sh.get(20, TimeUnit.SECONDS);
        assertTrue(se.ran());
        assertFalse(s.isHandshaking());
        send(c, clientSide, ByteBuffer.wrap("ping".getBytes()));
        assertArrayEquals("ping".getBytes(), receive(s, serverSide, 4, 16));
    }

    @Test
    void aPeerThatLeavesBeforeSendingAnythingEndsTheHandshake() throws Exception {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), null, false, TlsEngine.JDK);
        TlsChannel s = new TlsChannel(serverSide, sc.serverEngine());
        clientSide.close();
        java.io.EOFException e = assertThrows(java.io.EOFException.class, () -> s.handshake(TlsChannelTest.waiter(serverSide)));
        assertEquals("connection closed during the TLS handshake", e.getMessage());
    }

    /** Bytes {@code b} sealed as one record by the client's engine (its channel is idle): as many of {@code n} as a record takes. */
    private byte[] seal(byte b, int n) throws IOException {
        ByteBuffer plain = ByteBuffer.allocate(n);
        java.util.Arrays.fill(plain.array(), b);
        ByteBuffer sealed = ByteBuffer.allocate(clientEngine.getSession().getPacketBufferSize());
        assertEquals(javax.net.ssl.SSLEngineResult.Status.OK, clientEngine.wrap(plain, sealed).getStatus());
        sealedPlain = plain.position();
        return Arrays.copyOf(sealed.array(), sealed.position());
    }

    /** The plaintext bytes the last {@link #seal} took. */
    int sealedPlain;

    private void sendRaw(byte[] bytes) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        assertEquals(bytes.length, clientSide.write(b), "an idle socket takes a few KiB at once");
    }

    @Test
    void aWholeRecordNotYetDecryptedCountsAsBufferedAndAPartOfOneDoesNot() throws Exception {
        TlsChannel[] p = pair(false);
        TlsChannel s = p[0];
        TlsStream.Waiter w = TlsChannelTest.waiter(serverSide);
        byte[] big = seal((byte) 1, 16_384); // a full record: no room is left beside it to decrypt the next
        int full = sealedPlain;
        byte[] small = seal((byte) 2, 1_000);
        assertEquals(1_000, sealedPlain);
        byte[] both = Arrays.copyOf(big, big.length + small.length);
        System.arraycopy(small, 0, both, big.length, small.length);
        sendRaw(both); // one write, one segment on loopback: both records arrive together
        w.await(SelectionKey.OP_READ);
        ByteBuffer first = ByteBuffer.allocate(full);
        while (first.hasRemaining()) {
            if (s.read(first) == 0) {
                w.await(SelectionKey.OP_READ);
            }
        }
        assertEquals(1, first.get(full - 1));
        assertTrue(s.hasBufferedInput(), "the second record waits whole, not decrypted yet");
        assertEquals(small.length, s.partialRecordBytes());
        ByteBuffer second = ByteBuffer.allocate(1_000);
        assertEquals(1_000, s.read(second), "read without the socket");
        assertEquals(2, second.get(999));
        assertFalse(s.hasBufferedInput());
        assertEquals(0, s.partialRecordBytes());

        byte[] third = seal((byte) 3, 1_000); // a body over 256 bytes: both bytes of its length count
        assertEquals(1_000, sealedPlain);
        sendRaw(Arrays.copyOf(third, 3));
        w.await(SelectionKey.OP_READ);
        ByteBuffer b = ByteBuffer.allocate(1_000);
        assertEquals(0, s.read(b), "three bytes of a record");
        assertEquals(3, s.partialRecordBytes());
        assertFalse(s.hasBufferedInput());
        sendRaw(Arrays.copyOfRange(third, 3, 6));
        w.await(SelectionKey.OP_READ);
        assertEquals(0, s.read(b), "a header and one byte of the body");
        assertEquals(6, s.partialRecordBytes());
        assertFalse(s.hasBufferedInput(), "the header says more is to come");
        sendRaw(Arrays.copyOfRange(third, 6, 600));
        w.await(SelectionKey.OP_READ);
        assertEquals(0, s.read(b), "600 bytes of a longer record");
        assertEquals(600, s.partialRecordBytes());
        assertFalse(s.hasBufferedInput(), "more than the length's low byte arrived, not the whole record");
        sendRaw(Arrays.copyOfRange(third, 600, third.length));
        w.await(SelectionKey.OP_READ);
        assertEquals(1_000, s.read(b));
        assertEquals(3, b.get(999));
    }

    /** A read until the end of the stream, with a buffer of {@code size}: the bytes, in order. */
    private static byte[] toTheEnd(TlsChannel s, SocketChannel ch, int size) throws IOException {
        TlsStream.Waiter w = TlsChannelTest.waiter(ch);
        java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
        while (true) {
            ByteBuffer b = ByteBuffer.allocate(size);
            int r = s.read(b);
            if (r < 0) {
                return all.toByteArray();
            }
            assertEquals(r, b.position(), "the count is what it put there");
            all.write(b.array(), 0, r);
            if (r == 0) {
                w.await(SelectionKey.OP_READ);
            }
        }
    }

    @Test
    void dataAndCloseNotifyArrivingTogetherAreBothSeen() throws Exception {
        TlsChannel[] p = pair(false);
        byte[] data = seal((byte) 7, 3);
        clientEngine.closeOutbound();
        ByteBuffer close = ByteBuffer.allocate(clientEngine.getSession().getPacketBufferSize());
        clientEngine.wrap(ByteBuffer.allocate(0), close);
        byte[] both = Arrays.copyOf(data, data.length + close.position());
        System.arraycopy(close.array(), 0, both, data.length, close.position());
        sendRaw(both);
        assertArrayEquals(new byte[] {7, 7, 7}, toTheEnd(p[0], serverSide, 1 << 16));
    }

    @Test
    void aPeerThatHangsUpWithoutCloseNotifyEndsTheStreamAfterItsData() throws Exception {
        TlsChannel[] p = pair(false);
        sendRaw(seal((byte) 5, 4));
        clientSide.close();
        assertArrayEquals(new byte[] {5, 5, 5, 5}, toTheEnd(p[0], serverSide, 1 << 16));
        assertEquals(-1, p[0].read(ByteBuffer.allocate(8)));
    }
}
