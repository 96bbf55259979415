package io.pistore.frontend.iscsi;

/**
 * Commands about a cache or a medium's defects, which a unit made of a volume's files has nothing
 * to act on: PRE-FETCH (10, 16) checks its range and answers GOOD (SBC-3: GOOD, not CONDITION MET,
 * says the blocks were not all placed in a cache; the unit keeps none of its own, the file system's
 * page cache is the host's), and READ DEFECT DATA (10, 12) answers empty lists in the format asked
 * for (no medium, so no primary and no grown defects).
 */
final class ScsiHintCommands {
    private ScsiHintCommands() {
    }

    /** PRE-FETCH(10) or (16): a length of 0 means every block from the LBA to the last. */
    static ScsiResult prefetch(byte[] cdb, long blockCount) {
        boolean sixteen = (cdb[0] & 0xff) == 0x90;
        long lba = sixteen ? Pdu.getLong(cdb, 2) : Cdb.u32(cdb, 2);
        long blocks = sixteen ? Cdb.u32(cdb, 10) : Cdb.u16(cdb, 7);
        if (lba >= blockCount || Cdb.outOfRange(lba, blocks, blockCount)) { // PRE-FETCH's LBA must name a block
            return ScsiResult.lbaOutOfRange();
        }
        return ScsiResult.good();
    }

    /**
     * READ DEFECT DATA(10) or (12): the header alone, PLISTV and GLISTV as asked (each list there,
     * and empty), the defect list format echoed, list length 0.
     */
    static ScsiResult defectData(byte[] cdb) {
        boolean twelve = (cdb[0] & 0xff) == 0xB7;
        int flags = (twelve ? cdb[1] : cdb[2]) & 0x1f; // REQ_PLIST, REQ_GLIST, DEFECT LIST FORMAT
        byte[] b = new byte[twelve ? 8 : 4];
        b[1] = (byte) flags;
        return ScsiResult.cut(b, twelve ? Cdb.u32(cdb, 6) : Cdb.u16(cdb, 7));
    }
}
