package io.pistore.transport.rdma.verbs.disni;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The connect handshake's messages. DiSNI 2.1 sends {@code conn_param.private_data} with
 * {@code rdma_connect} but never hands it to the passive side (its {@code getCmEvent} copies only the
 * event type and the two ids), and sends none with {@code rdma_accept}. So the binding carries the
 * private data on a small TCP control connection beside the RDMA CM listener, before the RDMA
 * connect, as iSER does its login over TCP:
 *
 * <pre>
 * hello   = int magic 'PIDH' | byte version 1 | byte addrLen (4|16) | addr | u16 port | u16 pdLen | pd
 * verdict = int magic 'PIDV' | byte 0 accept / 1 reject | u16 msgLen | UTF-8 message
 * </pre>
 *
 * each preceded by its length as a u16. The hello names the active side's data cm_id by the source
 * address RDMA CM resolved for it, which is what the passive side sees as that connect request's
 * destination.
 */
final class ConnectHello {
    static final int HELLO_MAGIC = 0x50494448;
    static final int VERDICT_MAGIC = 0x50494456;
    static final int VERSION = 1;
    /** RDMA CM's limit for private data on an RC connect request (RDMA_PS_TCP): 56 bytes; ours is looser. */
    static final int MAX_PRIVATE_DATA = 256;
    static final int MAX_MESSAGE = 4096;

    record Hello(InetSocketAddress dataSource, ByteBuffer privateData) {
    }

    record Verdict(boolean accepted, String message) {
    }

    private ConnectHello() {
    }

    static byte[] encodeHello(InetSocketAddress dataSource, ByteBuffer privateData) {
        byte[] ip = dataSource.getAddress().getAddress();
        ByteBuffer pd = privateData == null ? ByteBuffer.allocate(0) : privateData.duplicate();
        if (pd.remaining() > MAX_PRIVATE_DATA) {
            throw new IllegalArgumentException("private data of " + pd.remaining() + " bytes; at most "
                    + MAX_PRIVATE_DATA);
        }
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + 1 + ip.length + 2 + 2 + pd.remaining());
        b.putInt(HELLO_MAGIC).put((byte) VERSION).put((byte) ip.length).put(ip)
                .putShort((short) dataSource.getPort()).putShort((short) pd.remaining()).put(pd);
        return b.array();
    }

    static Hello decodeHello(byte[] m) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(m);
        need(b, 6, "hello");
        int magic = b.getInt();
        if (magic != HELLO_MAGIC) {
            throw new IOException("not a pistore connect hello (magic 0x" + Integer.toHexString(magic) + ")");
        }
        int version = b.get() & 0xFF;
        if (version != VERSION) {
            throw new IOException("connect hello version " + version + ", this side speaks " + VERSION);
        }
        int alen = b.get() & 0xFF;
        if (alen != 4 && alen != 16) {
            throw new IOException("connect hello address of " + alen + " bytes (4 or 16)");
        }
        need(b, alen + 4, "hello");
        byte[] ip = new byte[alen];
        b.get(ip);
        int port = b.getShort() & 0xFFFF;
        int plen = b.getShort() & 0xFFFF;
        if (plen > MAX_PRIVATE_DATA) {
            throw new IOException("connect hello private data of " + plen + " bytes; at most " + MAX_PRIVATE_DATA);
        }
        if (b.remaining() != plen) {
            throw new IOException("connect hello carries " + b.remaining() + " bytes of private data, says " + plen);
        }
        byte[] pd = new byte[plen];
        b.get(pd);
        return new Hello(new InetSocketAddress(InetAddress.getByAddress(ip), port), ByteBuffer.wrap(pd).asReadOnlyBuffer());
    }

    static byte[] encodeVerdict(boolean accepted, String message) {
        byte[] msg = (message == null ? "" : message).getBytes(StandardCharsets.UTF_8);
        int n = Math.min(msg.length, MAX_MESSAGE);
        ByteBuffer b = ByteBuffer.allocate(4 + 1 + 2 + n);
        b.putInt(VERDICT_MAGIC).put((byte) (accepted ? 0 : 1)).putShort((short) n).put(msg, 0, n);
        return b.array();
    }

    static Verdict decodeVerdict(byte[] m) throws IOException {
        ByteBuffer b = ByteBuffer.wrap(m);
        need(b, 7, "verdict");
        int magic = b.getInt();
        if (magic != VERDICT_MAGIC) {
            throw new IOException("not a pistore connect verdict (magic 0x" + Integer.toHexString(magic) + ")");
        }
        int status = b.get() & 0xFF;
        if (status > 1) {
            throw new IOException("connect verdict status " + status + " (0 or 1)");
        }
        int n = b.getShort() & 0xFFFF;
        if (b.remaining() != n) {
            throw new IOException("connect verdict message of " + b.remaining() + " bytes, says " + n);
        }
        byte[] msg = new byte[n];
        b.get(msg);
        return new Verdict(status == 0, new String(msg, StandardCharsets.UTF_8));
    }

    /** Writes one framed message (u16 length, then the bytes). */
    static void write(DataOutputStream out, byte[] m) throws IOException {
        if (m.length > 0xFFFF) {
            throw new IOException("control message of " + m.length + " bytes");
        }
        out.writeShort(m.length);
        out.write(m);
        out.flush();
    }

    /** Reads one framed message. */
    static byte[] read(DataInputStream in) throws IOException {
        int n = in.readUnsignedShort();
        byte[] m = new byte[n];
        in.readFully(m);
        return m;
    }

    private static void need(ByteBuffer b, int n, String what) throws IOException {
        if (b.remaining() < n) {
            throw new IOException("connect " + what + " truncated (" + b.remaining() + " bytes left, need " + n + ")");
        }
    }
}
