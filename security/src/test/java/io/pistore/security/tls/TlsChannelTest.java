package io.pistore.security.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two TlsChannels over a loopback socket pair: handshake, bulk data both ways, refused certificates.
 * A subclass per pair of engines (server, client): each engine alone, and each against the other.
 */
@Timeout(60)
abstract class TlsChannelTest extends TlsSocketPairFixture {
    /** The server's engine. */
    abstract TlsEngine serverEngine();

    /** The client's engine. */
    abstract TlsEngine clientEngine();

    /** Skips the subclass, with the library's reason, where the native engine cannot load. */
    static void assumeOpenSsl() {
        org.junit.jupiter.api.Assumptions.assumeTrue(NativeTls.NETTY.available(),
                () -> "the openssl TLS engine is not available: " + NativeTls.NETTY.unavailabilityCause());
    }


    /** Waits for readiness with a selector of its own, up to 10 s. */
    /** Runs {@code s}'s handshake on another thread, waiting on {@code ch}; the future fails with its IOException. */
    static CompletableFuture<Void> handshakeInBackground(TlsStream s, SocketChannel ch) {
        return CompletableFuture.runAsync(() -> {
            try {
                s.handshake(waiter(ch));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    static TlsChannel.Waiter waiter(SocketChannel ch) throws IOException {
        Selector sel = Selector.open();
        SelectionKey key = ch.register(sel, 0);
        return op -> {
            key.interestOps(op);
            if (sel.select(10_000) == 0) {
                throw new IOException("timed out");
            }
            sel.selectedKeys().clear();
        };
    }

    @Test
    void carriesBytesBothWaysAfterAMutualHandshake() throws Exception {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true, serverEngine());
        TlsContext cc = TlsContext.client(pki.ca(), pki.clientCert(), pki.clientKey(), clientEngine());
        TlsChannel s = new TlsChannel(serverSide, sc.serverEngine());
        TlsChannel c = new TlsChannel(clientSide, cc.clientEngine("localhost", 1));
        CompletableFuture<Void> sh = CompletableFuture.runAsync(() -> handshake(s, serverSide));
        c.handshake(waiter(clientSide));
        sh.get(20, TimeUnit.SECONDS);
        assertEquals("CN=alice", s.session().getPeerPrincipal().getName());
        assertEquals("TLSv1.3", c.session().getProtocol());
        assertEquals(serverEngine().label(), sc.engine().split(" ")[0]);
        assertEquals(clientEngine().label(), cc.engine().split(" ")[0]);

        byte[] data = new byte[1 << 20];
        new Random(7).nextBytes(data);
        CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> readAll(s, serverSide, data.length));
        ByteBuffer src = ByteBuffer.wrap(data);
        TlsChannel.Waiter w = waiter(clientSide);
        while (src.hasRemaining() || c.unsentBytes() > 0) {
            if (c.write(src) == 0 && !c.flush()) {
                w.await(SelectionKey.OP_WRITE);
            }
        }
        assertArrayEquals(data, got.get(30, TimeUnit.SECONDS));
        c.close();
        ByteBuffer b = ByteBuffer.allocate(16);
        TlsChannel.Waiter sw = waiter(serverSide);
        int n;
        while ((n = s.read(b)) == 0) {
            sw.await(SelectionKey.OP_READ);
        }
        assertEquals(-1, n);
    }

    @Test
    void aClientWithoutACertificateIsRefusedWhenOneIsRequired() throws Exception {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true, serverEngine());
        TlsContext cc = TlsContext.client(pki.ca(), null, null, clientEngine());
        TlsChannel s = new TlsChannel(serverSide, sc.serverEngine());
        TlsChannel c = new TlsChannel(clientSide, cc.clientEngine("localhost", 1));
        CompletableFuture<Void> ch = CompletableFuture.runAsync(() -> {
            try {
                c.handshake(waiter(clientSide));
                // TLS 1.3: the client learns of the refusal at its first read
                ByteBuffer b = ByteBuffer.allocate(1);
                TlsChannel.Waiter w = waiter(clientSide);
                while (c.read(b) == 0) {
                    w.await(SelectionKey.OP_READ);
                }
            } catch (IOException e) {
                // expected either way
            }
        });
        assertThrows(SSLException.class, () -> s.handshake(waiter(serverSide)));
        ch.get(20, TimeUnit.SECONDS);
    }

    @Test
    void aServerWhoseNameDoesNotMatchIsRefused() throws Exception {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), null, false, serverEngine());
        TlsContext cc = TlsContext.client(pki.ca(), null, null, clientEngine());
        TlsChannel s = new TlsChannel(serverSide, sc.serverEngine());
        TlsChannel c = new TlsChannel(clientSide, cc.clientEngine("storage.example", 1));
        CompletableFuture<Void> sh = CompletableFuture.runAsync(() -> {
            try {
                s.handshake(waiter(serverSide));
            } catch (IOException e) {
                // the client's alert
            }
        });
        assertThrows(SSLException.class, () -> c.handshake(waiter(clientSide)));
        sh.get(20, TimeUnit.SECONDS);
    }

    @Test
    void aRecordWithOneBitFlippedIsAnErrorNotAnEnd() throws Exception {
        TlsContext sc = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true, serverEngine());
        TlsContext cc = TlsContext.client(pki.ca(), pki.clientCert(), pki.clientKey(), clientEngine());
        TlsChannel s = new TlsChannel(serverSide, sc.serverEngine());
        javax.net.ssl.SSLEngine ce = cc.clientEngine("localhost", 1);
        TlsChannel c = new TlsChannel(clientSide, ce);
        CompletableFuture<Void> sh = CompletableFuture.runAsync(() -> handshake(s, serverSide));
        c.handshake(waiter(clientSide));
        sh.get(20, TimeUnit.SECONDS);
        // the client's engine seals a record (the channel is idle), and a bit of its ciphertext flips
        ByteBuffer plain = ByteBuffer.allocateDirect(1000);
        ByteBuffer sealed = ByteBuffer.allocateDirect(ce.getSession().getPacketBufferSize());
        assertEquals(javax.net.ssl.SSLEngineResult.Status.OK, ce.wrap(plain, sealed).getStatus());
        sealed.flip();
        int at = 5 + new Random(3).nextInt(sealed.remaining() - 5);
        sealed.put(at, (byte) (sealed.get(at) ^ 0x10));
        while (sealed.hasRemaining()) {
            clientSide.write(sealed);
        }
        TlsChannel.Waiter w = waiter(serverSide);
        ByteBuffer b = ByteBuffer.allocate(2000);
        assertThrows(SSLException.class, () -> {
            while (s.read(b) >= 0) {
                w.await(SelectionKey.OP_READ);
            }
        });
    }

    private static void handshake(TlsChannel t, SocketChannel ch) {
        try {
            t.handshake(waiter(ch));
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    private static byte[] readAll(TlsChannel t, SocketChannel ch, int n) {
        try {
            ByteBuffer b = ByteBuffer.allocate(n);
            TlsChannel.Waiter w = waiter(ch);
            while (b.hasRemaining()) {
                int r = t.read(b);
                if (r < 0) {
                    throw new IOException("end of stream after " + b.position());
                }
                if (r == 0) {
                    w.await(SelectionKey.OP_READ);
                }
            }
            return b.array();
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }
}
