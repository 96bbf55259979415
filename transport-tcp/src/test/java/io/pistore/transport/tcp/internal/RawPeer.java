package io.pistore.transport.tcp.internal;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/** A blocking socket that speaks (or abuses) the framing by hand, for bad-input tests. */
final class RawPeer implements AutoCloseable {
    final Socket socket;
    final DataInputStream in;
    final OutputStream out;
    boolean headerDigest;
    boolean dataDigest;

    RawPeer(Socket s) throws IOException {
        this.socket = s;
        s.setSoTimeout(5000);
        s.setTcpNoDelay(true);
        this.in = new DataInputStream(s.getInputStream());
        this.out = s.getOutputStream();
    }

    static RawPeer connect(String address) throws IOException {
        int colon = address.lastIndexOf(':');
        Socket s = new Socket();
        s.connect(new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))), 5000);
        return new RawPeer(s);
    }

    /** Connects and runs a TLS handshake as {@code client}, which checks the target's certificate against 127.0.0.1. */
    static RawPeer connectTls(String address, io.pistore.security.tls.TlsContext client) throws IOException {
        int colon = address.lastIndexOf(':');
        String host = address.substring(0, colon);
        int port = Integer.parseInt(address.substring(colon + 1));
        Socket s = new Socket();
        s.connect(new InetSocketAddress(host, port), 5000);
        s.setSoTimeout(5000);
        return new RawPeer(client.clientSocket(s, host, port));
    }

    /** The local end's address as the other side logs it. */
    String localName() {
        return socket.getLocalAddress().getHostAddress() + ":" + socket.getLocalPort();
    }

    static ByteBuffer header(int opcode, int flags, int cid, int payloadLength) {
        ByteBuffer h = ByteBuffer.allocate(Protocol.HEADER_SIZE);
        h.putInt(Protocol.MAGIC).put((byte) Protocol.VERSION).put((byte) opcode).putShort((short) flags).putInt(cid)
                .putInt(payloadLength);
        return h;
    }

    static ByteBuffer hello(int maxTransfer, int depth, int digests) {
        ByteBuffer h = header(Protocol.OP_HELLO, 0, 0, 0);
        h.putInt(Protocol.O_MAX_TRANSFER, maxTransfer).putShort(Protocol.O_QUEUE_DEPTH, (short) depth)
                .put(Protocol.O_DIGESTS, (byte) digests);
        return h;
    }

    static ByteBuffer request(int opcode, int flags, int cid, int payloadLength, int volume, int blocks, long lba,
                              long ref, int app, int mask) {
        ByteBuffer h = header(opcode, flags, cid, payloadLength);
        h.putInt(Protocol.O_VOLUME, volume).putInt(Protocol.O_BLOCKS, blocks).putLong(Protocol.O_LBA, lba)
                .putLong(Protocol.O_REF_TAG, ref).putShort(Protocol.O_APP_TAG, (short) app)
                .putShort(Protocol.O_APP_MASK, (short) mask);
        return h;
    }

    static int crc(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return (int) c.getValue();
    }

    /** Sends a header (with its digest when negotiated) and a payload (with its digest). */
    void sendFrame(ByteBuffer header, byte[] payload) throws IOException {
        byte[] h = header.array();
        out.write(h, 0, Protocol.HEADER_SIZE);
        if (headerDigest) {
            out.write(ByteBuffer.allocate(4).putInt(crc(h, 0, Protocol.HEADER_SIZE)).array());
        }
        if (payload != null && payload.length > 0) {
            out.write(payload);
            if (dataDigest) {
                out.write(ByteBuffer.allocate(4).putInt(crc(payload, 0, payload.length)).array());
            }
        }
        out.flush();
    }

    void sendRaw(byte[] b) throws IOException {
        out.write(b);
        out.flush();
    }

    /** A received frame. */
    static final class Frame {
        ByteBuffer header;
        byte[] payload;

        int opcode() {
            return header.get(Protocol.O_OPCODE) & 0xFF;
        }

        int commandId() {
            return header.getInt(Protocol.O_COMMAND_ID);
        }
    }

    Frame readFrame(boolean digests) throws IOException {
        byte[] h = new byte[Protocol.HEADER_SIZE];
        in.readFully(h);
        if (digests && headerDigest) {
            in.readInt();
        }
        Frame f = new Frame();
        f.header = ByteBuffer.wrap(h);
        int len = f.header.getInt(Protocol.O_PAYLOAD_LENGTH);
        if (len < 0 || len > (16 << 20)) {
            throw new IOException("test peer refuses a payload of " + len);
        }
        f.payload = new byte[len];
        in.readFully(f.payload);
        if (digests && dataDigest && len > 0) {
            in.readInt();
        }
        return f;
    }

    /** HELLO, then reads HELLO_REPLY; returns it. */
    Frame greet(int maxTransfer, int depth, int digests) throws IOException {
        return greet(maxTransfer, depth, digests, 0);
    }

    /** HELLO asking for the {@link Protocol} feature bits {@code features}, then reads HELLO_REPLY; returns it. */
    Frame greet(int maxTransfer, int depth, int digests, int features) throws IOException {
        sendFrame(hello(maxTransfer, depth, digests).put(Protocol.O_FEATURES, (byte) features), null);
        Frame f = readFrame(false);
        headerDigest = (digests & Protocol.DIGEST_HEADER) != 0;
        dataDigest = (digests & Protocol.DIGEST_DATA) != 0;
        return f;
    }

    /** True when the other side closed the connection within the socket timeout. */
    boolean closedByPeer() {
        try {
            InputStream s = socket.getInputStream();
            byte[] b = new byte[4096];
            while (true) {
                int r = s.read(b);
                if (r < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        } catch (EOFException e) {
            return true;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
