package io.pistore.frontend.iscsi;

import io.pistore.engine.BlockDevice;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Completion;
import java.nio.ByteBuffer;

/**
 * ORWRITE(16) (SBC-3 5.9): each stored byte becomes itself OR the byte of the Data-Out at the same
 * place. With the range held against every other write of the unit (as COMPARE AND WRITE holds
 * it), the blocks are read (their stored PI checked as a READ with RDPROTECT 0 checks it), OR-ed
 * and written back as one request, with PI the target generates for the new data: nothing lands
 * between the read and the write, and a crash leaves the blocks all old or all new. ORPROTECT other
 * than 0 is an invalid field, as COMPARE AND WRITE's WRPROTECT is.
 */
final class ScsiOrWrite {
    static final int OPCODE = 0x8B;

    private final BlockDevice device;
    private final ScsiRangeLock writes;
    private final int maxBlocks;

    ScsiOrWrite(BlockDevice device, ScsiRangeLock writes, int maxTransferBlocks) {
        this.device = device;
        this.writes = writes;
        this.maxBlocks = maxTransferBlocks;
    }

    /** Bytes of Data-Out the CDB asks for: its blocks' data. */
    long dataOutBytes(byte[] cdb) {
        return Cdb.u32(cdb, 10) * device.format().dataSize();
    }

    ScsiResult run(byte[] cdb, byte[] dataOut, boolean readOnly) {
        if ((cdb[1] & 0xE0) != 0) {
            return ScsiResult.invalidField();
        }
        long lba = Pdu.getLong(cdb, 2);
        long blocks = Cdb.u32(cdb, 10);
        boolean fua = (cdb[1] & 0x08) != 0;
        if (blocks > maxBlocks) {
            return ScsiResult.invalidField();
        }
        long count = device.info().blockCount();
        if (Cdb.outOfRange(lba, blocks, count)) {
            return ScsiResult.lbaOutOfRange();
        }
        int ds = device.format().dataSize();
        // an expected transfer length shorter than the CDB's ORs the whole blocks it covers (residual overflow)
        int n = (int) Math.min(blocks, dataOut.length / ds);
        if (n == 0) {
            return ScsiResult.good();
        }
        if (readOnly) {
            return ScsiResult.check(ScsiResult.DATA_PROTECT, 0x27, 0x00);
        }
        return writes.holding(lba, n, true, () -> { // alone, as COMPARE AND WRITE
            byte[] stored = new byte[n * ds];
            Completion r = ScsiLun.await(() -> device.read(lba, ScatterList.wrap(stored)));
            if (!r.isSuccess()) {
                return ScsiResult.of(r, false);
            }
            for (int i = 0; i < stored.length; i++) {
                stored[i] |= dataOut[i];
            }
            ScatterList data = ScatterList.of(ByteBuffer.wrap(stored));
            Completion w = ScsiLun.await(() -> device.write(lba, data, null, device.insertStrip(lba), fua));
            return w.isSuccess() ? ScsiResult.good() : ScsiResult.of(w, true);
        });
    }
}
