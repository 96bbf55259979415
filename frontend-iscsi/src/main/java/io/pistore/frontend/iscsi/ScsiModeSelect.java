package io.pistore.frontend.iscsi;

/**
 * MODE SELECT(6) and MODE SELECT(10) (SPC-4 6.11, 6.12) for the pages MODE SENSE reports. No field
 * of them is changeable (the changeable values are all zero), so a parameter list is accepted when
 * its block descriptor and pages carry the current values and refused with INVALID FIELD IN
 * PARAMETER LIST when any field differs; saving pages (SP) is not supported.
 */
final class ScsiModeSelect {
    private ScsiModeSelect() {
    }

    /** Bytes of Data-Out a MODE SELECT CDB asks for. */
    static long dataOutBytes(byte[] cdb) {
        return (cdb[0] & 0xff) == 0x15 ? cdb[4] & 0xff : Cdb.u16(cdb, 7);
    }

    static ScsiResult run(ScsiPages pages, byte[] cdb, byte[] param) {
        boolean ten = (cdb[0] & 0xff) == 0x55;
        if ((cdb[1] & 0x01) != 0) {
            return ScsiResult.invalidField(); // SP: this unit saves no pages
        }
        int len = (int) Math.min(dataOutBytes(cdb), param.length);
        if (len == 0) {
            return ScsiResult.good();
        }
        int header = ten ? 8 : 4;
        if (len < header) {
            return lengthError();
        }
        int bdLen = ten ? Cdb.u16(param, 6) : param[3] & 0xff;
        if (header + bdLen > len) {
            return lengthError();
        }
        if (bdLen != 0) {
            byte[] current = pages.blockDescriptor();
            boolean longLba = ten && (param[4] & 0x01) != 0;
            if (longLba || bdLen != 8) {
                return invalidParameter();
            }
            long blocks = Cdb.u32(param, header);
            boolean sameCount = blocks == 0 || blocks == Cdb.u32(current, 0);
            if (!sameCount || Cdb.u32(param, header + 4) != Cdb.u32(current, 4)) {
                return invalidParameter();
            }
        }
        int off = header + bdLen;
        while (off < len) {
            if (off + 2 > len) {
                return lengthError();
            }
            boolean subpageFormat = (param[off] & 0x40) != 0;
            int pageLen = subpageFormat ? (off + 4 > len ? -1 : 4 + Cdb.u16(param, off + 2)) : 2 + (param[off + 1] & 0xff);
            if (pageLen < 0 || off + pageLen > len) {
                return lengthError();
            }
            byte[] current = subpageFormat ? null : pages.modePages(param[off] & 0x3f, 0);
            if (current == null || (param[off] & 0x3f) == 0x3F || current.length != pageLen) {
                return invalidParameter();
            }
            for (int i = 0; i < pageLen; i++) {
                int mask = i == 0 ? 0x7F : 0xFF; // PS is reserved in MODE SELECT
                if (((param[off + i] ^ current[i]) & mask) != 0) {
                    return invalidParameter();
                }
            }
            off += pageLen;
        }
        return ScsiResult.good();
    }

    private static ScsiResult lengthError() {
        return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x1A, 0x00);
    }

    private static ScsiResult invalidParameter() {
        return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
    }
}
