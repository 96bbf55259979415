package io.pistore.it.reliability;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A crash host over NBD: a small blocking client of its own (fixed newstyle handshake, NBD_OPT_GO,
 * simple replies, one request at a time). NBD carries no PI, so the server's checks are the only
 * ones: a read the server refuses comes back as EIO, which this host reports as a PI error.
 */
final class NbdCrashHost implements CrashHost {
    static final long NBDMAGIC = 0x4e42444d41474943L;
    static final long IHAVEOPT = 0x49484156454F5054L;
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;
    static final int REQUEST_MAGIC = 0x25609513;
    static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int OPT_GO = 7;
    static final int REP_ACK = 1;
    static final int REP_INFO = 3;
    static final int CMD_READ = 0;
    static final int CMD_WRITE = 1;
    static final int CMD_DISC = 2;
    static final int CMD_FLUSH = 3;
    static final int CMD_WRITE_ZEROES = 6;
    static final int FLAG_FUA = 1;
    static final int EIO = 5;

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private final long size;
    private long cookie = 1;

    /** Connects to {@code host:port} and enters transmission on export {@code name}. */
    NbdCrashHost(String address, String name) throws IOException {
        int colon = address.lastIndexOf(':');
        socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(address.substring(0, colon), Integer.parseInt(address.substring(colon + 1))), 5000);
            socket.setSoTimeout(30_000);
            socket.setTcpNoDelay(true);
            in = new DataInputStream(new java.io.BufferedInputStream(socket.getInputStream()));
            out = new DataOutputStream(new java.io.BufferedOutputStream(socket.getOutputStream()));
            size = handshake(name);
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    /** Fixed newstyle, no zeroes; NBD_OPT_GO; returns the export size from NBD_INFO_EXPORT. */
    private long handshake(String name) throws IOException {
        if (in.readLong() != NBDMAGIC || in.readLong() != IHAVEOPT) {
            throw new IOException("not an NBD newstyle server");
        }
        in.readUnsignedShort(); // handshake flags
        out.writeInt(3); // FIXED_NEWSTYLE | NO_ZEROES
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        out.writeLong(IHAVEOPT);
        out.writeInt(OPT_GO);
        out.writeInt(4 + n.length + 2);
        out.writeInt(n.length);
        out.write(n);
        out.writeShort(0); // no information requests: NBD_INFO_EXPORT always comes
        out.flush();
        long exportSize = -1;
        while (true) {
            if (in.readLong() != OPTION_REPLY_MAGIC) {
                throw new IOException("bad option reply magic");
            }
            in.readInt(); // option
            int type = in.readInt();
            byte[] data = new byte[in.readInt()];
            in.readFully(data);
            if (type < 0) {
                throw new IOException("NBD_OPT_GO refused: type 0x" + Integer.toHexString(type) + " "
                        + new String(data, StandardCharsets.UTF_8));
            }
            if (type == REP_INFO && data.length >= 12 && ByteBuffer.wrap(data).getShort(0) == 0) {
                exportSize = ByteBuffer.wrap(data).getLong(2);
            }
            if (type == REP_ACK) {
                if (exportSize < 0) {
                    throw new IOException("NBD_OPT_GO ended without NBD_INFO_EXPORT");
                }
                return exportSize;
            }
        }
    }

    long size() {
        return size;
    }

    private void send(int flags, int type, long offset, int length, byte[] payload) throws IOException {
        out.writeInt(REQUEST_MAGIC);
        out.writeShort(flags);
        out.writeShort(type);
        out.writeLong(cookie);
        out.writeLong(offset);
        out.writeInt(length);
        if (payload != null) {
            out.write(payload);
        }
        out.flush();
    }

    /** The simple reply to the last request: its error; a successful read's data goes to {@code data}. */
    private int reply(byte[] data) throws IOException {
        if (in.readInt() != SIMPLE_REPLY_MAGIC) {
            throw new IOException("not a simple reply");
        }
        int error = in.readInt();
        long c = in.readLong();
        if (c != cookie) {
            throw new IOException("reply for cookie " + c + ", expected " + cookie);
        }
        cookie++;
        if (error == 0 && data != null) {
            in.readFully(data);
        }
        return error;
    }

    private Ack command(int flags, int type, long offset, int length, byte[] payload) {
        try {
            send(flags, type, offset, length, payload);
            return reply(null) == 0 ? Ack.DONE : Ack.FAILED;
        } catch (IOException e) {
            return Ack.FAILED;
        }
    }

    @Override
    public Ack write(long lba, byte[] blocks, boolean fua) {
        return command(fua ? FLAG_FUA : 0, CMD_WRITE, lba * BlockVersions.BS, blocks.length, blocks);
    }

    @Override
    public Ack writeZeroes(long lba, int blocks, boolean fua) {
        return command(fua ? FLAG_FUA : 0, CMD_WRITE_ZEROES, lba * BlockVersions.BS, blocks * BlockVersions.BS, null);
    }

    @Override
    public Ack flush() {
        return command(0, CMD_FLUSH, 0, 0, null);
    }

    @Override
    public Readback read(long lba) throws IOException {
        byte[] d = new byte[BlockVersions.BS];
        send(0, CMD_READ, lba * BlockVersions.BS, d.length, null);
        int error = reply(d);
        if (error == EIO) {
            return Readback.piError("EIO");
        }
        if (error != 0) {
            throw new IOException("NBD read of lba " + lba + ": error " + error);
        }
        return Readback.ok(d);
    }

    @Override
    public void close() throws IOException {
        try {
            if (!socket.isClosed()) {
                send(0, CMD_DISC, 0, 0, null);
            }
        } catch (IOException e) {
            // the server is gone already
        } finally {
            socket.close();
        }
    }
}
