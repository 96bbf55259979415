package io.pistore.frontend.iscsi;

import io.pistore.integrity.GuardType;
import java.util.Arrays;

/**
 * A model of the answers to blocks sent with their tuples to be compared (VERIFY with BYTCHK 1,
 * COMPARE AND WRITE's verify instance, a protect field of 1 to 5), written from SBC-4's tables
 * alone, on 512-byte blocks each followed by its 8-byte tuple: the tests' reference for random
 * commands, on one server and on a replicated volume's peers.
 */
public final class ScsiPiCompareModel {
    private static final int WIRE = 520;

    private ScsiPiCompareModel() {
    }

    /**
     * What the tables say a VERIFY with BYTCHK 1 (or a COMPARE AND WRITE's verify instance) answers,
     * written from them alone: {status, sense key, ASC/ASCQ, INFORMATION}. First every sent tuple's
     * checks, block by block (the guard for 1, 4 and 5, then the reference tag against the LBA for 1,
     * 2 and 5 on Type 1), then block by block the data, then the guard (not for 2), application tag
     * and reference tag (on Type 3 only for 5).
     */
    public static long[] expected(int protect, boolean type3, long lba, byte[] sent, byte[] stored, int n) {
        for (int i = 0; i < n; i++) {
            int t = i * WIRE + 512;
            int guard = (int) GuardType.CRC16.compute(sent, i * WIRE, 512);
            if (Cdb.u16(sent, t + 2) == 0xFFFF && (!type3 || Cdb.u32(sent, t + 4) == 0xFFFFFFFFL)) {
                continue; // the escape: no check of this block
            }
            if ((protect == 1 || protect == 4 || protect == 5) && Cdb.u16(sent, t) != guard) {
                return new long[] {ScsiResult.CHECK_CONDITION, ScsiResult.ABORTED_COMMAND, 0x1001, lba + i};
            }
            if ((protect == 1 || protect == 2 || protect == 5) && !type3 && Cdb.u32(sent, t + 4) != lba + i) {
                return new long[] {ScsiResult.CHECK_CONDITION, ScsiResult.ABORTED_COMMAND, 0x1003, lba + i};
            }
        }
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < 512; j++) {
                if (sent[i * WIRE + j] != stored[i * WIRE + j]) {
                    return new long[] {ScsiResult.CHECK_CONDITION, ScsiResult.MISCOMPARE, 0x1D00, (long) i * WIRE + j};
                }
            }
            int t = i * WIRE + 512;
            boolean[] compared = {protect != 2, true, protect == 5 || !type3};
            int[][] fields = {{0, 2}, {2, 4}, {4, 8}};
            for (int k = 0; k < 3; k++) {
                if (compared[k] && !Arrays.equals(sent, t + fields[k][0], t + fields[k][1], stored, t + fields[k][0], t + fields[k][1])) {
                    return new long[] {ScsiResult.CHECK_CONDITION, ScsiResult.MISCOMPARE, 0x1001 + k, lba + i};
                }
            }
        }
        return new long[] {ScsiResult.GOOD, 0, 0, 0};
    }
}
