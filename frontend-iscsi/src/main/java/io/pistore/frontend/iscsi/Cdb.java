package io.pistore.frontend.iscsi;

import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.PiType;

/**
 * The fields of a READ, WRITE, VERIFY, WRITE AND VERIFY or WRITE ATOMIC CDB (SBC-3, SBC-4): LBA,
 * transfer length in logical blocks, the protect field (RDPROTECT, WRPROTECT or VRPROTECT), FUA,
 * BYTCHK, and for the 32-byte CDBs the expected initial reference tag, application tag and its mask.
 * {@code null} from {@link #parse} when the opcode is not one of them.
 */
record Cdb(Kind kind, long lba, long blocks, int protect, boolean fua, int bytchk, boolean is32,
           long expectedRefTag, int expectedAppTag, int appTagMask) {

    enum Kind { READ, WRITE, VERIFY, WRITE_VERIFY, WRITE_ATOMIC }

    static final int VARIABLE_LENGTH = 0x7F;
    static final int READ_32 = 0x0009;
    static final int VERIFY_32 = 0x000A;
    static final int WRITE_32 = 0x000B;

    static Cdb parse(byte[] c) {
        int op = c[0] & 0xff;
        int b1 = c.length > 1 ? c[1] & 0xff : 0;
        int protect = b1 >>> 5;
        boolean fua = (b1 & 0x08) != 0;
        int bytchk = (b1 >>> 1) & 0x03;
        switch (op) {
            case 0x08:
            case 0x0A: {
                long lba = (b1 & 0x1f) << 16 | (c[2] & 0xff) << 8 | c[3] & 0xff;
                int n = c[4] & 0xff;
                return new Cdb(op == 0x08 ? Kind.READ : Kind.WRITE, lba, n == 0 ? 256 : n, 0, false, 0, false, 0, 0, 0);
            }
            case 0x28:
            case 0x2A:
            case 0x2E:
            case 0x2F:
                return new Cdb(kind(op), u32(c, 2), u16(c, 7), protect, fua && op != 0x2E, bytchk, false, 0, 0, 0);
            case 0xA8:
            case 0xAA:
            case 0xAE:
            case 0xAF:
                return new Cdb(kind(op), u32(c, 2), u32(c, 6), protect, fua && op != 0xAE, bytchk, false, 0, 0, 0);
            case 0x88:
            case 0x8A:
            case 0x8E:
            case 0x8F:
                return new Cdb(kind(op), Pdu.getLong(c, 2), u32(c, 10), protect, fua && op != 0x8E, bytchk, false, 0, 0, 0);
            case 0x9C: // WRITE ATOMIC(16): a 16-bit transfer length after two reserved bytes
                return new Cdb(Kind.WRITE_ATOMIC, Pdu.getLong(c, 2), u16(c, 12), protect, fua, 0, false, 0, 0, 0);
            case VARIABLE_LENGTH: {
                if (c.length < 32) {
                    return null;
                }
                int sa = u16(c, 8);
                Kind k = sa == READ_32 ? Kind.READ : sa == WRITE_32 ? Kind.WRITE : sa == VERIFY_32 ? Kind.VERIFY : null;
                if (k == null) {
                    return null;
                }
                int b10 = c[10] & 0xff;
                return new Cdb(k, Pdu.getLong(c, 12), u32(c, 28), b10 >>> 5, (b10 & 0x08) != 0, (b10 >>> 1) & 0x03,
                        true, u32(c, 20), u16(c, 24), u16(c, 26));
            }
            default:
                return null;
        }
    }

    private static Kind kind(int op) {
        switch (op) {
            case 0x28: case 0xA8: case 0x88: return Kind.READ;
            case 0x2A: case 0xAA: case 0x8A: return Kind.WRITE;
            case 0x2E: case 0xAE: case 0x8E: return Kind.WRITE_VERIFY; // FUA bit reserved: always forced
            default: return Kind.VERIFY;
        }
    }

    /** Whether the command stores the blocks it names (WRITE, WRITE AND VERIFY, WRITE ATOMIC). */
    boolean writes() {
        return kind == Kind.WRITE || kind == Kind.WRITE_VERIFY || kind == Kind.WRITE_ATOMIC;
    }

    /** This command with FUA set: its blocks durable before it is answered. */
    Cdb forced() {
        return new Cdb(kind, lba, blocks, protect, true, bytchk, is32, expectedRefTag, expectedAppTag, appTagMask);
    }

    /** A VERIFY of the first {@code n} blocks of this command, with that protect field and BYTCHK. */
    Cdb verifying(long n, int protect, int bytchk) {
        return new Cdb(Kind.VERIFY, lba, n, protect, false, bytchk, is32, expectedRefTag, expectedAppTag, appTagMask);
    }

    /**
     * Whether {@code n} blocks from {@code lba} fall outside a unit of {@code count} blocks (an LBA
     * the CDB's 64 bits made negative, or a sum that would overflow, included).
     */
    static boolean outOfRange(long lba, long n, long count) {
        return lba < 0 || lba > count || n > count - lba;
    }

    /**
     * The checks a protect field (RDPROTECT, WRPROTECT, VRPROTECT; 1 to 5) asks of the tuples on the
     * wire (SBC-3's tables): the guard for 1, 4 and 5; the reference tag for 1, 2 and 5 but not on
     * Type 3; the application tag for 1, 2 and 5 only where the CDB carries one ({@code appTag}).
     */
    static CheckFlags checks(int protect, PiType type, boolean appTag) {
        boolean guard = protect == 1 || protect == 4 || protect == 5;
        boolean tags = protect == 1 || protect == 2 || protect == 5;
        return CheckFlags.of(guard, tags && appTag, tags && type != PiType.TYPE_3);
    }

    static int u16(byte[] c, int off) {
        return (c[off] & 0xff) << 8 | c[off + 1] & 0xff;
    }

    static long u32(byte[] c, int off) {
        return Pdu.getInt(c, off) & 0xFFFFFFFFL;
    }
}
