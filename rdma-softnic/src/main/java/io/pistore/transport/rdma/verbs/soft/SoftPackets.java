package io.pistore.transport.rdma.verbs.soft;

import java.util.zip.CRC32;

/**
 * The soft NIC's packet format between processes, one frame per packet on the connection's socket:
 * <pre>
 * u32 frameLength (bytes after this field) | u8 opcode | 3 bytes zero | u32 psn | u64 address | u32 key | u32 length
 * | payload | u32 crc
 * </pre>
 * big-endian; {@code crc} is CRC-32 over every byte before it, length field included, as RoCE's
 * ICRC covers its packet: a receiver drops a frame whose CRC does not match and never acts on it.
 * {@code address}/{@code key}/{@code length} are the RETH of RDMA WRITE and READ requests; a SEND with
 * invalidate carries the key to invalidate in {@code key}; connection management carries private data
 * (REQ) or the handler's message (REJ) as payload. A message is one packet (no MTU segmentation: a
 * signature transfer through an integrity MR moves whole blocks, which segmenting at an MTU would cut).
 */
public final class SoftPackets {
    /** Bytes before the payload, the length field included. */
    public static final int HEADER = 28;
    public static final int CRC = 4;
    /** The largest frame accepted: 8 MiB of data with 8-byte tuples per 512 B, and room for headers. */
    public static final int MAX_FRAME = 16 << 20;

    // connection management (RDMA CM's MADs)
    public static final int REQ = 1;
    public static final int REP = 2;
    public static final int REJ = 3;
    public static final int RTU = 4;
    public static final int DREQ = 5;
    // requests
    public static final int SEND = 16;
    public static final int SEND_INV = 17;
    public static final int WRITE = 18;
    public static final int READ_REQ = 19;
    // responses
    public static final int ACK = 32;
    public static final int READ_RESP = 33;
    public static final int NAK_SEQ = 34;
    public static final int NAK_RNR = 35;
    public static final int NAK_ACCESS = 36;
    public static final int NAK_INVALID = 37;
    public static final int NAK_OPERATION = 38;
    /** The responder's QP is not in RTS: the requester sees what a silent peer gives, RETRY_EXC_ERR. */
    public static final int NAK_GONE = 39;

    private SoftPackets() {
    }

    /** Whether {@code op} is a request a responder executes (SEND, WRITE, READ request). */
    public static boolean isRequest(int op) {
        return op >= SEND && op <= READ_REQ;
    }

    /** Whether {@code op} carries data a payload tap may flip (SEND, WRITE, READ response). */
    public static boolean carriesData(int op) {
        return op == SEND || op == SEND_INV || op == WRITE || op == READ_RESP;
    }

    static void header(byte[] f, int op, int psn, long addr, int key, int len, int payload) {
        putInt(f, 0, HEADER - 4 + payload + CRC);
        f[4] = (byte) op;
        f[5] = 0;
        f[6] = 0;
        f[7] = 0;
        putInt(f, 8, psn);
        putInt(f, 12, (int) (addr >>> 32));
        putInt(f, 16, (int) addr);
        putInt(f, 20, key);
        putInt(f, 24, len);
    }

    /** Writes the CRC of {@code frame[0, frameBytes - 4)} into its last four bytes. */
    static void seal(CRC32 crc, byte[] f, int frameBytes) {
        crc.reset();
        crc.update(f, 0, frameBytes - CRC);
        putInt(f, frameBytes - CRC, (int) crc.getValue());
    }

    /** Whether the frame's CRC matches. */
    static boolean intact(CRC32 crc, byte[] f, int frameBytes) {
        crc.reset();
        crc.update(f, 0, frameBytes - CRC);
        return getInt(f, frameBytes - CRC) == (int) crc.getValue();
    }

    public static int op(byte[] f) {
        return f[4] & 0xFF;
    }

    public static int psn(byte[] f) {
        return getInt(f, 8);
    }

    static long addr(byte[] f) {
        return ((long) getInt(f, 12) << 32) | (getInt(f, 16) & 0xFFFFFFFFL);
    }

    static int key(byte[] f) {
        return getInt(f, 20);
    }

    static int length(byte[] f) {
        return getInt(f, 24);
    }

    /** Payload bytes of a whole frame of {@code frameBytes}. */
    static int payload(int frameBytes) {
        return frameBytes - HEADER - CRC;
    }

    /** Writes one connection-management frame (handshake time: allocation does not matter). */
    static void writeFrame(java.io.OutputStream o, int op, byte[] payload) throws java.io.IOException {
        byte[] f = new byte[HEADER + payload.length + CRC];
        header(f, op, 0, 0, 0, payload.length, payload.length);
        System.arraycopy(payload, 0, f, HEADER, payload.length);
        seal(new CRC32(), f, f.length);
        o.write(f);
        o.flush();
    }

    /** Reads one connection-management frame; a bad length or CRC is an IOException. */
    static byte[] readFrame(java.io.DataInputStream in) throws java.io.IOException {
        int rest = in.readInt();
        if (rest < HEADER - 4 + CRC || rest > 64 << 10) {
            throw new java.io.IOException("not a soft RDMA connection frame (length " + rest + ")");
        }
        byte[] f = new byte[4 + rest];
        putInt(f, 0, rest);
        in.readFully(f, 4, rest);
        if (!intact(new CRC32(), f, f.length)) {
            throw new java.io.IOException("a connection frame failed its CRC");
        }
        return f;
    }

    /** The payload of a whole frame. */
    static byte[] payloadOf(byte[] f) {
        return java.util.Arrays.copyOfRange(f, HEADER, f.length - CRC);
    }

    static void putInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    public static int getInt(byte[] b, int at) {
        return (b[at] & 0xFF) << 24 | (b[at + 1] & 0xFF) << 16 | (b[at + 2] & 0xFF) << 8 | (b[at + 3] & 0xFF);
    }
}
