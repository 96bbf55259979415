package io.pistore.transport.tcp.internal;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import io.pistore.security.tls.TlsChannel;
import io.pistore.security.tls.TlsStream;
import javax.net.ssl.SSLException;

/**
 * One TCP connection (one queue): framing, digests, the receive state machine and the send queue.
 * Everything here runs on the connection's {@link EventLoop} thread.
 *
 * <p>Receive: bytes land in a direct buffer; a frame's fixed header is checked (magic, version,
 * header digest, payload length against the negotiated maximum) before anything is sized from it;
 * the payload is then handed to the subclass's {@link PayloadSink} chunk by chunk, straight out of
 * the receive buffer, and the data digest is checked before the frame counts. Send: frames queue
 * up and are written into a direct buffer as the socket drains it, so a large payload never needs
 * a buffer of its own size.
 *
 * <p>With TLS ({@link #startTls}) the same bytes pass through a {@link TlsChannel} before any
 * frame: the receive buffer holds decrypted bytes, the send buffer is encrypted as the socket takes
 * it; without TLS the socket is read and written directly.
 *
 * <p>Bad input closes the connection with one log line naming the peer and the reason; nothing
 * else is affected.
 */
abstract class TcpConnection implements Selectable {
    static final System.Logger LOG = System.getLogger("io.pistore.transport.tcp");
    static final int BUFFER_SIZE = 256 * 1024;

    private static final int RX_HEADER = 0;
    private static final int RX_PAYLOAD = 1;
    private static final int RX_DIGEST = 2;
    private static final int TX_HEADER = 0;
    private static final int TX_PAYLOAD = 1;
    private static final int TX_DIGEST = 2;

    final EventLoop loop;
    final SocketChannel ch;
    final String peer;
    private final String role;
    SelectionKey key;
    /** The TLS session, or null for plaintext; loop thread. */
    private TlsStream tls;
    private boolean tlsHandshaking;

    private final ByteBuffer in = ByteBuffer.allocateDirect(BUFFER_SIZE);
    private final ByteBuffer out = ByteBuffer.allocateDirect(BUFFER_SIZE);
    private final ArrayDeque<OutFrame> outQueue = new ArrayDeque<>();
    private boolean dirty;
    boolean closed;
    /**
     * Frames queued by the loop thread after which the connection flushes at once instead of at the
     * end of the loop's pass (0: only then). Without it, a pass that completes a whole queue's worth
     * of requests sends them all at its end, and host and target take turns, each idle while the
     * other works on the batch; a quarter of the queue at a time keeps both busy (docs/TCP-TUNING.md).
     */
    private int flushFrames;
    private int queuedSinceFlush;
    /** Flushes made before the end of a pass because {@code flushFrames} frames were queued (loop thread; tests). */
    long earlyFlushes;

    /** Negotiated: payload limit of every frame after the handshake, and the digests. */
    long maxPayload = Protocol.MAX_HANDSHAKE_PAYLOAD;
    boolean rxHeaderDigest;
    boolean rxDataDigest;
    boolean txHeaderDigest;
    boolean txDataDigest;

    /**
     * How long a frame may stay half-received with no byte arriving before the connection is closed
     * (a peer that stalls mid-frame would otherwise hold its buffers and command slots forever).
     */
    long frameTimeoutNanos = Long.MAX_VALUE;
    private long rxActivityNanos = System.nanoTime();

    /**
     * When the last socket read that brought bytes returned: every frame parsed since had all its
     * bytes by then ({@link io.pistore.spi.BlockRequest#receivedNanos}).
     */
    final long lastReceiveNanos() {
        return rxActivityNanos;
    }

    // receive state
    final ByteBuffer header = ByteBuffer.allocate(Protocol.HEADER_SIZE);
    private int rxState = RX_HEADER;
    private int rxOpcode;
    private long rxLeft;
    private long rxLength;
    private PayloadSink sink;
    private final CRC32C rxCrc = new CRC32C();

    // send state
    private OutFrame tx;
    private int txState;
    private long txLeft;
    private boolean txDigests;
    private final CRC32C txCrc = new CRC32C();
    private final CRC32C hdrCrc = new CRC32C();

    TcpConnection(EventLoop loop, SocketChannel ch, String role, String peer) {
        this.loop = loop;
        this.ch = ch;
        this.role = role;
        this.peer = peer;
    }

    static String describe(SocketChannel ch) {
        try {
            InetSocketAddress a = (InetSocketAddress) ch.getRemoteAddress();
            if (a != null) {
                return a.getAddress().getHostAddress() + ":" + a.getPort();
            }
        } catch (IOException | RuntimeException e) {
            // fall through
        }
        return "unconnected";
    }

    // ------------------------------------------------------------------ subclass hooks

    /**
     * A frame header arrived and passed the generic checks. Returns the sink for its payload (null
     * when the payload is empty), or throws for bad input.
     */
    abstract PayloadSink onHeader(int opcode, int flags, int commandId, long payloadLength) throws ProtocolException;

    /** The frame's payload and digest arrived. */
    abstract void onFrame(int opcode) throws ProtocolException;

    /** The connection closed (once); fail or drop what is outstanding. */
    abstract void onClosed(String reason);

    // ------------------------------------------------------------------ events

    @Override
    public void onSelect(SelectionKey k) {
        try {
            if (k.isConnectable()) {
                onConnectable();
            }
            if (tlsHandshaking) {
                if (k.isValid() && (k.isReadable() || k.isWritable())) {
                    continueTls();
                }
                return;
            }
            if (k.isValid() && k.isWritable()) {
                flush();
            }
            if (k.isValid() && k.isReadable()) {
                onReadable();
            }
        } catch (ProtocolException e) {
            close(e.getMessage(), true);
        } catch (SSLException e) {
            // after the handshake it is a record that does not decrypt or parse, not a handshake failure
            close((tlsHandshaking ? "TLS handshake failed: " : "bad TLS record: ") + ioReason(e), true);
        } catch (IOException e) {
            close(ioReason(e), false);
        } catch (RuntimeException e) {
            // A bug or an unusable application buffer (e.g. read-only): this connection only.
            LOG.log(System.Logger.Level.ERROR, "pistore tcp " + role + ": failure on the connection with " + peer, e);
            close("internal error: " + e, false);
        }
    }

    void onConnectable() throws IOException, ProtocolException {
    }

    /**
     * Starts TLS on the connection before any frame: the handshake runs as the socket allows, and
     * {@link #tlsReady} follows when it is done. Loop thread, with the key registered.
     */
    void startTls(TlsStream session) throws IOException, ProtocolException {
        tls = session;
        tlsHandshaking = true;
        continueTls();
    }

    private void continueTls() throws IOException, ProtocolException {
        int op = tls.handshakeStep();
        if (op != 0) {
            key.interestOps(op);
            return;
        }
        tlsHandshaking = false;
        key.interestOps(SelectionKey.OP_READ);
        tlsReady();
        if (tls.hasBufferedInput()) {
            onReadable(); // bytes that came with the handshake's last flight
        }
    }

    /** The TLS handshake is done: the connection may send its first frame. */
    void tlsReady() throws IOException, ProtocolException {
    }

    /** Whether a TLS handshake is under way (loop thread). */
    boolean tlsHandshaking() {
        return tlsHandshaking;
    }

    /** Who the peer proved to be in TLS (certificate or pre-shared key), or null without TLS or before the handshake is done (loop thread). */
    io.pistore.security.access.ClientIdentity tlsIdentity() {
        return tls == null || tlsHandshaking ? null : io.pistore.security.access.ClientIdentity.of(tls);
    }

    static String ioReason(IOException e) {
        String m = e.getMessage();
        if (m == null) {
            return e.getClass().getSimpleName();
        }
        // the TLS engines' reasons (OpenSSL's codes, the JDK's words), said as what to change
        String u = m.toUpperCase(java.util.Locale.ROOT).replace(' ', '_');
        if (u.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE") || u.contains("EMPTY_CLIENT_CERTIFICATE_CHAIN")) {
            return "the peer sent no client certificate, and this listener requires one (tcp.tlsVerifyClient=true): "
                    + "give the host tcp.tlsCert and tcp.tlsKey (" + m + ")";
        }
        if (u.contains("ALERT:_BAD_CERTIFICATE")) {
            return "the peer refused this end's certificate, or its lack of one (a target with tcp.tlsVerifyClient=true "
                    + "needs tcp.tlsCert and tcp.tlsKey here, from a CA it trusts) (" + m + ")";
        }
        if (u.contains("CERTIFICATE_REQUIRED")) {
            return "the target requires a client certificate: give this host tcp.tlsCert and tcp.tlsKey (" + m + ")";
        }
        if (u.contains("WRONG_VERSION_NUMBER") || u.contains("NOT_AN_SSL/TLS_RECORD")
                || u.contains("UNSUPPORTED_OR_UNRECOGNIZED_SSL_MESSAGE") || u.startsWith("NO_TLS_CLIENTHELLO")) {
            return "the peer does not speak TLS (a plaintext peer: tcp.tls differs between the two ends) (" + m + ")";
        }
        return m;
    }

    @Override
    public void onLoopClose(String reason) {
        close(reason, false);
    }

    private void onReadable() throws IOException, ProtocolException {
        // With TLS, decrypted bytes left in the TLS layer never make the socket readable again: the
        // loop goes on until the layer is empty, however many passes that takes.
        for (int i = 0; (i < 16 || tls != null) && !closed; i++) {
            int space = in.remaining();
            int r = tls == null ? ch.read(in) : tls.read(in);
            if (r < 0) {
                onEof();
                return;
            }
            if (r > 0) {
                rxActivityNanos = System.nanoTime();
            }
            in.flip();
            parse();
            in.compact();
            if (r < space && (tls == null || !tls.hasBufferedInput())) {
                return; // the socket is drained
            }
        }
    }

    /**
     * Closes the connection when a frame has been half-received for longer than the frame timeout
     * with no byte arriving. Called from the loop's once-a-second timer.
     */
    @Override
    public void onTimer(long now) {
        if (closed || frameTimeoutNanos == Long.MAX_VALUE) {
            return;
        }
        boolean midFrame = rxState != RX_HEADER || in.position() > 0;
        if (midFrame && now - rxActivityNanos > frameTimeoutNanos) {
            close("stalled mid-frame: no byte for " + TimeUnit.NANOSECONDS.toMillis(now - rxActivityNanos)
                    + " ms with a " + (rxState == RX_HEADER ? "frame header" : Protocol.opName(rxOpcode) + " frame")
                    + " half received", true);
        }
    }

    private void onEof() {
        int partial = in.position();
        int cutRecord = tls instanceof TlsChannel t ? t.partialRecordBytes() : 0; // Bouncy Castle's keeps its own
        if (rxState == RX_HEADER && partial == 0 && cutRecord > 0) {
            close("truncated TLS record: the connection ended after " + cutRecord + " bytes of a record", true);
        } else if (rxState == RX_HEADER && partial == 0) {
            close(eofReason(), false);
        } else if (rxState == RX_HEADER && tls == null && partial >= 2 && (in.get(0) == 0x15 || in.get(0) == 0x16)
                && in.get(1) == 0x03) {
            // a TLS alert or handshake record where a frame header belongs
            close("the peer speaks TLS and this end does not: set tcp.tls=true here too (tcp.tls differs between "
                    + "the two ends)", true);
        } else if (rxState == RX_HEADER) {
            close("truncated frame: the connection ended after " + partial + " of the "
                    + (Protocol.HEADER_SIZE + (rxHeaderDigest ? Protocol.DIGEST_SIZE : 0)) + " header bytes", true);
        } else {
            close("truncated frame: the connection ended after " + (rxLength - rxLeft + partial) + " of the "
                    + rxLength + " payload bytes of a " + Protocol.opName(rxOpcode) + " frame", true);
        }
    }

    /** The reason logged when the peer closes between frames. */
    String eofReason() {
        return "closed by peer";
    }

    private void parse() throws ProtocolException {
        while (!closed) {
            if (rxState == RX_HEADER) {
                if (in.remaining() < 8) {
                    return;
                }
                int p = in.position();
                int magic = in.getInt(p);
                if (magic != Protocol.MAGIC) {
                    throw new ProtocolException("bad magic 0x" + Integer.toHexString(magic));
                }
                int version = in.get(p + Protocol.O_VERSION) & 0xFF;
                if (version != Protocol.VERSION) {
                    throw new ProtocolException("unsupported protocol version " + version + " (this side speaks "
                            + Protocol.VERSION + ")");
                }
                int hlen = Protocol.HEADER_SIZE + (rxHeaderDigest ? Protocol.DIGEST_SIZE : 0);
                if (in.remaining() < hlen) {
                    return;
                }
                header.clear();
                in.get(p, header.array(), 0, Protocol.HEADER_SIZE);
                in.position(p + hlen);
                if (rxHeaderDigest) {
                    hdrCrc.reset();
                    hdrCrc.update(header.array(), 0, Protocol.HEADER_SIZE);
                    int got = in.getInt(p + Protocol.HEADER_SIZE);
                    if ((int) hdrCrc.getValue() != got) {
                        throw new ProtocolException("header digest mismatch: computed 0x"
                                + Integer.toHexString((int) hdrCrc.getValue()) + ", received 0x" + Integer.toHexString(got));
                    }
                }
                rxOpcode = header.get(Protocol.O_OPCODE) & 0xFF;
                int flags = header.getShort(Protocol.O_FLAGS) & 0xFFFF;
                int cid = header.getInt(Protocol.O_COMMAND_ID);
                rxLength = header.getInt(Protocol.O_PAYLOAD_LENGTH) & 0xFFFFFFFFL;
                if (rxLength > maxPayload) {
                    throw new ProtocolException("payload length " + rxLength + " of a " + Protocol.opName(rxOpcode)
                            + " frame is beyond the " + (maxPayload == Protocol.MAX_HANDSHAKE_PAYLOAD
                            ? "handshake limit of " : "negotiated maximum of ") + maxPayload + " bytes");
                }
                sink = onHeader(rxOpcode, flags, cid, rxLength);
                rxLeft = rxLength;
                if (rxLength > 0) {
                    rxCrc.reset();
                    rxState = RX_PAYLOAD;
                } else {
                    frameDone();
                }
            } else if (rxState == RX_PAYLOAD) {
                if (!in.hasRemaining()) {
                    return;
                }
                int n = (int) Math.min(in.remaining(), rxLeft);
                int p = in.position();
                int limit = in.limit();
                // The sink sees this frame's bytes as the window [p, p + n) of the receive buffer
                // itself (no view made per chunk); the window is put back whatever the sink did.
                in.limit(p + n);
                try {
                    if (rxDataDigest) {
                        rxCrc.update(in);
                        in.position(p);
                    }
                    sink.accept(in);
                } finally {
                    in.limit(limit);
                }
                in.position(p + n);
                rxLeft -= n;
                if (rxLeft == 0) {
                    if (rxDataDigest) {
                        rxState = RX_DIGEST;
                    } else {
                        frameDone();
                    }
                }
            } else {
                if (in.remaining() < Protocol.DIGEST_SIZE) {
                    return;
                }
                int got = in.getInt();
                if ((int) rxCrc.getValue() != got) {
                    throw new ProtocolException("data digest mismatch on a " + Protocol.opName(rxOpcode) + " frame of "
                            + rxLength + " bytes: computed 0x" + Integer.toHexString((int) rxCrc.getValue())
                            + ", received 0x" + Integer.toHexString(got));
                }
                frameDone();
            }
        }
    }

    private void frameDone() throws ProtocolException {
        rxState = RX_HEADER;
        sink = null;
        onFrame(rxOpcode);
    }

    // ------------------------------------------------------------------ sending

    void send(OutFrame f) {
        if (closed) {
            f.released();
            return;
        }
        outQueue.add(f);
        if (flushFrames > 0 && ++queuedSinceFlush >= flushFrames && loop.inLoop()) {
            earlyFlushes++;
            flush();
            return;
        }
        if (!dirty) {
            dirty = true;
            loop.addDirty(this);
        }
    }

    /**
     * Sets how many frames queued in one loop pass make the connection flush at once: {@code setting}
     * when positive, 0 for never before the pass ends, or (negative: the default) a quarter of the
     * negotiated queue {@code depth}, at least 4.
     */
    void flushEvery(int setting, int depth) {
        flushFrames = setting >= 0 ? setting : Math.max(4, depth / 4);
    }

    /** Writes queued frames until they are all out or the socket is full. */
    void flush() {
        dirty = false;
        queuedSinceFlush = 0;
        if (closed || tlsHandshaking) {
            return; // frames wait for the end of the TLS handshake (tlsReady)
        }
        try {
            while (true) {
                fill();
                out.flip();
                if (!out.hasRemaining()) {
                    out.clear();
                    // TLS: records the socket has not taken yet keep the write interest on
                    setWriteInterest(tls != null && !tls.flush());
                    return;
                }
                if (tls == null) {
                    ch.write(out);
                } else {
                    tls.write(out); // takes it all unless the socket is full
                }
                boolean stuck = out.hasRemaining();
                out.compact();
                if (stuck) {
                    setWriteInterest(true);
                    return;
                }
            }
        } catch (IOException e) {
            close(ioReason(e), false);
        }
    }

    private void setWriteInterest(boolean on) {
        if (key != null && key.isValid()) {
            int ops = key.interestOps();
            int want = on ? ops | SelectionKey.OP_WRITE : ops & ~SelectionKey.OP_WRITE;
            if (want != ops) {
                key.interestOps(want);
            }
        }
    }

    private void fill() {
        while (out.hasRemaining()) {
            if (tx == null) {
                tx = outQueue.poll();
                if (tx == null) {
                    return;
                }
                txState = TX_HEADER;
                txDigests = !tx.isHandshake();
            }
            if (txState == TX_HEADER) {
                boolean hd = txDigests && txHeaderDigest;
                if (out.remaining() < Protocol.HEADER_SIZE + (hd ? Protocol.DIGEST_SIZE : 0)) {
                    return;
                }
                int p = out.position();
                tx.writeHeader(out);
                if (hd) {
                    hdrCrc.reset();
                    hdrCrc.update(out.slice(p, Protocol.HEADER_SIZE));
                    out.putInt((int) hdrCrc.getValue());
                }
                txLeft = tx.payloadLength();
                txCrc.reset();
                if (txLeft > 0) {
                    txState = TX_PAYLOAD;
                } else {
                    txDone();
                }
            } else if (txState == TX_PAYLOAD) {
                int n = (int) Math.min(out.remaining(), txLeft);
                int p = out.position();
                tx.fillPayload(out, n);
                if (txDigests && txDataDigest) {
                    txCrc.update(out.slice(p, n));
                }
                txLeft -= n;
                if (txLeft == 0) {
                    if (txDigests && txDataDigest) {
                        txState = TX_DIGEST;
                    } else {
                        txDone();
                    }
                }
            } else {
                if (out.remaining() < Protocol.DIGEST_SIZE) {
                    return;
                }
                out.putInt((int) txCrc.getValue());
                txDone();
            }
        }
    }

    private void txDone() {
        OutFrame f = tx;
        tx = null;
        f.released();
    }

    // ------------------------------------------------------------------ closing

    /**
     * Closes the connection once. Bad input ({@code badInput}) and unexpected failures are logged
     * as one warning line naming the peer and the reason.
     */
    void close(String reason, boolean badInput) {
        if (closed) {
            return;
        }
        closed = true;
        logClose(reason, badInput);
        if (key != null) {
            key.cancel();
        }
        if (tls != null) {
            tls.close(); // close_notify, if the socket takes it at once
        }
        try {
            ch.close();
        } catch (IOException e) {
            // already gone
        }
        if (tx != null) {
            txDone();
        }
        OutFrame f;
        while ((f = outQueue.poll()) != null) {
            f.released();
        }
        onClosed(reason);
    }

    /** Logs the close: a warning for bad input, else at the level the subclass picks (null: silent). */
    void logClose(String reason, boolean badInput) {
        System.Logger.Level level = badInput ? System.Logger.Level.WARNING : closeLevel();
        if (level != null) {
            LOG.log(level, "pistore tcp " + role + ": closing connection with " + peer + ": " + reason);
        }
    }

    /** The log level of a close that is not caused by bad input. */
    System.Logger.Level closeLevel() {
        return System.Logger.Level.DEBUG;
    }
}
