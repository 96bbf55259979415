package io.pistore.frontend.iscsi;

import io.pistore.engine.BlockDevice;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Completion;
import java.nio.ByteBuffer;

/**
 * COMPARE AND WRITE (SBC-3 5.2): the Data-Out holds the blocks to verify, then the blocks to
 * write; with the range held against every other write of the unit, the stored blocks are read
 * and compared, and written only when all of them are equal. A difference answers MISCOMPARE,
 * ASC 1Dh, with the offset of the first differing byte in the INFORMATION field, and writes
 * nothing. PI travels only with WRPROTECT 0 (the target generates it; the read checks the stored
 * PI as a READ with RDPROTECT 0 does); another WRPROTECT is an invalid field.
 */
final class ScsiCompareAndWrite {
    /** Most blocks one command compares and writes (its CDB field has 8 bits). */
    static final int MAX_BLOCKS = 255;

    private final BlockDevice device;
    private final ScsiRangeLock writes;
    private final int maxBlocks;

    ScsiCompareAndWrite(BlockDevice device, ScsiRangeLock writes, int maxTransferBlocks) {
        this.device = device;
        this.writes = writes;
        this.maxBlocks = maxBlocks(maxTransferBlocks);
    }

    /** The block limits page's MAXIMUM COMPARE AND WRITE LENGTH for this transfer limit. */
    static int maxBlocks(int maxTransferBlocks) {
        return Math.min(MAX_BLOCKS, maxTransferBlocks);
    }

    /** Bytes of Data-Out the CDB asks for: twice its blocks. */
    long dataOutBytes(byte[] cdb) {
        return 2L * (cdb[13] & 0xff) * device.format().dataSize();
    }

    ScsiResult run(byte[] cdb, byte[] dataOut, boolean readOnly) {
        if ((cdb[1] & 0xE0) != 0) {
            return ScsiResult.invalidField();
        }
        long lba = Pdu.getLong(cdb, 2);
        int n = cdb[13] & 0xff;
        boolean fua = (cdb[1] & 0x08) != 0;
        if (n > maxBlocks) {
            return ScsiResult.invalidField();
        }
        long count = device.info().blockCount();
        if (Cdb.outOfRange(lba, n, count)) {
            return ScsiResult.lbaOutOfRange();
        }
        int ds = device.format().dataSize();
        if (dataOut.length != 2 * n * ds) {
            return ScsiResult.invalidField(); // also a Data-Out with no blocks to compare
        }
        if (n == 0) {
            return ScsiResult.good();
        }
        if (readOnly) {
            return ScsiResult.check(ScsiResult.DATA_PROTECT, 0x27, 0x00);
        }
        return writes.holding(lba, n, true, () -> {
            ByteBuffer stored = ByteBuffer.allocate(n * ds);
            Completion r = ScsiLun.await(() -> device.read(lba, ScatterList.of(stored)));
            if (!r.isSuccess()) {
                return ScsiResult.of(r, false);
            }
            byte[] s = stored.array();
            for (int i = 0; i < s.length; i++) {
                if (s[i] != dataOut[i]) {
                    return ScsiResult.check(ScsiResult.MISCOMPARE, 0x1D, 0x00, i);
                }
            }
            ScatterList data = ScatterList.of(ByteBuffer.wrap(dataOut, n * ds, n * ds).slice());
            Completion w = ScsiLun.await(() -> device.write(lba, data, null, device.insertStrip(lba), fua));
            return w.isSuccess() ? ScsiResult.good() : ScsiResult.of(w, true);
        });
    }
}
