package io.pistore.frontend.iscsi;

import io.pistore.engine.BlockDevice;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Completion;
import io.pistore.spi.OrderedCompareAndWrite;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * COMPARE AND WRITE (SBC-3 5.2): the Data-Out holds the blocks to verify, then the blocks to
 * write; with the range held against every other write of the unit, the stored blocks are read
 * and compared, and written only when all of them are equal. A difference answers MISCOMPARE,
 * ASC 1Dh, with the offset of the first differing byte in the INFORMATION field, and writes
 * nothing. With WRPROTECT 0 the target generates the PI (the read checks the stored PI as a READ
 * with RDPROTECT 0 does). With WRPROTECT 1 to 5 (a unit with PI on the wire, not Type 2, whose
 * 16-byte CDB carries no expected tags) each block of both instances comes with its tuple: both are
 * checked as a write with that value checks them, the verify instance then compared as a VERIFY with
 * BYTCHK 1 and that VRPROTECT compares ({@link ScsiPiCompare}), and the write instance is stored
 * with its own tuples. A volume that other ports write too (a replicated volume's peers) offers an
 * {@link OrderedCompareAndWrite}: the whole command goes to it, compared and written in the order of
 * every port's writes, since a range lock here holds off this port's writes only.
 */
final class ScsiCompareAndWrite {
    /** Most blocks one command compares and writes (its CDB field has 8 bits). */
    static final int MAX_BLOCKS = 255;

    private final BlockDevice device;
    private final ScsiRangeLock writes;
    private final int maxBlocks;
    /** The volume's own compare-and-write, ordered with every port's writes, or null (one port). */
    private final OrderedCompareAndWrite ordered;
    /** Whether the unit shows PI to the initiator ({@link ScsiPages#exposesPi}). */
    private final boolean pi;

    ScsiCompareAndWrite(BlockDevice device, ScsiRangeLock writes, int maxTransferBlocks) {
        this.device = device;
        this.pi = ScsiPages.exposesPi(device.format());
        this.writes = writes;
        this.maxBlocks = maxBlocks(maxTransferBlocks);
        this.ordered = device.connection().orderedCompareAndWrite(device.info().name());
    }

    /** The block limits page's MAXIMUM COMPARE AND WRITE LENGTH for this transfer limit. */
    static int maxBlocks(int maxTransferBlocks) {
        return Math.min(MAX_BLOCKS, maxTransferBlocks);
    }

    /** Bytes of Data-Out the CDB asks for: twice its blocks, each with its tuple when WRPROTECT is not 0. */
    long dataOutBytes(byte[] cdb) {
        return 2L * (cdb[13] & 0xff) * wireBlock(protect(cdb));
    }

    private static int protect(byte[] cdb) {
        return (cdb[1] >>> 5) & 0x07;
    }

    private int wireBlock(int protect) {
        return device.format().dataSize() + (protect != 0 && pi ? 8 : 0);
    }

    ScsiResult run(byte[] cdb, byte[] dataOut, boolean readOnly) {
        int protect = protect(cdb);
        if (protect != 0 && pi && device.format().type() == PiType.TYPE_2) {
            return ScsiResult.invalidOpcode(); // as READ(16) and WRITE(16) there: the tags need a 32-byte CDB
        }
        if (protect > 5 || protect != 0 && !pi) {
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
        if (dataOut.length != 2 * n * wireBlock(protect)) {
            return ScsiResult.invalidField(); // also a Data-Out with no blocks to compare
        }
        if (n == 0) {
            return ScsiResult.good();
        }
        if (readOnly) {
            return ScsiResult.check(ScsiResult.DATA_PROTECT, 0x27, 0x00);
        }
        if (protect != 0) {
            return withPi(protect, lba, n, fua, dataOut);
        }
        if (ordered != null) {
            return writes.holding(lba, n, true, () -> inOrder(lba, n, fua, dataOut));
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

    /**
     * WRPROTECT 1 to 5: the verify instance's tuples checked first, then, holding the range, the verify
     * instance compared and the write instance stored, checked by the engine as a WRITE's in one
     * request (a failed check stores nothing). An ordered volume compares and writes itself, data and
     * the compared bits of each tuple; the write instance is checked here before it is asked.
     */
    private ScsiResult withPi(int protect, long lba, int n, boolean fua, byte[] dataOut) {
        BlockFormat f = device.format();
        int ds = f.dataSize();
        Protection checks = ScsiPiCompare.sentChecks(protect, f, lba);
        ScsiPiCompare.Split verify = ScsiPiCompare.Split.of(dataOut, 0, n, ds);
        ScsiPiCompare.Split write = ScsiPiCompare.Split.of(dataOut, n, n, ds);
        ScsiResult bad = ScsiPiCompare.checkSent(f, checks, lba, verify);
        if (bad == null && ordered != null) {
            bad = ScsiPiCompare.checkSent(f, checks, lba, write);
        }
        if (bad != null) {
            return bad;
        }
        if (ordered != null) {
            return writes.holding(lba, n, true, () -> {
                ScsiResult[] failed = new ScsiResult[1];
                long r = send(failed, () -> ordered.compareAndWrite(lba, n, verify.data(), verify.tuples(),
                        ScsiPiCompare.comparedBits(protect, f.type()), write.dataList(), write.tupleList(), fua, null));
                return r == OrderedCompareAndWrite.WRITTEN ? ScsiResult.good()
                        : r >= 0 ? ScsiPiCompare.miscompareAt(r, n, ds, lba, 0) : failed[0];
            });
        }
        return writes.holding(lba, n, true, () -> {
            ScsiResult differs = ScsiPiCompare.readAndCompare(device, protect, lba, verify, 0);
            if (differs != null) {
                return differs;
            }
            Completion w = ScsiLun.await(() -> device.write(lba, write.dataList(), write.tupleList(), checks, fua));
            return w.isSuccess() ? ScsiResult.good() : ScsiResult.of(w, true);
        });
    }

    /** Through the volume's {@link OrderedCompareAndWrite}. */
    private ScsiResult inOrder(long lba, int n, boolean fua, byte[] dataOut) {
        int dl = n * device.format().dataSize();
        ScsiResult[] failed = new ScsiResult[1];
        long r = sendOrdered(ordered, device, lba, n, Arrays.copyOf(dataOut, dl), Arrays.copyOfRange(dataOut, dl, 2 * dl), fua,
                failed);
        return r == OrderedCompareAndWrite.WRITTEN ? ScsiResult.good()
                : r >= 0 ? ScsiResult.check(ScsiResult.MISCOMPARE, 0x1D, 0x00, r) : failed[0];
    }

    /**
     * One compare-and-write through {@code ordered}, {@code write} with the PI the target would
     * insert: {@link OrderedCompareAndWrite#WRITTEN}, the offset of the first byte that differed, or
     * -2 with the command's answer in {@code failed[0]}. A unit whose reservations other ports share
     * has it from its {@link ScsiFencedConnection}, which checks it against them as it checks writes.
     */
    static long sendOrdered(OrderedCompareAndWrite ordered, BlockDevice device, long lba, int n, byte[] verify, byte[] write,
            boolean fua, ScsiResult[] failed) {
        BlockFormat f = device.format();
        ScatterList data = ScatterList.wrap(write);
        ScatterList meta = f.metadataSize() == 0 ? null : ScatterList.wrap(new byte[n * f.metadataSize()]);
        if (f.hasPi()) {
            Pi.generate(device.insertStrip(lba).context(f), data, meta, n); // the tuple; the rest of the metadata stays zero
        }
        return send(failed, () -> ordered.compareAndWrite(lba, n, verify, data, meta, fua, null));
    }

    /** Waits for an ordered compare-and-write: its answer, or -2 with the command's in {@code failed[0]}. */
    private static long send(ScsiResult[] failed, java.util.function.Supplier<java.util.concurrent.CompletableFuture<Long>> call) {
        try {
            return call.get().join();
        } catch (java.util.concurrent.CompletionException | java.util.concurrent.CancellationException e) {
            Throwable c = e.getCause() != null ? e.getCause() : e;
            if (c instanceof io.pistore.engine.volume.PiRefusedException p) { // the volume's own checks, whatever WRPROTECT asked
                failed[0] = ScsiResult.of(Completion.piError(p.lba(), p.error()), true);
                return -2;
            }
            Status s = c instanceof io.pistore.engine.volume.ViewChangedException ? Status.VIEW_CHANGED
                    : c instanceof IllegalArgumentException ? Status.INVALID_FIELD : Status.MEDIA_ERROR;
            failed[0] = ScsiResult.of(Completion.failure(s, String.valueOf(c.getMessage())), true);
            return -2;
        }
    }
}
