package io.pistore.security.tls;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;

/**
 * A TLS session over a non-blocking socket, as the frontends use it: the socket's read and write
 * calls with plaintext on this side and TLS records on the wire, never blocking or selecting
 * itself. {@link TlsChannel} runs the JDK's TLS (X.509 certificates); {@link PskTlsChannel} runs
 * Bouncy Castle's (pre-shared keys), so a frontend switches to either the same way.
 *
 * <p>One thread reads; writes and {@link #close} may come from any thread.
 */
public interface TlsStream {
    /** Waits until the socket is ready for {@code op} (a {@link SelectionKey} bit), or throws on timeout. */
    @FunctionalInterface
    interface Waiter {
        void await(int op) throws IOException;
    }

    /**
     * Runs the handshake to its end on the calling thread, waiting for the socket through
     * {@code waiter} (which owns the deadline). A peer that fails the handshake gets an alert, and
     * the caller an {@link IOException} that says why in one line.
     */
    default void handshake(Waiter waiter) throws IOException {
        int op;
        while ((op = handshakeStep()) != 0) {
            waiter.await(op);
        }
    }

    /**
     * Advances the handshake as far as it goes without waiting: 0 once it is done, else the
     * {@link SelectionKey} operation the socket must be ready for before the next call.
     */
    int handshakeStep() throws IOException;

    /** The protocol agreed, as {@code TLSv1.3}. */
    String protocol();

    /** The cipher suite agreed, by its IANA name. */
    String cipherSuite();

    /**
     * Who the peer proved to be: its certificate's subject (RFC 2253) or its pre-shared key's
     * identity, or null when it proved nothing.
     */
    String peerIdentity();

    /** Whether {@link #peerIdentity} is a pre-shared key's identity rather than a certificate subject. */
    boolean peerIdentityIsPsk();

    /** Decrypted bytes into {@code dst}: how many, 0 when no whole record is here yet, -1 at the end of the stream. */
    int read(ByteBuffer dst) throws IOException;

    /** Whether {@link #read} has bytes without reading the socket (such bytes never make it readable again). */
    boolean hasBufferedInput();

    /**
     * Encrypts what it can of {@code srcs[offset..offset+length)} and offers it to the socket;
     * returns the plaintext bytes taken, 0 while bytes of earlier writes still wait for the socket.
     */
    long write(ByteBuffer[] srcs, int offset, int length) throws IOException;

    default long write(ByteBuffer[] srcs) throws IOException {
        return write(srcs, 0, srcs.length);
    }

    int write(ByteBuffer src) throws IOException;

    /** Offers the encrypted bytes still waiting to the socket; true when none wait any more. */
    boolean flush() throws IOException;

    /** Encrypted bytes that the socket has not taken yet; any thread. */
    int unsentBytes();

    /** Sends close_notify if the socket takes it at once; best effort, any thread. The socket is not closed. */
    void close();
}
