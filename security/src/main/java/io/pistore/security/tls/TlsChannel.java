package io.pistore.security.tls;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSession;

/**
 * A TLS session over a non-blocking {@link SocketChannel}: the same read and write calls as the
 * channel, with plaintext on this side and TLS records on the wire. Nothing here blocks or
 * selects: {@link #read} returns 0 when no whole record has arrived, {@link #write} takes the
 * plaintext it could encrypt and returns 0 while encrypted bytes from earlier writes still wait
 * for the socket ({@link #unsentBytes}, sent by {@link #flush}), so the caller's own readiness
 * logic (a selector, a queue of pending replies) works unchanged.
 *
 * <p>One thread reads; writes (and {@link #close}) may come from any thread and are serialised
 * here. SSLEngine allows one wrap and one unwrap at the same time.
 */
public final class TlsChannel implements TlsStream {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    /** Records encrypted by one write before the socket is offered them. */
    private static final int RECORDS_PER_WRITE = 4;
    /**
     * Records one socket read may bring in: with room for one only, a bulk transfer paid a read
     * call (and the JDK's copy through its own direct buffer) per 16 KiB record.
     */
    private static final int RECORDS_PER_READ = 4;

    private final SocketChannel ch;
    private final SSLEngine engine;
    /** Records from the socket not decrypted yet (read mode); reader only. */
    private final ByteBuffer netIn;
    /** Decrypted bytes not handed out yet (read mode); reader only. */
    private final ByteBuffer plainIn;
    /** Encrypted bytes not taken by the socket yet (read mode); guarded by this. */
    private final ByteBuffer netOut;
    private volatile int unsent;
    private boolean inputClosed;
    /** Set while {@link #handshake} runs, which answers the engine's NEED_WRAP itself; reader only. */
    private boolean handshaking;
    private boolean started;
    /** {@link #write(ByteBuffer)}'s one-element array; guarded by this. */
    private final ByteBuffer[] single = new ByteBuffer[1];
    /** Whether the last {@link #unwrap} stopped for want of a whole record; reader only. */
    private boolean underflow;

    public TlsChannel(SocketChannel ch, SSLEngine engine) {
        this.ch = ch;
        this.engine = engine;
        SSLSession s = engine.getSession();
        // Heap buffers for the JDK's engine: its AES-GCM works on arrays, and what direct buffers
        // cost it outweighs the socket's copy through its own direct buffer (docs/history.md#tls-and-metrics). Direct ones for the native engine, which hands their addresses to
        // BoringSSL (a heap buffer costs it a copy through a direct one) and the socket takes them
        // without a copy.
        boolean direct = TlsContext.isNative(engine);
        netIn = buffer(s.getPacketBufferSize() * RECORDS_PER_READ, direct);
        plainIn = buffer(s.getApplicationBufferSize(), direct);
        netOut = buffer(s.getPacketBufferSize() * RECORDS_PER_WRITE, direct);
    }

    private static ByteBuffer buffer(int capacity, boolean direct) {
        return (direct ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity)).flip();
    }

    /**
     * Runs the handshake to its end on the calling thread, waiting for the socket through
     * {@code waiter} (which owns the deadline). A peer that fails the handshake (bad certificate,
     * no common protocol) gets the alert, and the caller an {@link SSLException}.
     */
    @Override
    public void handshake(Waiter waiter) throws IOException {
        TlsStream.super.handshake(waiter);
    }

    /**
     * Advances the handshake as far as it goes without waiting: 0 once it is done, else the
     * {@link SelectionKey} operation (read or write) the socket must be ready for before the next
     * call. For event loops; {@link #handshake} loops over it.
     */
    public int handshakeStep() throws IOException {
        if (!started) {
            started = true;
            handshaking = true;
            engine.beginHandshake();
        }
        try {
            while (true) {
                if (!flush()) {
                    return SelectionKey.OP_WRITE; // the peer waits for what we have written
                }
                switch (engine.getHandshakeStatus()) {
                    case NEED_TASK:
                        runTasks();
                        break;
                    case NEED_WRAP:
                        synchronized (this) {
                            wrapLocked(EMPTY);
                        }
                        break;
                    case NEED_UNWRAP:
                    case NEED_UNWRAP_AGAIN:
                        unwrap(plainIn);
                        if (underflow && engine.getHandshakeStatus().name().startsWith("NEED_UNWRAP")) {
                            int n = fill();
                            if (n < 0 && netIn.hasRemaining()) {
                                // a peer that sent part of a record and left: bad input, not a probe
                                throw new SSLException("connection closed after " + netIn.remaining()
                                        + " bytes of a TLS record, during the handshake");
                            }
                            if (n < 0) {
                                throw new EOFException("connection closed during the TLS handshake");
                            }
                            if (n == 0) {
                                return SelectionKey.OP_READ;
                            }
                        }
                        break;
                    default:
                        handshaking = false;
                        return 0;
                }
            }
        } catch (SSLException e) {
            handshaking = false;
            sendAlert();
            throw e;
        }
    }

    /** Whether the handshake has not finished yet. */
    public boolean isHandshaking() {
        return !started || handshaking;
    }

    /** The session agreed by the handshake (peer certificates, cipher suite). */
    public SSLSession session() {
        return engine.getSession();
    }

    @Override
    public String protocol() {
        return engine.getSession().getProtocol();
    }

    @Override
    public String cipherSuite() {
        return engine.getSession().getCipherSuite();
    }

    /** The peer certificate's subject (RFC 2253), or null when the peer showed none. */
    @Override
    public String peerIdentity() {
        try {
            return engine.getSession().getPeerPrincipal().getName();
        } catch (javax.net.ssl.SSLPeerUnverifiedException e) {
            return null;
        }
    }

    @Override
    public boolean peerIdentityIsPsk() {
        return false;
    }

    /** Decrypted bytes into {@code dst}: how many, 0 when no whole record is here yet, -1 at the end of the stream. */
    public int read(ByteBuffer dst) throws IOException {
        int total = 0;
        while (true) {
            if (plainIn.hasRemaining()) {
                total += move(plainIn, dst);
                if (!dst.hasRemaining()) {
                    return total;
                }
            }
            if (inputClosed) {
                return total > 0 ? total : -1;
            }
            // Records decrypt straight into the caller's buffer when a whole one fits there (plainIn
            // is empty here), saving a copy of every byte; into plainIn otherwise.
            if (dst.remaining() >= plainIn.capacity()) {
                int n = unwrap(dst);
                total += n;
                if (n > 0 || plainIn.hasRemaining()) {
                    continue;
                }
            } else if (unwrap(plainIn) > 0) {
                continue;
            }
            if (inputClosed) {
                return total > 0 ? total : -1;
            }
            if (netIn.remaining() == netIn.capacity()) {
                throw new SSLException("TLS record larger than " + netIn.capacity() + " bytes");
            }
            int n = fill();
            if (n < 0) {
                return total > 0 ? total : -1;
            }
            if (n == 0) {
                return total;
            }
        }
    }

    /**
     * Bytes of a TLS record that arrived but is not whole yet (reader only): a peer that ends the
     * connection while this is not 0 cut a record short, which is bad input, not a clean close.
     */
    public int partialRecordBytes() {
        return netIn.remaining();
    }

    /**
     * Whether {@link #read} has bytes without reading the socket: decrypted bytes not handed out, or
     * a whole record not decrypted yet. A caller about to wait for the socket to be readable asks
     * this first: such bytes never make the socket readable again. Reader only.
     */
    public boolean hasBufferedInput() {
        if (plainIn.hasRemaining()) {
            return true;
        }
        int p = netIn.position();
        if (netIn.remaining() < 5) {
            return false;
        }
        int length = ((netIn.get(p + 3) & 0xff) << 8) | (netIn.get(p + 4) & 0xff);
        return netIn.remaining() >= 5 + length;
    }

    /**
     * Encrypts what it can of {@code srcs[offset..offset+length)} and offers it to the socket;
     * returns the plaintext bytes taken, 0 while bytes of earlier writes still wait for the socket.
     */
    public synchronized long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        long taken = 0;
        int i = offset;
        int end = offset + length;
        int packet = engine.getSession().getPacketBufferSize();
        // Until the plaintext is all encrypted and sent, or the socket takes no more: a few records
        // at a time, so one socket write carries several of them.
        while (flushLocked()) {
            while (i < end && !srcs[i].hasRemaining()) {
                i++;
            }
            if (i == end) {
                return taken;
            }
            while (i < end && netOut.capacity() - netOut.remaining() >= packet) {
                SSLEngineResult r = wrapLocked(srcs, i, end - i);
                taken += r.bytesConsumed();
                if (r.bytesConsumed() == 0) {
                    return taken;
                }
                while (i < end && !srcs[i].hasRemaining()) {
                    i++;
                }
            }
        }
        return taken;
    }

    public synchronized int write(ByteBuffer src) throws IOException {
        single[0] = src;
        try {
            return (int) write(single, 0, 1);
        } finally {
            single[0] = null;
        }
    }

    /** Offers the encrypted bytes still waiting to the socket; true when none wait any more. */
    public synchronized boolean flush() throws IOException {
        return flushLocked();
    }

    /** Encrypted bytes that the socket has not taken yet; any thread. */
    public int unsentBytes() {
        return unsent;
    }

    /** Sends close_notify if the socket takes it at once; best effort, any thread. The channel is not closed. */
    public void close() {
        synchronized (this) {
            engine.closeOutbound();
            try {
                wrapLocked(EMPTY);
                flushLocked();
            } catch (IOException | RuntimeException ignored) {
                // the peer may be gone; the socket is closed next anyway
            }
        }
    }

    private void sendAlert() {
        synchronized (this) {
            try {
                if (engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
                    wrapLocked(EMPTY);
                }
                flushLocked();
            } catch (IOException | RuntimeException ignored) {
                // the alert is a courtesy
            }
        }
    }

    /**
     * Decrypts the records in netIn into {@code into} (plainIn, or the caller's buffer while plainIn
     * is empty), running the engine's tasks on the way; returns the plaintext bytes it produced in
     * {@code into} (a record that no longer fits the caller's buffer goes to plainIn, uncounted).
     * Sets {@link #underflow} when it stopped for want of a whole record (only then is reading the
     * socket the next step).
     */
    private int unwrap(ByteBuffer into) throws IOException {
        ByteBuffer counted = into;
        int produced = 0;
        underflow = false;
        while (true) {
            boolean buffered = into == plainIn;
            if (buffered) {
                plainIn.compact();
            }
            SSLEngineResult r;
            try {
                r = engine.unwrap(netIn, into);
            } finally {
                if (buffered) {
                    plainIn.flip();
                }
            }
            if (into == counted) {
                produced += r.bytesProduced();
            }
            switch (r.getStatus()) {
                case CLOSED:
                    inputClosed = true;
                    return produced;
                case BUFFER_OVERFLOW:
                    if (!buffered && !plainIn.hasRemaining()) {
                        into = plainIn; // the caller's buffer is full: the next record waits in plainIn
                        continue;
                    }
                    return produced; // plainIn is full: the caller drains it first
                case BUFFER_UNDERFLOW:
                    underflow = true;
                    return produced;
                default:
                    break;
            }
            SSLEngineResult.HandshakeStatus hs = r.getHandshakeStatus();
            boolean ranTasks = hs == SSLEngineResult.HandshakeStatus.NEED_TASK;
            if (ranTasks) {
                runTasks();
                hs = engine.getHandshakeStatus();
            }
            if (hs == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
                if (handshaking) {
                    return produced; // the handshake loop writes its next flight
                }
                // a key update the peer asked us to answer, or the native engine's alert for a
                // record it could not open: it throws that error from the wrap after the alert's
                // (the JDK's engine threw from unwrap already), so one more wrap, of nothing.
                synchronized (this) {
                    try {
                        wrapLocked(EMPTY);
                        wrapLocked(EMPTY);
                    } finally {
                        flushLocked();
                    }
                }
            }
            // After a task (the native engine checks the peer's certificate in one) the engine may
            // go on with what it already has: one more unwrap, even of nothing, lets it; it says
            // BUFFER_UNDERFLOW if it needs more from the socket.
            if (!netIn.hasRemaining() && !ranTasks) {
                underflow = true;
                return produced;
            }
        }
    }

    /** Reads from the socket into netIn; the channel's count (-1 at its end). */
    private int fill() throws IOException {
        netIn.compact();
        try {
            return ch.read(netIn);
        } finally {
            netIn.flip();
        }
    }

    private SSLEngineResult wrapLocked(ByteBuffer src) throws IOException {
        return wrapLocked(new ByteBuffer[] {src}, 0, 1);
    }

    private SSLEngineResult wrapLocked(ByteBuffer[] srcs, int offset, int length) throws IOException {
        netOut.compact();
        SSLEngineResult r;
        try {
            r = engine.wrap(srcs, offset, length, netOut);
        } finally {
            netOut.flip();
            unsent = netOut.remaining();
        }
        if (r.getStatus() == SSLEngineResult.Status.CLOSED && r.bytesProduced() == 0 && !engine.isOutboundDone()) {
            throw new SSLException("TLS session closed");
        }
        if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
            runTasks();
        }
        return r;
    }

    private boolean flushLocked() throws IOException {
        while (netOut.hasRemaining()) {
            if (ch.write(netOut) == 0) {
                break;
            }
        }
        unsent = netOut.remaining();
        return unsent == 0;
    }

    private void runTasks() {
        Runnable t;
        while ((t = engine.getDelegatedTask()) != null) {
            t.run();
        }
    }

    private static int move(ByteBuffer from, ByteBuffer to) {
        int n = Math.min(from.remaining(), to.remaining());
        if (n == 0) {
            return 0;
        }
        ByteBuffer part = from.duplicate();
        part.limit(part.position() + n);
        to.put(part);
        from.position(from.position() + n);
        return n;
    }
}
