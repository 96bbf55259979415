package io.pistore.frontend.nbd;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * A client's socket: non-blocking, with a selector of its own that only the connection's thread
 * waits on. Any thread may close it (server shutdown, a failed reply write) or wake the waiting
 * thread; once closed it stays closed, and every phase of the connection stops at its next check.
 */
final class NbdSocket {
    private final SocketChannel ch;
    private Selector selector;
    private SelectionKey key;
    private volatile boolean closed;

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

    int read(ByteBuffer b) throws IOException {
        return ch.read(b);
    }

    int write(ByteBuffer b) throws IOException {
        return ch.write(b);
    }

    long write(ByteBuffer[] bufs) throws IOException {
        return ch.write(bufs);
    }

    long write(ByteBuffer[] bufs, int offset, int length) throws IOException {
        return ch.write(bufs, offset, length);
    }

    /**
     * Waits, without a time limit, until one of {@code ops} ({@link SelectionKey} bits, possibly none)
     * is ready or {@link #wakeup} is called; returns the ready operations (0 when woken).
     */
    int await(int ops) throws IOException {
        key.interestOps(ops);
        selector.select();
        int ready = selector.selectedKeys().isEmpty() ? 0 : key.readyOps();
        selector.selectedKeys().clear();
        return ready;
    }

    /** Waits up to {@code millis} (at least 1) for {@code op}; the interest is dropped again afterwards. */
    void awaitReady(int op, long millis) throws IOException {
        key.interestOps(op);
        selector.select(millis);
        selector.selectedKeys().clear();
        key.interestOps(0);
    }
}
