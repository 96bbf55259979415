package io.pistore.frontend.iscsi;

import io.pistore.engine.BlockDevice;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Completion;
import io.pistore.spi.OrderedCompareAndWrite;

/**
 * ORWRITE(16) (SBC-3 5.9): each stored byte becomes itself OR the byte of the Data-Out at the same
 * place. With the range held against every other write of the unit (as COMPARE AND WRITE holds
 * it), the blocks are read (their stored PI checked as a READ with RDPROTECT 0 checks it), OR-ed
 * and written back as one request, with PI the target generates for the new data: nothing lands
 * between the read and the write, and a crash leaves the blocks all old or all new. ORPROTECT other
 * than 0 is an invalid field, as COMPARE AND WRITE's WRPROTECT is. Where other ports write the
 * volume too (an {@link OrderedCompareAndWrite}: a replicated volume's peers), the OR-ed blocks are
 * written by a compare-and-write expecting the blocks read, read and sent again while another port's
 * write came between (at most {@link #TRIES} times, then BUSY).
 */
final class ScsiOrWrite {
    static final int OPCODE = 0x8B;

    /** How many times a read and its compare-and-write are tried where other ports write the blocks between. */
    static final int TRIES = 16;

    private final BlockDevice device;
    private final ScsiRangeLock writes;
    private final int maxBlocks;
    /** The volume's own compare-and-write, ordered with every port's writes, or null (one port). */
    private final OrderedCompareAndWrite ordered;

    ScsiOrWrite(BlockDevice device, ScsiRangeLock writes, int maxTransferBlocks) {
        this.device = device;
        this.writes = writes;
        this.maxBlocks = maxTransferBlocks;
        this.ordered = device.connection().orderedCompareAndWrite(device.info().name());
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
            for (int tries = 0; tries < (ordered == null ? 1 : TRIES); tries++) {
                byte[] stored = new byte[n * ds];
                Completion r = ScsiLun.await(() -> device.read(lba, ScatterList.wrap(stored)));
                if (!r.isSuccess()) {
                    return ScsiResult.of(r, false);
                }
                byte[] or = stored.clone();
                for (int i = 0; i < or.length; i++) {
                    or[i] |= dataOut[i];
                }
                if (ordered == null) {
                    Completion w = ScsiLun.await(() -> device.write(lba, ScatterList.wrap(or), null, device.insertStrip(lba), fua));
                    return w.isSuccess() ? ScsiResult.good() : ScsiResult.of(w, true);
                }
                ScsiResult[] failed = new ScsiResult[1];
                long w = ScsiCompareAndWrite.sendOrdered(ordered, device, lba, n, stored, or, fua, failed);
                if (w == OrderedCompareAndWrite.WRITTEN) {
                    return ScsiResult.good();
                }
                if (w < 0) {
                    return failed[0];
                }
                // another port wrote these blocks since they were read: read them again
            }
            return ScsiResult.status(ScsiResult.BUSY);
        });
    }
}
