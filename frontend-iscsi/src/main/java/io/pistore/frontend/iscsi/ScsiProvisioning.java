package io.pistore.frontend.iscsi;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.BlockIoException;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import java.nio.ByteBuffer;
import java.util.BitSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Thin provisioning of a logical unit (SBC-3 4.7): UNMAP and WRITE SAME with UNMAP deallocate
 * blocks (they then read as zeros with the escape tuple, LBPRZ), WRITE SAME writes one block
 * over a range (zeros as a zero write), GET LBA STATUS tells deallocated from mapped blocks. A
 * WRITE SAME with a non-zero WRPROTECT carries its block's tuple ({@link #writeSameWithPi}).
 */
final class ScsiProvisioning {
    /** Most blocks one UNMAP descriptor covers. */
    static final int MAX_UNMAP_BLOCKS = 1 << 20;
    /** Most UNMAP block descriptors in one command. */
    static final int MAX_UNMAP_DESCRIPTORS = 256;
    /** Blocks one engine zero write or deallocation covers. */
    private static final int CHUNK = 1 << 16;
    /**
     * Data bytes one GET LBA STATUS looks at (1024 blocks of 512 bytes, 128 of 4096): telling an
     * unwritten block needs its data read and found zero, so the window is one read of this size.
     * The initiator asks again from where an answer's runs end.
     */
    private static final int STATUS_WINDOW_BYTES = 512 << 10;

    private final BlockDevice device;
    private final int maxTransferBlocks;
    /** The server's pooled buffers: GET LBA STATUS reads the blocks it looks at into one. */
    private final DataInPool dataIn;

    ScsiProvisioning(BlockDevice device, int maxTransferBlocks, DataInPool dataIn) {
        this.device = device;
        this.maxTransferBlocks = maxTransferBlocks;
        this.dataIn = dataIn;
    }

    /** Bytes of Data-Out of an UNMAP or WRITE SAME CDB, or -1 when {@code cdb} is neither. */
    long dataOutBytes(byte[] cdb) {
        // a block, with its tuple when WRPROTECT is not zero on a unit that shows PI
        int block = device.format().dataSize() + ((cdb[1] & 0xE0) != 0 && ScsiPages.exposesPi(device.format()) ? 8 : 0);
        switch (cdb[0] & 0xff) {
            case 0x42: return Cdb.u16(cdb, 7);
            case 0x41: return block;
            case 0x93: return (cdb[1] & 0x01) != 0 ? 0 : block;
            default: return -1;
        }
    }

    ScsiResult unmap(byte[] cdb, byte[] param, boolean readOnly) {
        if (readOnly) {
            return ScsiResult.check(ScsiResult.DATA_PROTECT, 0x27, 0x00);
        }
        int length = Math.min(Cdb.u16(cdb, 7), param.length);
        if (length == 0) {
            return ScsiResult.good();
        }
        if (length < 8) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00); // invalid field in parameter list
        }
        int descriptors = Math.min(Cdb.u16(param, 2), length - 8) / 16;
        if (descriptors > MAX_UNMAP_DESCRIPTORS) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
        }
        for (int i = 0; i < descriptors; i++) { // every range is checked before any is deallocated
            long lba = Pdu.getLong(param, 8 + 16 * i);
            long n = Cdb.u32(param, 16 + 16 * i);
            if (n > MAX_UNMAP_BLOCKS) {
                return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
            }
            if (Cdb.outOfRange(lba, n, device.info().blockCount())) {
                return ScsiResult.lbaOutOfRange();
            }
        }
        for (int i = 0; i < descriptors; i++) {
            ScsiResult r = deallocate(Pdu.getLong(param, 8 + 16 * i), Cdb.u32(param, 16 + 16 * i));
            if (r != null) {
                return r;
            }
        }
        return ScsiResult.good();
    }

    ScsiResult writeSame(byte[] cdb, byte[] block, boolean readOnly) {
        boolean sixteen = (cdb[0] & 0xff) == 0x93;
        int protect = (cdb[1] & 0xff) >>> 5;
        boolean unmap = (cdb[1] & 0x08) != 0;
        boolean anchor = (cdb[1] & 0x10) != 0;
        boolean ndob = sixteen && (cdb[1] & 0x01) != 0;
        long lba = sixteen ? Pdu.getLong(cdb, 2) : Cdb.u32(cdb, 2);
        long n = sixteen ? Cdb.u32(cdb, 10) : Cdb.u16(cdb, 7);
        if (protect > 5 || protect != 0 && (ndob || !ScsiPages.exposesPi(device.format())) || anchor || n == 0
                || n > maxWriteSameBlocks(maxTransferBlocks)) {
            return ScsiResult.invalidField(); // WSNZ: a zero count is not "to the end"
        }
        if (protect != 0 && device.format().type() == PiType.TYPE_2) {
            return ScsiResult.invalidOpcode(); // Type 2 takes its reference tags from 32-byte CDBs (SBC-3)
        }
        if (Cdb.outOfRange(lba, n, device.info().blockCount())) {
            return ScsiResult.lbaOutOfRange();
        }
        if (readOnly) {
            return ScsiResult.check(ScsiResult.DATA_PROTECT, 0x27, 0x00);
        }
        int ds = device.format().dataSize();
        if (!ndob && block.length < ds) {
            return ScsiResult.invalidField();
        }
        if (protect != 0) {
            return block.length < ds + 8 ? ScsiResult.invalidField() : writeSameWithPi(protect, lba, n, block);
        }
        boolean zeros = ndob || isZero(block, ds);
        if (zeros && unmap) {
            ScsiResult r = deallocate(lba, n);
            return r == null ? ScsiResult.good() : r;
        }
        if (zeros) {
            for (long done = 0; done < n; ) {
                int c = (int) Math.min(CHUNK, n - done);
                long at = lba + done;
                Completion r = ScsiLun.await(() -> device.writeZeroes(at, c));
                if (!r.isSuccess()) {
                    return ScsiResult.of(r, true);
                }
                done += c;
            }
            return ScsiResult.good();
        }
        return writeCopies(lba, n, block, null, false);
    }

    /**
     * WRITE SAME with WRPROTECT 1 to 5 (SBC-3): the Data-Out's block and tuple, checked as that
     * WRPROTECT asks (the guard for 1, 4 and 5, Type 1's reference tag against the first LBA for 1, 2
     * and 5; no application tag: the CDB has none to compare with), then written to every block of
     * the range with that tuple, Type 1's reference tag one higher for each block after the first.
     * A failed check stores nothing. An escaped tuple (application tag FFFFh) is written as it is.
     */
    private ScsiResult writeSameWithPi(int protect, long lba, long n, byte[] block) {
        BlockFormat f = device.format();
        int ds = f.dataSize();
        Protection checks = ScsiPiCompare.sentChecks(protect, f, lba);
        PiError bad = Pi.verify(checks.context(f), ScatterList.of(ByteBuffer.wrap(block, 0, ds).slice()),
                ScatterList.of(ByteBuffer.wrap(block, ds, 8).slice()), 1);
        if (bad != null) {
            return ScsiResult.of(Completion.piError(lba, bad), true);
        }
        boolean escaped = Cdb.u16(block, ds + 2) == 0xFFFF;
        return writeCopies(lba, n, block, checks.checks(), f.type() == PiType.TYPE_1 && !escaped);
    }

    /**
     * Writes the block at the start of {@code block} to every block of the range, in requests of the
     * transfer limit: with {@code checks} null, PI generated for each LBA; else with the tuple that
     * follows it in {@code block}, checked so, its reference tag counting up from the first where
     * {@code counts}.
     */
    private ScsiResult writeCopies(long lba, long n, byte[] block, CheckFlags checks, boolean counts) {
        BlockFormat f = device.format();
        int ds = f.dataSize();
        int chunk = (int) Math.min(maxTransferBlocks, n);
        byte[] copies = new byte[chunk * ds];
        byte[] tuples = checks == null ? null : new byte[chunk * 8];
        for (int i = 0; i < chunk; i++) {
            System.arraycopy(block, 0, copies, i * ds, ds);
            if (tuples != null) {
                System.arraycopy(block, ds, tuples, i * 8, 8);
            }
        }
        long firstRef = tuples == null ? 0 : Cdb.u32(block, ds + 4);
        for (long done = 0; done < n; ) {
            int c = (int) Math.min(chunk, n - done);
            long at = lba + done;
            for (int i = 0; counts && i < c; i++) {
                Pdu.putInt(tuples, i * 8 + 4, (int) (firstRef + done + i));
            }
            ScatterList data = ScatterList.of(ByteBuffer.wrap(copies, 0, c * ds).slice());
            ScatterList meta = tuples == null ? null : ScatterList.of(ByteBuffer.wrap(tuples, 0, c * 8).slice());
            Protection p = tuples == null ? device.insertStrip(at) : Protection.pass(checks, f.refTagOf(at), 0, 0);
            Completion r = ScsiLun.await(() -> device.write(at, data, meta, p, false));
            if (!r.isSuccess()) {
                return ScsiResult.of(r, true);
            }
            done += c;
        }
        return ScsiResult.good();
    }

    /** GET LBA STATUS: runs of mapped and deallocated blocks from the CDB's LBA, within one window. */
    ScsiResult lbaStatus(byte[] cdb) {
        long lba = Pdu.getLong(cdb, 2);
        long alloc = Cdb.u32(cdb, 10);
        long count = device.info().blockCount();
        if (lba < 0 || lba >= count) { // an LBA of 2^63 or more is out of range too
            return ScsiResult.lbaOutOfRange();
        }
        int window = Math.max(1, STATUS_WINDOW_BYTES / device.info().format().dataSize());
        int n = (int) Math.min(window, count - lba);
        BitSet unwritten;
        // Read on this thread (the engine's in-process queue runs it inline) into a pooled buffer,
        // given back once the read is over, whether this thread still waits for it or not.
        java.nio.ByteBuffer scratch = dataIn.take(n * device.info().format().dataSize());
        java.util.concurrent.CompletableFuture<BitSet> status = device.unwrittenBlocks(lba, n, r -> {
            java.util.concurrent.CompletableFuture<io.pistore.spi.Completion> f = new java.util.concurrent.CompletableFuture<>();
            device.submitMayCompleteOnCaller(r, f::complete);
            return f;
        }, scratch);
        status.whenComplete((x, t) -> dataIn.give(scratch));
        try {
            unwritten = status.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ScsiResult.check(ScsiResult.HARDWARE_ERROR, 0x44, 0x00);
        } catch (ExecutionException | CompletionException e) {
            Throwable c = e.getCause();
            return c instanceof BlockIoException b ? ScsiResult.of(b.completion(), false)
                    : ScsiResult.check(ScsiResult.HARDWARE_ERROR, 0x44, 0x00);
        }
        java.io.ByteArrayOutputStream runs = new java.io.ByteArrayOutputStream();
        int start = 0;
        while (start < n) {
            boolean deallocated = unwritten.get(start);
            int end = deallocated ? unwritten.nextClearBit(start) : unwritten.nextSetBit(start);
            if (end < 0 || end > n) {
                end = n;
            }
            byte[] d = new byte[16];
            Pdu.putLong(d, 0, lba + start);
            Pdu.putInt(d, 8, end - start);
            d[12] = (byte) (deallocated ? 1 : 0);
            runs.write(d, 0, 16);
            start = end;
        }
        byte[] body = runs.toByteArray();
        byte[] b = new byte[8 + body.length];
        Pdu.putInt(b, 0, 4 + body.length);
        System.arraycopy(body, 0, b, 8, body.length);
        return ScsiResult.cut(b, alloc);
    }

    /**
     * Most blocks of one WRITE SAME: as many as one READ may return (four maximum transfers), so an
     * initiator can read back what it wrote in one command.
     */
    static int maxWriteSameBlocks(int maxTransferBlocks) {
        return maxTransferBlocks * 4;
    }

    /** Deallocates in engine-sized pieces; null when done, else the failure's answer. */
    private ScsiResult deallocate(long lba, long n) {
        for (long done = 0; done < n; ) {
            int c = (int) Math.min(CHUNK, n - done);
            long at = lba + done;
            Completion r = ScsiLun.await(() -> device.deallocate(at, c));
            if (!r.isSuccess()) {
                return ScsiResult.of(r, true);
            }
            done += c;
        }
        return null;
    }

    private static boolean isZero(byte[] b, int len) {
        for (int i = 0; i < len; i++) {
            if (b[i] != 0) {
                return false;
            }
        }
        return true;
    }
}
