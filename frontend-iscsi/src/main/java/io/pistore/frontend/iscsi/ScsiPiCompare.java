package io.pistore.frontend.iscsi;

import io.pistore.engine.BlockDevice;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Completion;
import io.pistore.spi.OrderedCompareAndWrite;
import io.pistore.spi.Protection;
import java.nio.ByteBuffer;
import java.util.function.LongFunction;

/**
 * Blocks that come with their tuples to be compared with the stored ones: VERIFY with BYTCHK 1 and
 * a VRPROTECT of 1 to 5, COMPARE AND WRITE's verify instance with a WRPROTECT of 1 to 5 (SBC-4, the
 * VRPROTECT tables for BYTCHK 01b). In that order:
 * <ol>
 * <li>the Data-Out's tuples are checked as a write with that protect value checks them (guard for
 * 1, 4, 5; reference tag for 1, 2, 5 but not on Type 3): ABORTED COMMAND, ASC 10h, the LBA;</li>
 * <li>the stored blocks are read with their tuples and nothing checked on them;</li>
 * <li>block by block, the data is compared (MISCOMPARE 1Dh/00h, INFORMATION the offset of the first
 * differing byte in the Data-Out), then the tuple's fields the protect value compares: the guard
 * unless 2, the application tag always (the control page's ATO is 1), the reference tag unless the
 * unit is Type 3 and the value is not 5; a field that differs answers MISCOMPARE with ASC 10h/01h,
 * 02h or 03h and its block's LBA, as every ASC 10h answer of this target does.</li>
 * </ol>
 * Stateless; the callers hold the range while they compare (and write).
 */
final class ScsiPiCompare {
    /** Bytes of one block with its tuple on the wire. */
    private static final int TUPLE = 8;

    private ScsiPiCompare() {
    }

    /** The checks a write with {@code protect} (1 to 5) makes of the tuples that come with blocks from {@code lba}. */
    static Protection sentChecks(int protect, BlockFormat f, long lba) {
        return Protection.pass(Cdb.checks(protect, f.type(), false), f.refTagOf(lba), 0, 0);
    }

    /** Blocks {@code from} to {@code from + n - 1} of a Data-Out in which each block is followed by its tuple, apart. */
    record Split(byte[] data, byte[] tuples) {
        static Split of(byte[] wire, int from, int n, int ds) {
            byte[] d = new byte[n * ds];
            byte[] t = new byte[n * TUPLE];
            for (int i = 0; i < n; i++) {
                System.arraycopy(wire, (from + i) * (ds + TUPLE), d, i * ds, ds);
                System.arraycopy(wire, (from + i) * (ds + TUPLE) + ds, t, i * TUPLE, TUPLE);
            }
            return new Split(d, t);
        }

        ScatterList dataList() {
            return ScatterList.wrap(data);
        }

        ScatterList tupleList() {
            return ScatterList.wrap(tuples);
        }
    }

    /**
     * VERIFY with BYTCHK 1 and a VRPROTECT of 1 to 5, in pieces of at most {@code maxBlocks} blocks;
     * {@code checks}: the checks of a piece's Data-Out tuples, by the piece's first LBA (a 32-byte
     * CDB's expected tags counted from its own).
     */
    static ScsiResult verify(BlockDevice device, Cdb c, byte[] dataOut, int maxBlocks, LongFunction<Protection> checks) {
        int ds = device.format().dataSize();
        if (dataOut.length < c.blocks() * (ds + TUPLE)) {
            return ScsiResult.invalidField();
        }
        for (long done = 0; done < c.blocks(); ) {
            int n = (int) Math.min(maxBlocks, c.blocks() - done);
            long lba = c.lba() + done;
            Split sent = Split.of(dataOut, (int) done, n, ds);
            ScsiResult r = checkSent(device.format(), checks.apply(lba), lba, sent);
            if (r == null) {
                r = readAndCompare(device, c.protect(), lba, sent, done * (ds + TUPLE));
            }
            if (r != null) {
                return r;
            }
            done += n;
        }
        return ScsiResult.good();
    }

    /** Null when the tuples of {@code sent} (blocks from {@code lba}) pass {@code checks}, else the ABORTED COMMAND answer. */
    static ScsiResult checkSent(BlockFormat f, Protection checks, long lba, Split sent) {
        PiError e = Pi.verify(checks.context(f), sent.dataList(), sent.tupleList(), sent.data.length / f.dataSize());
        return e == null ? null : ScsiResult.of(Completion.piError(lba, e), false);
    }

    /**
     * Reads the {@code sent.data.length / ds} stored blocks from {@code lba} with their tuples, nothing
     * checked, and compares them with {@code sent}: null when they are equal, else the answer (a
     * failed read's, or the MISCOMPARE). {@code wireOffset}: where the first block sits in the
     * Data-Out, for the INFORMATION field of a data miscompare.
     */
    static ScsiResult readAndCompare(BlockDevice device, int protect, long lba, Split sent, long wireOffset) {
        BlockFormat f = device.format();
        int ds = f.dataSize();
        int n = sent.data.length / ds;
        byte[] data = new byte[n * ds];
        byte[] tuples = new byte[n * TUPLE];
        Completion r = ScsiLun.await(() -> device.read(lba, ScatterList.wrap(data), ScatterList.wrap(tuples),
                Protection.pass(CheckFlags.NONE, 0, 0, 0)));
        if (!r.isSuccess()) {
            return ScsiResult.of(r, false);
        }
        return compare(protect, f.type(), lba, sent, data, tuples, ds, wireOffset);
    }

    /**
     * The bits of a tuple that {@code protect} (1 to 5) compares: the guard unless 2, the application
     * tag always (ATO 1), the reference tag unless the unit is Type 3 and the value is not 5.
     */
    static byte[] comparedBits(int protect, PiType type) {
        byte[] m = new byte[TUPLE];
        java.util.Arrays.fill(m, 2, 4, (byte) 0xFF);
        if (protect != 2) {
            java.util.Arrays.fill(m, 0, 2, (byte) 0xFF);
        }
        if (protect == 5 || type != PiType.TYPE_3) {
            java.util.Arrays.fill(m, 4, 8, (byte) 0xFF);
        }
        return m;
    }

    /**
     * The comparison of {@link #readAndCompare} once the stored blocks and tuples are in hand: the
     * same as a volume that orders the command makes ({@link OrderedCompareAndWrite#firstDifference}).
     */
    static ScsiResult compare(int protect, PiType type, long lba, Split sent, byte[] data, byte[] tuples, int ds,
            long wireOffset) {
        long diff = OrderedCompareAndWrite.firstDifference(ByteBuffer.wrap(sent.data), ByteBuffer.wrap(data),
                ByteBuffer.wrap(sent.tuples), ByteBuffer.wrap(tuples), comparedBits(protect, type), ds);
        return diff < 0 ? null : miscompareAt(diff, data.length / ds, ds, lba, wireOffset);
    }

    /**
     * The answer to a difference at {@code offset} of {@code n} blocks' data followed by their tuples
     * ({@link OrderedCompareAndWrite#firstDifference}); {@code wireOffset}: where the first block sits
     * in the Data-Out, for the INFORMATION field of a data miscompare.
     */
    static ScsiResult miscompareAt(long offset, int n, int ds, long lba, long wireOffset) {
        if (offset < (long) n * ds) {
            return ScsiResult.check(ScsiResult.MISCOMPARE, 0x1D, 0x00,
                    wireOffset + offset / ds * (ds + TUPLE) + offset % ds);
        }
        long t = offset - (long) n * ds;
        return fieldMiscompare((int) (t % TUPLE), lba + t / TUPLE);
    }

    /** MISCOMPARE of byte {@code j} of a tuple: the guard (10h/01h), application tag (02h) or reference tag (03h). */
    private static ScsiResult fieldMiscompare(int j, long lba) {
        return ScsiResult.check(ScsiResult.MISCOMPARE, 0x10, j < 2 ? 0x01 : j < 4 ? 0x02 : 0x03, lba);
    }
}
