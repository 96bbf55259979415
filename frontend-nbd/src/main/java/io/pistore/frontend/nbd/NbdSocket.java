package io.pistore.frontend.nbd;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import io.pistore.security.tls.TlsStream;
import java.util.function.Function;

/**
 * A client's socket: non-blocking, with a selector of its own that only the connection's thread
 * waits on. Any thread may close it (server shutdown, a failed reply write) or wake the waiting
 * thread; once closed it stays closed, and every phase of the connection stops at its next check.
 *
 * <p>After NBD_OPT_STARTTLS the same calls go through a {@link TlsStream} (the JDK's TLS with
 * certificates, or Bouncy Castle's with pre-shared keys): reads and writes carry plaintext, the
 * socket TLS records. Encrypted bytes the socket did not take yet are
 * {@link #unsentBytes}; a write returns 0 while there are any, and {@link #flush} offers them again.
 */
final class NbdSocket {
    private final SocketChannel ch;
    private Selector selector;
    private SelectionKey key;
    private volatile boolean closed;
    /** The TLS session once STARTTLS ran, else null; set by the connection's thread before any other thread writes. */
    private volatile TlsStream tls;

    NbdSocket(SocketChannel ch) {
        this.ch = ch;
    }

    /** Makes the socket non-blocking and registers it with its selector (interest in nothing yet). */
    void open() throws IOException {
        ch.configureBlocking(false);
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        selector = Selector.open();
        key = ch.register(selector, 0);
    }

    boolean isClosed() {
        return closed;
    }

    /** Closes the socket and its selector, waking a thread that waits on it; any thread, any number of times. */
    void close() {
        TlsStream t = tls;
        if (t != null && !closed) {
            t.close();
        }
        closed = true;
        try {
            ch.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        Selector s = selector;
        if (s != null) {
            s.wakeup();
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    /** Ends a wait in {@link #await} or {@link #awaitReady} early; any thread. */
    void wakeup() {
        Selector s = selector;
        if (s != null) {
            s.wakeup();
        }
    }

    /**
     * Switches to TLS: runs the server side of the handshake of the session {@code tls} makes over
     * the socket, on the calling thread (the connection's), waiting through {@code waiter}, which
     * owns the time limit.
     */
    TlsStream startTls(Function<SocketChannel, TlsStream> tls, TlsStream.Waiter waiter) throws IOException {
        TlsStream t = tls.apply(ch);
        t.handshake(waiter);
        this.tls = t;
        return t;
    }

    boolean isTls() {
        return tls != null;
    }

    int read(ByteBuffer b) throws IOException {
        TlsStream t = tls;
        return t == null ? ch.read(b) : t.read(b);
    }

    int write(ByteBuffer b) throws IOException {
        TlsStream t = tls;
        return t == null ? ch.write(b) : t.write(b);
    }

    long write(ByteBuffer[] bufs) throws IOException {
        TlsStream t = tls;
        return t == null ? ch.write(bufs) : t.write(bufs);
    }

    long write(ByteBuffer[] bufs, int offset, int length) throws IOException {
        TlsStream t = tls;
        return t == null ? ch.write(bufs, offset, length) : t.write(bufs, offset, length);
    }

    /** Encrypted bytes the socket has not taken yet (0 without TLS); any thread. */
    int unsentBytes() {
        TlsStream t = tls;
        return t == null ? 0 : t.unsentBytes();
    }

    /** Offers the encrypted bytes still waiting to the socket; true when none wait (always without TLS). */
    boolean flush() throws IOException {
        TlsStream t = tls;
        return t == null || t.flush();
    }

    /**
     * Waits, without a time limit, until one of {@code ops} ({@link SelectionKey} bits, possibly none)
     * is ready or {@link #wakeup} is called; returns the ready operations (0 when woken).
     */
    int await(int ops) throws IOException {
        TlsStream t = tls;
        if (t != null && (ops & SelectionKey.OP_READ) != 0 && t.hasBufferedInput()) {
            return SelectionKey.OP_READ; // decrypted bytes wait in the TLS layer, not in the socket
        }
        key.interestOps(ops);
        selector.select();
        int ready = selector.selectedKeys().isEmpty() ? 0 : key.readyOps();
        selector.selectedKeys().clear();
        return ready;
    }

    /** Waits up to {@code millis} (at least 1) for {@code op}; the interest is dropped again afterwards. */
    void awaitReady(int op, long millis) throws IOException {
        TlsStream t = tls;
        if (t != null && op == SelectionKey.OP_READ && t.hasBufferedInput()) {
            return;
        }
        key.interestOps(op);
        selector.select(millis);
        selector.selectedKeys().clear();
        key.interestOps(0);
    }
}
