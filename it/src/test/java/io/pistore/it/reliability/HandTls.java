package io.pistore.it.reliability;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Arrays;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLException;

/**
 * A TLS client driven by hand over a blocking socket, so that a fuzzer can send what a real client
 * never would: the first handshake flight alone (then stall or cut it), application data sealed
 * into records it then damages, raw bytes between records. Test code; one thread.
 */
final class HandTls {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final Socket socket;
    private final SSLEngine engine;
    private final InputStream in;
    private final OutputStream out;
    /** Records from the socket not unwrapped yet (write mode). */
    private final ByteBuffer netIn;
    private final ByteBuffer appIn;

    HandTls(Socket socket, SSLEngine engine) throws IOException {
        this.socket = socket;
        this.engine = engine;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(2 * packet);
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize() + packet);
    }

    /** The client's first flight (the ClientHello records), not sent. */
    byte[] firstFlight() throws SSLException {
        engine.beginHandshake();
        return wrap(EMPTY);
    }

    /** Runs the whole handshake; throws when the server refuses it or closes. */
    void handshake() throws IOException {
        engine.beginHandshake();
        HandshakeStatus hs = engine.getHandshakeStatus();
        while (hs != HandshakeStatus.FINISHED && hs != HandshakeStatus.NOT_HANDSHAKING) {
            switch (hs) {
                case NEED_WRAP -> {
                    out.write(wrap(EMPTY));
                    out.flush();
                    hs = engine.getHandshakeStatus();
                }
                case NEED_TASK -> {
                    Runnable t;
                    while ((t = engine.getDelegatedTask()) != null) {
                        t.run();
                    }
                    hs = engine.getHandshakeStatus();
                }
                default -> {
                    netIn.flip();
                    SSLEngineResult r = engine.unwrap(netIn, appIn);
                    netIn.compact();
                    if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                        throw new SSLException("the server closed the TLS session during the handshake");
                    }
                    if (r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW) {
                        byte[] b = new byte[netIn.remaining()];
                        int n = in.read(b);
                        if (n < 0) {
                            throw new EOFException("the server closed the connection during the handshake");
                        }
                        netIn.put(b, 0, n);
                    }
                    hs = engine.getHandshakeStatus();
                }
            }
        }
    }

    /** {@code plain} sealed into TLS records (one per 16 KiB), not sent. */
    byte[] seal(byte[] plain) throws SSLException {
        return wrap(ByteBuffer.wrap(plain));
    }

    private byte[] wrap(ByteBuffer src) throws SSLException {
        ByteArrayOutputStream records = new ByteArrayOutputStream();
        ByteBuffer o = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        do {
            o.clear();
            SSLEngineResult r = engine.wrap(src, o);
            if (r.getStatus() != SSLEngineResult.Status.OK) {
                throw new SSLException("wrap: " + r.getStatus());
            }
            records.write(o.array(), 0, o.position());
        } while (src.hasRemaining());
        return records.toByteArray();
    }

    void send(byte[] b) throws IOException {
        out.write(b);
        out.flush();
    }

    /** Sends {@code plain} sealed, as a well-behaved client would. */
    void sendSealed(byte[] plain) throws IOException {
        send(seal(plain));
    }

    /** Reads and opens records until {@code n} bytes of application data arrived. */
    byte[] receive(int n) throws IOException {
        while (true) {
            appIn.flip();
            if (appIn.remaining() >= n) {
                byte[] b = new byte[n];
                appIn.get(b);
                appIn.compact();
                return b;
            }
            appIn.compact();
            netIn.flip();
            SSLEngineResult r = engine.unwrap(netIn, appIn);
            netIn.compact();
            if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                throw new EOFException("the server closed the TLS session");
            }
            if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                Runnable t;
                while ((t = engine.getDelegatedTask()) != null) {
                    t.run(); // a post-handshake message, such as a session ticket
                }
            }
            // Only an incomplete record, or none, sends it to the socket: what is here comes first.
            if (r.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW
                    || r.bytesProduced() == 0 && netIn.position() == 0) {
                byte[] b = new byte[Math.max(1, netIn.remaining())];
                int got = in.read(b);
                if (got < 0) {
                    throw new EOFException("the server closed the connection");
                }
                netIn.put(b, 0, got);
            }
        }
    }

    /** {@code records} with one bit flipped somewhere in them. */
    static byte[] flipOneBit(byte[] records, java.util.Random r) {
        byte[] m = Arrays.copyOf(records, records.length);
        m[r.nextInt(m.length)] ^= (byte) (1 << r.nextInt(8));
        return m;
    }

    Socket socket() {
        return socket;
    }
}
