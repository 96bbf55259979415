package io.pistore.security.tls;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Both sides of TLS-PSK as pistore's tcp transport runs them, each a {@link PskTlsChannel} over a
 * non-blocking loopback socket: TLS 1.3 with the identity both sides name, bytes both ways; an
 * unknown identity and a wrong key each refused with a line on both sides that names the identity.
 */
@Timeout(60)
class PskClientChannelTest {
    SocketChannel serverSide;
    SocketChannel clientSide;

    @BeforeEach
    void connect() throws Exception {
        SocketChannel[] pair = TlsSocketPairFixture.socketPair();
        serverSide = pair[0];
        clientSide = pair[1];
    }

    @AfterEach
    void close() throws IOException {
        serverSide.close();
        clientSide.close();
    }

    private static void write(TlsStream s, SocketChannel ch, byte[] bytes) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(bytes);
        TlsStream.Waiter w = TlsChannelTest.waiter(ch);
        while (src.hasRemaining() || s.unsentBytes() > 0) {
            if (s.write(new ByteBuffer[] {src}) == 0 && !s.flush()) {
                w.await(SelectionKey.OP_WRITE);
            }
        }
    }

    @Test
    void theClientAndTheServerAgreeOnTls13AndCarryBytesBothWays() throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, PskTlsChannelTest.KEYS);
        PskTlsChannel c = PskTlsChannel.client(clientSide, "alice", PskTlsChannelTest.ALICE);
        CompletableFuture<Void> sh = TlsChannelTest.handshakeInBackground(s, serverSide);
        c.handshake(TlsChannelTest.waiter(clientSide));
        sh.get(20, TimeUnit.SECONDS);
        for (PskTlsChannel t : new PskTlsChannel[] {s, c}) {
            assertEquals("alice", t.peerIdentity());
            assertTrue(t.peerIdentityIsPsk());
            assertEquals("TLSv1.3", t.protocol());
            assertEquals("TLS_AES_128_GCM_SHA256", t.cipherSuite());
        }
        byte[] up = new byte[1 << 20];
        new Random(1).nextBytes(up);
        CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> PskTlsChannelTest.readAll(s, serverSide, up.length));
        write(c, clientSide, up);
        assertArrayEquals(up, got.get(30, TimeUnit.SECONDS));
        byte[] down = new byte[300_000];
        new Random(2).nextBytes(down);
        CompletableFuture<byte[]> back = CompletableFuture.supplyAsync(() -> PskTlsChannelTest.readAll(c, clientSide,
                down.length));
        write(s, serverSide, down);
        assertArrayEquals(down, back.get(30, TimeUnit.SECONDS));
    }

    /** The server's and the client's handshake failures, in that order. */
    private String[] refusals(String identity, byte[] key) throws Exception {
        PskTlsChannel s = new PskTlsChannel(serverSide, PskTlsChannelTest.KEYS);
        PskTlsChannel c = PskTlsChannel.client(clientSide, identity, key);
        CompletableFuture<Void> sh = TlsChannelTest.handshakeInBackground(s, serverSide);
        SSLException ce = assertThrows(SSLException.class, () -> {
            c.handshake(TlsChannelTest.waiter(clientSide));
            // TLS 1.3: the server may refuse after the client's Finished; its alert then ends the first read
            ByteBuffer b = ByteBuffer.allocate(1);
            TlsStream.Waiter w = TlsChannelTest.waiter(clientSide);
            while (c.read(b) == 0) {
                w.await(SelectionKey.OP_READ);
            }
        });
        ExecutionException se = assertThrows(ExecutionException.class, () -> sh.get(20, TimeUnit.SECONDS));
        return new String[] {se.getCause().getCause().getMessage(), ce.getMessage()};
    }

    @Test
    void anUnknownIdentityIsRefusedByNameOnBothSides() throws Exception {
        String[] m = refusals("mallory", PskTlsChannelTest.ALICE);
        assertEquals("unknown PSK identity 'mallory'", m[0]);
        assertTrue(m[1].startsWith("the target refused PSK identity 'mallory'"), m[1]);
    }

    @Test
    void aWrongKeyIsRefusedByNameOnBothSides() throws Exception {
        byte[] wrong = PskTlsChannelTest.ALICE.clone();
        wrong[5] ^= 0x40;
        String[] m = refusals("alice", wrong);
        assertTrue(m[0].startsWith("wrong key for PSK identity 'alice'"), m[0]);
        assertTrue(m[1].startsWith("the target has another key for PSK identity 'alice'"), m[1]);
    }
}
