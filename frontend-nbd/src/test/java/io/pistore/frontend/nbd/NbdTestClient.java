package io.pistore.frontend.nbd;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A small blocking NBD client for protocol tests: every frame is built and parsed by hand. */
final class NbdTestClient implements AutoCloseable {
    static final long NBDMAGIC = 0x4e42444d41474943L;
    static final long IHAVEOPT = 0x49484156454F5054L;
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;

    Socket socket;
    DataInputStream in;
    DataOutputStream out;
    int handshakeFlags;
    private long nextCookie = 1;

    record OptionReply(int option, int type, byte[] data) {
        boolean isError() {
            return type < 0;
        }
    }

    /** A simple reply (structured == false) or one structured chunk. */
    record Reply(boolean structured, int error, int flags, int type, long cookie, byte[] payload) {
        boolean done() {
            return !structured || (flags & 1) != 0;
        }
    }

    NbdTestClient(InetSocketAddress a) throws IOException {
        socket = new Socket();
        socket.connect(a, 5000);
        socket.setSoTimeout(10_000);
        socket.setTcpNoDelay(true);
        in = new DataInputStream(socket.getInputStream());
        out = new DataOutputStream(socket.getOutputStream());
    }

    /** Reads the server greeting; returns the handshake flags. */
    int greeting() throws IOException {
        long m1 = in.readLong();
        long m2 = in.readLong();
        if (m1 != NBDMAGIC || m2 != IHAVEOPT) {
            throw new IOException("bad greeting");
        }
        handshakeFlags = in.readUnsignedShort();
        return handshakeFlags;
    }

    /** Greeting plus client flags (fixed newstyle, no zeroes). */
    static NbdTestClient open(InetSocketAddress a) throws IOException {
        NbdTestClient c = new NbdTestClient(a);
        c.greeting();
        c.clientFlags(3);
        return c;
    }

    /** Sends NBD_OPT_STARTTLS; on its ACK runs the TLS handshake and goes on inside TLS. Returns the reply type. */
    int startTls(io.pistore.security.tls.TlsContext tls) throws IOException {
        option(5, new byte[0]);
        OptionReply r = optionReply();
        if (r.type() != 1) {
            return r.type();
        }
        socket = tls.clientSocket(socket, "localhost", socket.getPort());
        socket.setSoTimeout(10_000);
        in = new DataInputStream(new java.io.BufferedInputStream(socket.getInputStream()));
        out = new DataOutputStream(new java.io.BufferedOutputStream(socket.getOutputStream()));
        return r.type();
    }

    /**
     * Sends NBD_OPT_STARTTLS; on its ACK runs a TLS-PSK handshake with {@code psk} and goes on inside
     * TLS (the socket stays the plain one underneath). Returns the reply type.
     */
    int startTls(io.pistore.security.tls.PskTestClient psk) throws IOException {
        option(5, new byte[0]);
        OptionReply r = optionReply();
        if (r.type() != 1) {
            return r.type();
        }
        org.bouncycastle.tls.TlsClientProtocol p = psk.connect(socket);
        in = new DataInputStream(new java.io.BufferedInputStream(p.getInputStream()));
        out = new DataOutputStream(new java.io.BufferedOutputStream(p.getOutputStream()));
        return r.type();
    }

    void clientFlags(int f) throws IOException {
        out.writeInt(f);
        out.flush();
    }

    void option(int option, byte[] data) throws IOException {
        out.writeLong(IHAVEOPT);
        out.writeInt(option);
        out.writeInt(data.length);
        out.write(data);
        out.flush();
    }

    OptionReply optionReply() throws IOException {
        long magic = in.readLong();
        if (magic != OPTION_REPLY_MAGIC) {
            throw new IOException("bad option reply magic " + Long.toHexString(magic));
        }
        int opt = in.readInt();
        int type = in.readInt();
        int len = in.readInt();
        byte[] d = new byte[len];
        in.readFully(d);
        return new OptionReply(opt, type, d);
    }

    /** Replies up to and including the final one (ACK or an error). */
    List<OptionReply> optionReplies() throws IOException {
        List<OptionReply> list = new ArrayList<>();
        while (true) {
            OptionReply r = optionReply();
            list.add(r);
            if (r.type() == 1 || r.isError()) {
                return list;
            }
        }
    }

    static byte[] infoData(String name, int... infos) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 + n.length + 2 + 2 * infos.length);
        b.putInt(n.length).put(n).putShort((short) infos.length);
        for (int i : infos) {
            b.putShort((short) i);
        }
        return b.array();
    }

    /** NBD_OPT_GO for {@code name} asking for block sizes; the replies. */
    List<OptionReply> go(String name) throws IOException {
        option(7, infoData(name, 3));
        return optionReplies();
    }

    boolean structuredReplies() throws IOException {
        option(8, new byte[0]);
        return optionReply().type() == 1;
    }

    long request(int flags, int type, long offset, long length, byte[] payload) throws IOException {
        long cookie = nextCookie++;
        out.writeInt(0x25609513);
        out.writeShort(flags);
        out.writeShort(type);
        out.writeLong(cookie);
        out.writeLong(offset);
        out.writeInt((int) length);
        if (payload != null) {
            out.write(payload);
        }
        out.flush();
        return cookie;
    }

    /** Sends {@code bytes} as they are, in one write (requests built by a test). */
    void raw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** One reply; {@code readLength} is the data a successful simple read reply carries. */
    Reply reply(int readLength) throws IOException {
        int magic = in.readInt();
        if (magic == 0x67446698) {
            int error = in.readInt();
            long cookie = in.readLong();
            byte[] data = new byte[error == 0 ? readLength : 0];
            in.readFully(data);
            return new Reply(false, error, 0, 0, cookie, data);
        }
        if (magic == 0x668e33ef) {
            int flags = in.readUnsignedShort();
            int type = in.readUnsignedShort();
            long cookie = in.readLong();
            int len = in.readInt();
            byte[] p = new byte[len];
            in.readFully(p);
            int error = 0;
            if ((type & 0x8000) != 0) {
                error = java.nio.ByteBuffer.wrap(p).getInt();
            }
            return new Reply(true, error, flags, type, cookie, p);
        }
        throw new IOException("bad reply magic " + Integer.toHexString(magic));
    }

    Reply reply() throws IOException {
        return reply(0);
    }

    /** Writes and waits for the (simple) reply; returns its error. */
    int write(long offset, byte[] data, int flags) throws IOException {
        request(flags, 1, offset, data.length, data);
        return reply().error();
    }

    int write(long offset, byte[] data) throws IOException {
        return write(offset, data, 0);
    }

    /** Reads with simple replies; throws on error. */
    byte[] read(long offset, int length) throws IOException {
        request(0, 0, offset, length, null);
        Reply r = reply(length);
        if (r.error() != 0) {
            throw new IOException("read error " + r.error());
        }
        return r.payload();
    }

    int command(int type, int flags, long offset, long length) throws IOException {
        request(flags, type, offset, length, null);
        return reply().error();
    }

    void disconnect() throws IOException {
        request(0, 2, 0, 0, null);
    }

    /** Whether the server closed the connection (EOF within the timeout). */
    boolean closedByServer() throws IOException {
        socket.setSoTimeout(5000);
        try {
            while (true) {
                if (in.read() < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException e) {
            return false;
        } catch (EOFException | java.net.SocketException e) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
