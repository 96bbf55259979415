package io.pistore.frontend.iscsi;

import java.util.Set;

/**
 * A session the access rules grant read-only access (docs/ISCSI.md): the logical unit is shown
 * write-protected (the WP bit of the MODE SENSE header) and every command that changes stored
 * blocks answers DATA PROTECT, WRITE PROTECTED (07h/27h/00h) before it reaches the volume; what
 * reads, checks or describes runs as in any session. The same logical unit serves read-write
 * sessions at the same time.
 */
final class ReadOnlySession {
    /**
     * Operation codes that change stored blocks: WRITE (6, 10, 12, 16), WRITE AND VERIFY (10, 12,
     * 16), WRITE ATOMIC(16), WRITE SAME (10, 16), UNMAP, COMPARE AND WRITE, ORWRITE, XDWRITEREAD, FORMAT
     * UNIT, SANITIZE, EXTENDED COPY.
     */
    private static final Set<Integer> WRITES = Set.of(0x0A, 0x2A, 0xAA, 0x8A, 0x2E, 0xAE, 0x8E, 0x9C, 0x41, 0x93,
            0x42, 0x89, 0x8B, 0x53, 0x04, 0x48, 0x83);
    /** Service actions of the 32-byte CDB (0x7F) that write: WRITE, WRITE AND VERIFY, WRITE SAME, ORWRITE. */
    private static final Set<Integer> WRITES_32 = Set.of(0x000B, 0x000C, 0x000D, 0x000E);

    private ReadOnlySession() {
    }

    /** Executes {@code cdb} on {@code lun} for a read-only session, the initiator port {@code nexus}. */
    static ScsiResult execute(ScsiLun lun, String nexus, byte[] cdb, byte[] dataOut) {
        if (writes(cdb)) {
            return ScsiResult.check(ScsiResult.DATA_PROTECT, 0x27, 0x00);
        }
        ScsiResult r = lun.execute(nexus, cdb, dataOut);
        int op = cdb[0] & 0xff;
        int wp = op == 0x1A ? 2 : op == 0x5A ? 3 : -1; // the device-specific parameter of the mode header
        if (wp >= 0 && r.status == ScsiResult.GOOD && r.dataIn.length > wp) {
            byte[] d = r.dataIn.clone();
            d[wp] |= (byte) 0x80;
            return ScsiResult.good(d);
        }
        return r;
    }

    static boolean writes(byte[] cdb) {
        int op = cdb[0] & 0xff;
        if (op == Cdb.VARIABLE_LENGTH) {
            return cdb.length >= 10 && WRITES_32.contains(Cdb.u16(cdb, 8));
        }
        return WRITES.contains(op);
    }
}
