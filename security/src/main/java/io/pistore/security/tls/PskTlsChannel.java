package io.pistore.security.tls;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import javax.net.ssl.SSLException;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.TlsClientProtocol;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsFatalAlertReceived;
import org.bouncycastle.tls.TlsProtocol;
import org.bouncycastle.tls.TlsServerProtocol;
import org.bouncycastle.tls.crypto.TlsCrypto;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCryptoProvider;

/**
 * A TLS-PSK session over a non-blocking {@link SocketChannel}, server side ({@link PskServer}: the
 * NBD frontend, the tcp transport's targets) or client side ({@link PskClient}: the tcp transport's
 * hosts), with the same calls and the same non-blocking contract as {@link TlsChannel} (see
 * {@link TlsStream}). Bouncy Castle's protocol runs in its non-blocking mode: bytes read from the
 * socket are offered to it, the records it produces are taken out and written to the socket, so it
 * never touches the socket itself.
 *
 * <p>The protocol object is not safe for concurrent use, and reading can make it write (alerts, key
 * updates), so every call into it holds this object's lock; the reader holds it only while records
 * are decrypted, not while it waits for the socket.
 */
public final class PskTlsChannel implements TlsStream {
    /**
     * The JDK's providers do the record crypto (AES-GCM with the CPU's instructions); one instance
     * serves every connection, as Bouncy Castle's own JSSE provider shares it.
     */
    private static final TlsCrypto CRYPTO = new JcaTlsCryptoProvider().create(new SecureRandom());
    /** Plaintext encrypted by one step of {@link #write}: four full records. */
    private static final int PLAIN_PER_STEP = 4 * 16384;
    /** Room for those four records with their headers, nonces, tags and padding. */
    private static final int NET_OUT_BYTES = 4 * (16384 + 512);

    private final SocketChannel ch;
    private final TlsProtocol protocol;
    /** This side: a server, or (null) a client. */
    private final PskServer server;
    private final PskClient client;
    /** Bytes read from the socket, offered to the protocol at once; reader only. */
    private final ByteBuffer netIn = ByteBuffer.allocate(16384 + 512);
    /** Records not taken by the socket yet (read mode); guarded by this. */
    private final ByteBuffer netOut = ByteBuffer.allocate(NET_OUT_BYTES).flip();
    /** Plaintext gathered from the caller's buffers for one step; guarded by this. */
    private final byte[] plainOut = new byte[PLAIN_PER_STEP];
    private volatile int unsent;
    private boolean started;
    private boolean handshaking;
    private boolean inputClosed;
    /** The identity whose key the client proved, set when the handshake succeeds. */
    private volatile String proven;
    private final ByteBuffer[] single = new ByteBuffer[1];

    /** A server-side session for one accepted connection, accepting the keys of {@code keys}. */
    public PskTlsChannel(SocketChannel ch, PskKeys keys) {
        this.ch = ch;
        this.server = new PskServer(CRYPTO, keys);
        this.client = null;
        this.protocol = new TlsServerProtocol();
    }

    private PskTlsChannel(SocketChannel ch, String identity, byte[] key) {
        this.ch = ch;
        this.server = null;
        this.client = new PskClient(CRYPTO, identity, key);
        this.protocol = new TlsClientProtocol();
    }

    /** A client-side session for one connection, offering {@code identity} with its {@code key} (TLS 1.3). */
    public static PskTlsChannel client(SocketChannel ch, String identity, byte[] key) {
        return new PskTlsChannel(ch, identity, key);
    }

    @Override
    public int handshakeStep() throws IOException {
        try {
            if (!started) {
                started = true;
                handshaking = true;
                synchronized (this) {
                    if (server != null) {
                        ((TlsServerProtocol) protocol).accept(server);
                    } else {
                        ((TlsClientProtocol) protocol).connect(client);
                    }
                }
            }
            while (true) {
                if (!flush()) {
                    return SelectionKey.OP_WRITE; // the client waits for what we have written
                }
                synchronized (this) {
                    if (protocol.isConnected()) {
                        // the server checked the client's binder; the client, the server's Finished under the same key
                        proven = server != null ? server.askedIdentity() : client.identity();
                        handshaking = false;
                        return 0;
                    }
                }
                int n = fill();
                if (n < 0) {
                    throw new EOFException("connection closed during the TLS handshake");
                }
                if (n == 0) {
                    return SelectionKey.OP_READ;
                }
                offer();
            }
        } catch (EOFException e) {
            handshaking = false;
            throw e;
        } catch (IOException | RuntimeException e) {
            handshaking = false;
            sendAlert();
            throw new SSLException(why(e), e);
        }
    }

    /** Whether the handshake has not finished yet. */
    public boolean isHandshaking() {
        return !started || handshaking;
    }

    @Override
    public synchronized String protocol() {
        return server != null ? server.protocolName() : client.protocolName();
    }

    @Override
    public synchronized String cipherSuite() {
        return server != null ? server.cipherSuiteName() : client.cipherSuiteName();
    }

    /** The identity whose key the peer proved (a client: its own, which the server proved too); null until the handshake succeeded. */
    @Override
    public String peerIdentity() {
        return proven;
    }

    @Override
    public boolean peerIdentityIsPsk() {
        return true;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        int total = 0;
        while (true) {
            synchronized (this) {
                int avail = protocol.getAvailableInputBytes();
                if (avail > 0 && dst.hasRemaining()) {
                    total += protocol.readInput(dst, Math.min(avail, dst.remaining()));
                }
            }
            if (!dst.hasRemaining()) {
                return total;
            }
            if (inputClosed) {
                return total > 0 ? total : -1;
            }
            int n = fill();
            if (n < 0) {
                inputClosed = true;
                continue; // hand out what is left, then the end of the stream
            }
            if (n == 0) {
                return total;
            }
            offer();
        }
    }

    @Override
    public synchronized boolean hasBufferedInput() {
        // every byte read from the socket is offered at once: whole records are decrypted then, and
        // a partial one waits inside the protocol until the socket brings the rest
        return protocol.getAvailableInputBytes() > 0;
    }

    @Override
    public synchronized long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        long taken = 0;
        int i = offset;
        int end = offset + length;
        while (flushLocked()) {
            while (i < end && !srcs[i].hasRemaining()) {
                i++;
            }
            if (i == end) {
                return taken;
            }
            int n = 0;
            while (i < end && n < plainOut.length) {
                int k = Math.min(srcs[i].remaining(), plainOut.length - n);
                srcs[i].get(plainOut, n, k);
                n += k;
                if (!srcs[i].hasRemaining()) {
                    i++;
                }
            }
            protocol.writeApplicationData(plainOut, 0, n);
            taken += n;
        }
        return taken;
    }

    @Override
    public synchronized int write(ByteBuffer src) throws IOException {
        single[0] = src;
        try {
            return (int) write(single, 0, 1);
        } finally {
            single[0] = null;
        }
    }

    @Override
    public synchronized boolean flush() throws IOException {
        return flushLocked();
    }

    @Override
    public int unsentBytes() {
        return unsent;
    }

    @Override
    public void close() {
        synchronized (this) {
            try {
                protocol.close();
                flushLocked();
            } catch (IOException | RuntimeException ignored) {
                // the peer may be gone; the socket is closed next anyway
            }
        }
    }

    /** Offers the bytes read into netIn to the protocol, and sends what it answers if the socket takes it. */
    private void offer() throws IOException {
        synchronized (this) {
            netIn.flip();
            try {
                protocol.offerInput(netIn.array(), netIn.arrayOffset() + netIn.position(), netIn.remaining());
            } finally {
                netIn.clear();
            }
            flushLocked();
            if (protocol.isClosed() && !handshaking) {
                inputClosed = true;
            }
        }
    }

    /** Reads from the socket into netIn; the channel's count (-1 at its end). */
    private int fill() throws IOException {
        return ch.read(netIn);
    }

    /** Sends the alert the protocol queued when it failed, if the socket takes it at once. */
    private void sendAlert() {
        synchronized (this) {
            try {
                flushLocked();
            } catch (IOException | RuntimeException ignored) {
                // the alert is a courtesy
            }
        }
    }

    /** Moves records from the protocol to netOut and netOut to the socket; true when nothing waits. */
    private boolean flushLocked() throws IOException {
        while (true) {
            if (protocol.getAvailableOutputBytes() > 0 && netOut.remaining() < netOut.capacity()) {
                netOut.compact();
                int n = protocol.readOutput(netOut.array(), netOut.arrayOffset() + netOut.position(), netOut.remaining());
                netOut.position(netOut.position() + n);
                netOut.flip();
            }
            if (!netOut.hasRemaining()) {
                unsent = 0;
                return true;
            }
            if (ch.write(netOut) == 0) {
                unsent = netOut.remaining() + protocol.getAvailableOutputBytes();
                return false;
            }
        }
    }

    /** One line for a failed handshake: whose identity and what went wrong, never a key. */
    private String why(Throwable e) {
        short alert = e instanceof TlsFatalAlert f ? f.getAlertDescription()
                : e instanceof TlsFatalAlertReceived r ? r.getAlertDescription() : -1;
        if (client != null) {
            String id = client.identity();
            if (e instanceof TlsFatalAlertReceived && alert == AlertDescription.handshake_failure) {
                return "the target refused PSK identity '" + id + "' (it has no key of that name, or takes no pre-shared keys)";
            }
            if (alert == AlertDescription.decrypt_error || alert == AlertDescription.bad_record_mac) {
                return "the target has another key for PSK identity '" + id + "' (" + describe(e, alert) + ")";
            }
            return describe(e, alert);
        }
        String asked;
        boolean known;
        boolean hello;
        synchronized (this) {
            asked = server.askedIdentity();
            known = server.identityKnown();
            hello = server.sawClientHello();
        }
        if (!hello) {
            return "no TLS ClientHello from the client (" + describe(e, alert) + ")";
        }
        if (asked != null && !known) {
            return "unknown PSK identity '" + asked + "'";
        }
        if (asked != null && (alert == AlertDescription.decrypt_error || alert == AlertDescription.bad_record_mac)) {
            return "wrong key for PSK identity '" + asked + "' (" + describe(e, alert) + ")";
        }
        return describe(e, alert);
    }

    private static String describe(Throwable e, short alert) {
        String m = e.getMessage();
        if (alert >= 0) {
            String name = AlertDescription.getText(alert);
            if (m == null) {
                return name;
            }
            return m.startsWith(name) ? m : name + ": " + m; // Bouncy Castle's own messages start with the name
        }
        return m == null ? e.getClass().getSimpleName() : m;
    }
}
