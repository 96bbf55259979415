package io.pistore.frontend.iscsi;

import io.pistore.spi.Completion;
import io.pistore.spi.Status;

/**
 * How a SCSI command ended: its status, the data it returns to the initiator (Data-In), or the
 * sense data of a CHECK CONDITION (fixed format, SPC-4 4.5.3: the INFORMATION field valid when it
 * names an LBA that fits in 32 bits).
 */
final class ScsiResult {
    static final int GOOD = 0x00;
    static final int CHECK_CONDITION = 0x02;
    static final int RESERVATION_CONFLICT = 0x18;
    /** The unit is busy: the initiator sends the command again later. */
    static final int BUSY = 0x08;
    static final int TASK_SET_FULL = 0x28;
    static final int TASK_ABORTED = 0x40;

    static final int NOT_READY = 0x02;
    static final int MEDIUM_ERROR = 0x03;
    static final int HARDWARE_ERROR = 0x04;
    static final int ILLEGAL_REQUEST = 0x05;
    static final int UNIT_ATTENTION = 0x06;
    static final int DATA_PROTECT = 0x07;
    static final int ABORTED_COMMAND = 0x0B;
    static final int MISCOMPARE = 0x0E;

    private static final byte[] NONE = new byte[0];

    final int status;
    final byte[] sense;
    final byte[] dataIn;
    /** The Data-In in a {@link DataInPool} buffer instead of {@link #dataIn} (position to limit), or null. */
    final java.nio.ByteBuffer dataBuffer;

    private ScsiResult(int status, byte[] sense, byte[] dataIn) {
        this(status, sense, dataIn, null);
    }

    private ScsiResult(int status, byte[] sense, byte[] dataIn, java.nio.ByteBuffer dataBuffer) {
        this.status = status;
        this.sense = sense;
        this.dataIn = dataIn;
        this.dataBuffer = dataBuffer;
    }

    /** GOOD with the Data-In in a pooled buffer, given back to its pool once sent. */
    static ScsiResult good(java.nio.ByteBuffer dataIn) {
        return new ScsiResult(GOOD, NONE, NONE, dataIn);
    }

    /** The bytes of Data-In. */
    int dataLength() {
        return dataBuffer != null ? dataBuffer.remaining() : dataIn.length;
    }

    static ScsiResult good() {
        return new ScsiResult(GOOD, NONE, NONE);
    }

    static ScsiResult good(byte[] dataIn) {
        return new ScsiResult(GOOD, NONE, dataIn);
    }

    /** GOOD with the first {@code allocation} bytes of {@code full} (SPC-4: the allocation length cuts). */
    static ScsiResult cut(byte[] full, long allocation) {
        int n = (int) Math.min(full.length, allocation);
        return good(n == full.length ? full : java.util.Arrays.copyOf(full, n));
    }

    static ScsiResult status(int status) {
        return new ScsiResult(status, NONE, NONE);
    }

    static ScsiResult check(int key, int asc, int ascq) {
        return new ScsiResult(CHECK_CONDITION, sense(key, asc, ascq, -1), NONE);
    }

    /** CHECK CONDITION with {@code information} (an LBA or an offset) in the sense data; -1: none. */
    static ScsiResult check(int key, int asc, int ascq, long information) {
        return new ScsiResult(CHECK_CONDITION, sense(key, asc, ascq, information), NONE);
    }

    static ScsiResult invalidOpcode() {
        return check(ILLEGAL_REQUEST, 0x20, 0x00);
    }

    static ScsiResult invalidField() {
        return check(ILLEGAL_REQUEST, 0x24, 0x00);
    }

    /**
     * INVALID FIELD IN CDB with the sense-key specific field pointer (SKSV, C/D) naming CDB byte
     * {@code cdbByte}, for an initiator to tell a bad field from an unsupported service action.
     */
    static ScsiResult invalidFieldAt(int cdbByte) {
        byte[] s = sense(ILLEGAL_REQUEST, 0x24, 0x00, -1);
        s[15] = (byte) 0xC0; // SKSV, C/D: the field is in the CDB
        s[16] = (byte) (cdbByte >>> 8);
        s[17] = (byte) cdbByte;
        return new ScsiResult(CHECK_CONDITION, s, NONE);
    }

    static ScsiResult lbaOutOfRange() {
        return check(ILLEGAL_REQUEST, 0x21, 0x00);
    }

    /** Fixed-format sense data, 18 bytes; {@code information} &lt; 0 or above 32 bits leaves VALID clear. */
    static byte[] sense(int key, int asc, int ascq, long information) {
        byte[] s = new byte[18];
        boolean valid = information >= 0 && information <= 0xFFFFFFFFL;
        s[0] = (byte) (0x70 | (valid ? 0x80 : 0));
        s[2] = (byte) key;
        if (valid) {
            Pdu.putInt(s, 3, (int) information);
        }
        s[7] = 10;
        s[12] = (byte) asc;
        s[13] = (byte) ascq;
        return s;
    }

    /**
     * The CHECK CONDITION of an engine request that failed: PI check failures as ABORTED COMMAND
     * with ASC 0x10 and the failing LBA, the rest by what went wrong.
     */
    static ScsiResult of(Completion c, boolean write) {
        Status s = c.status();
        switch (s) {
            case GUARD_CHECK: return check(ABORTED_COMMAND, 0x10, 0x01, c.errorLba());
            case APP_TAG_CHECK: return check(ABORTED_COMMAND, 0x10, 0x02, c.errorLba());
            case REF_TAG_CHECK: return check(ABORTED_COMMAND, 0x10, 0x03, c.errorLba());
            case LBA_OUT_OF_RANGE: return lbaOutOfRange();
            case INVALID_FIELD: return invalidField();
            case ACCESS_DENIED: return check(DATA_PROTECT, 0x27, 0x00);
            case NO_SPACE: return check(DATA_PROTECT, 0x27, 0x07); // SPACE ALLOCATION FAILED WRITE PROTECT
            case MEDIA_ERROR: return write ? check(MEDIUM_ERROR, 0x0C, 0x00) : check(MEDIUM_ERROR, 0x11, 0x00);
            case NO_SUCH_VOLUME: return check(NOT_READY, 0x3A, 0x00);
            case VIEW_CHANGED: return status(RESERVATION_CONFLICT); // the reservations now hold the write off
            default: return check(HARDWARE_ERROR, 0x44, 0x00);
        }
    }
}
