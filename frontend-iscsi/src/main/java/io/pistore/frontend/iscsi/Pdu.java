package io.pistore.frontend.iscsi;

/**
 * One iSCSI PDU (RFC 7143 section 11): the 48-byte basic header segment, the additional header
 * segments (kept whole, without padding) and the data segment (without padding or digest). Fields
 * are read and written big-endian at their RFC offsets; the data segment length in the header is
 * set from the data when the PDU is written.
 */
final class Pdu {
    static final int BHS = 48;

    // initiator opcodes
    static final int NOP_OUT = 0x00;
    static final int SCSI_COMMAND = 0x01;
    static final int TASK_MGMT = 0x02;
    static final int LOGIN = 0x03;
    static final int TEXT = 0x04;
    static final int DATA_OUT = 0x05;
    static final int LOGOUT = 0x06;
    static final int SNACK = 0x10;
    // target opcodes
    static final int NOP_IN = 0x20;
    static final int SCSI_RESPONSE = 0x21;
    static final int TASK_MGMT_RESPONSE = 0x22;
    static final int LOGIN_RESPONSE = 0x23;
    static final int TEXT_RESPONSE = 0x24;
    static final int DATA_IN = 0x25;
    static final int LOGOUT_RESPONSE = 0x26;
    static final int R2T = 0x31;
    static final int REJECT = 0x3f;

    /** The tag that names no task (and no target transfer). */
    static final int RESERVED_TAG = 0xFFFFFFFF;

    final byte[] bhs;
    byte[] ahs;
    byte[] data;
    /** For a PDU read from the initiator: {@link System#nanoTime} by which it had arrived whole (0: not known). */
    long receivedNanos;
    /**
     * The data segment, when it was read into a buffer the reader named ({@link PduChannel.Placement}):
     * its remaining bytes; {@link #data} is then empty.
     */
    java.nio.ByteBuffer placed;

    Pdu(byte[] bhs, byte[] ahs, byte[] data) {
        this.bhs = bhs;
        this.ahs = ahs;
        this.data = data;
    }

    /** A target PDU with that opcode, byte 1 flags, no AHS and no data. */
    static Pdu target(int opcode, int flags) {
        byte[] b = new byte[BHS];
        b[0] = (byte) opcode;
        b[1] = (byte) flags;
        return new Pdu(b, new byte[0], new byte[0]);
    }

    int opcode() {
        return bhs[0] & 0x3f;
    }

    boolean immediate() {
        return (bhs[0] & 0x40) != 0;
    }

    int flags() {
        return bhs[1] & 0xff;
    }

    boolean finalBit() {
        return (bhs[1] & 0x80) != 0;
    }

    int totalAhsLength() {
        return (bhs[4] & 0xff) * 4;
    }

    /** Bytes of the data segment as read: {@link #data}'s or {@link #placed}'s. */
    int dataLength() {
        return placed == null ? data.length : placed.remaining();
    }

    int dataSegmentLength() {
        return u24(5);
    }

    long lun() {
        return u64(8);
    }

    int itt() {
        return i32(16);
    }

    int u8(int off) {
        return bhs[off] & 0xff;
    }

    int u16(int off) {
        return (bhs[off] & 0xff) << 8 | bhs[off + 1] & 0xff;
    }

    int u24(int off) {
        return (bhs[off] & 0xff) << 16 | (bhs[off + 1] & 0xff) << 8 | bhs[off + 2] & 0xff;
    }

    int i32(int off) {
        return getInt(bhs, off);
    }

    long u32(int off) {
        return i32(off) & 0xFFFFFFFFL;
    }

    long u64(int off) {
        return (long) i32(off) << 32 | u32(off + 4);
    }

    Pdu set8(int off, int v) {
        bhs[off] = (byte) v;
        return this;
    }

    Pdu set16(int off, int v) {
        bhs[off] = (byte) (v >>> 8);
        bhs[off + 1] = (byte) v;
        return this;
    }

    Pdu set32(int off, long v) {
        putInt(bhs, off, (int) v);
        return this;
    }

    Pdu set64(int off, long v) {
        putInt(bhs, off, (int) (v >>> 32));
        putInt(bhs, off + 4, (int) v);
        return this;
    }

    Pdu data(byte[] d) {
        this.data = d;
        return this;
    }

    /** The CDB: bytes 32..47 of the header, followed by an extended CDB AHS (type 1) when present. */
    byte[] cdb() {
        byte[] ext = ahsOfType(1);
        if (ext == null || ext.length < 1) {
            return java.util.Arrays.copyOfRange(bhs, 32, 48);
        }
        byte[] c = new byte[16 + ext.length - 1];
        System.arraycopy(bhs, 32, c, 0, 16);
        System.arraycopy(ext, 1, c, 16, ext.length - 1);
        return c;
    }

    /** The specific bytes (after length and type) of the first AHS of that type, or null. */
    private byte[] ahsOfType(int type) {
        int off = 0;
        while (off + 3 <= ahs.length) {
            int len = (ahs[off] & 0xff) << 8 | ahs[off + 1] & 0xff;
            int t = ahs[off + 2] & 0xff;
            if (off + 3 + len > ahs.length) {
                return null;
            }
            if (t == type) {
                return java.util.Arrays.copyOfRange(ahs, off + 3, off + 3 + len);
            }
            off += (3 + len + 3) & ~3;
        }
        return null;
    }

    static int getInt(byte[] b, int off) {
        return (b[off] & 0xff) << 24 | (b[off + 1] & 0xff) << 16 | (b[off + 2] & 0xff) << 8 | b[off + 3] & 0xff;
    }

    static void putInt(byte[] b, int off, int v) {
        b[off] = (byte) (v >>> 24);
        b[off + 1] = (byte) (v >>> 16);
        b[off + 2] = (byte) (v >>> 8);
        b[off + 3] = (byte) v;
    }

    static long getLong(byte[] b, int off) {
        return (long) getInt(b, off) << 32 | getInt(b, off + 4) & 0xFFFFFFFFL;
    }

    static void putLong(byte[] b, int off, long v) {
        putInt(b, off, (int) (v >>> 32));
        putInt(b, off + 4, (int) v);
    }

    @Override
    public String toString() {
        return "PDU opcode 0x" + Integer.toHexString(opcode()) + " itt 0x" + Integer.toHexString(itt()) + " data "
                + data.length;
    }
}
