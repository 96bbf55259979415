package io.pistore.integrity;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Walks the blocks of an interleaved list, or of a data list and a metadata list, and hands them to a
 * {@link RunOp} in runs: the fast path is a run of whole blocks that lie contiguously in one segment
 * (of each list); the split path gathers one block that straddles segments into a scratch buffer,
 * runs the op on it and, if the op writes, scatters the block back (for separate lists, only the
 * metadata: ops never write the data list).
 */
final class BlockWalker {
    /** Longest run handed to an op at once (bounds its scratch arrays). */
    static final int MAX_RUN = 64;

    private BlockWalker() {
    }

    /** An operation over a run of blocks. */
    abstract static class RunOp {
        final boolean writes;

        RunOp(boolean writes) {
            this.writes = writes;
        }

        /**
         * Blocks {@code index .. index+count-1}: data of block k at {@code dOff + k*dStride} in
         * {@code d}, metadata at {@code mOff + k*mStride} in {@code m} (for interleaved lists d == m).
         * Returns false to stop the walk.
         */
        abstract boolean run(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count,
                             long index);
    }

    static void checkLength(String what, ScatterList list, long need) {
        if (list.length() < need) {
            throw new IllegalArgumentException(what + " holds " + list.length() + " bytes, the operation needs "
                    + need);
        }
    }

    /** Walks {@code nblocks} interleaved blocks. Returns the number of blocks visited. */
    static long interleaved(BlockFormat f, ScatterList list, long nblocks, RunOp op) {
        checkLength("the interleaved list", list, nblocks * f.blockSize());
        return oneList(list, f.blockSize(), f.dataSize(), nblocks, op);
    }

    /** Walks {@code nblocks} blocks of separate data and metadata lists. Returns the blocks visited. */
    static long separate(BlockFormat f, ScatterList data, ScatterList meta, long nblocks, RunOp op) {
        final int ds = f.dataSize();
        final int ms = f.metadataSize();
        checkLength("the data list", data, nblocks * ds);
        checkLength("the metadata list", meta, nblocks * ms);
        long dpos = 0;
        long mpos = 0;
        long blk = 0;
        int dseg = 0;
        int mseg = 0;
        byte[] dScratch = null;
        byte[] mScratch = null;
        ByteBuffer dScratchBuf = null;
        ByteBuffer mScratchBuf = null;
        while (blk < nblocks) {
            while (data.start(dseg + 1) <= dpos) {
                dseg++;
            }
            int dLocal = (int) (dpos - data.start(dseg));
            int dWhole = (data.segmentLength(dseg) - dLocal) / ds;
            int mLocal = 0;
            int mWhole;
            if (ms == 0) {
                mWhole = Integer.MAX_VALUE;
            } else {
                while (meta.start(mseg + 1) <= mpos) {
                    mseg++;
                }
                mLocal = (int) (mpos - meta.start(mseg));
                mWhole = (meta.segmentLength(mseg) - mLocal) / ms;
            }
            int count = (int) Math.min(Math.min(Math.min(dWhole, mWhole), nblocks - blk), MAX_RUN);
            ByteBuffer mv = ms == 0 ? null : meta.view(mseg);
            if (count > 0) {
                if (!op.run(data.view(dseg), dLocal, ds, mv, mLocal, ms, count, blk)) {
                    return blk + count;
                }
                blk += count;
                dpos += (long) count * ds;
                mpos += (long) count * ms;
                continue;
            }
            // Split path: gather whichever side is not contiguous.
            ByteBuffer d;
            int dOff;
            if (dWhole > 0) {
                d = data.view(dseg);
                dOff = dLocal;
            } else {
                if (dScratch == null) {
                    dScratch = new byte[ds];
                    dScratchBuf = ByteBuffer.wrap(dScratch).order(ByteOrder.BIG_ENDIAN);
                }
                data.read(dpos, dScratch, 0, ds);
                d = dScratchBuf;
                dOff = 0;
            }
            ByteBuffer m;
            int mOff;
            if (mWhole > 0) {
                m = mv;
                mOff = mLocal;
            } else {
                if (mScratch == null) {
                    mScratch = new byte[ms];
                    mScratchBuf = ByteBuffer.wrap(mScratch).order(ByteOrder.BIG_ENDIAN);
                }
                meta.read(mpos, mScratch, 0, ms);
                m = mScratchBuf;
                mOff = 0;
            }
            boolean go = op.run(d, dOff, ds, m, mOff, ms, 1, blk);
            // Ops on separate lists write metadata only: the data list may be read-only (a DIX insert
            // of the caller's data), so a gathered data block is never scattered back.
            if (op.writes && m == mScratchBuf) {
                meta.write(mpos, mScratch, 0, ms);
            }
            blk++;
            dpos += ds;
            mpos += ms;
            if (!go) {
                return blk;
            }
        }
        return blk;
    }

    /** Walks only the metadata of separate lists, for ops that never touch data (remap). */
    static long metadataOnly(BlockFormat f, ScatterList meta, long nblocks, RunOp op) {
        checkLength("the metadata list", meta, nblocks * f.metadataSize());
        return oneList(meta, f.metadataSize(), 0, nblocks, op);
    }

    /**
     * Walks one list of {@code unit}-byte blocks whose metadata starts {@code dataSize} bytes into each:
     * an interleaved list, or with {@code dataSize} 0 a metadata list alone (the op is then given no
     * data: a null buffer at offset 0, stride 0). Returns the blocks visited.
     */
    private static long oneList(ScatterList list, int unit, int dataSize, long nblocks, RunOp op) {
        final boolean withData = dataSize > 0;
        final int dStride = withData ? unit : 0;
        long pos = 0;
        long blk = 0;
        int seg = 0;
        byte[] scratch = null;
        ByteBuffer scratchBuf = null;
        while (blk < nblocks) {
            while (list.start(seg + 1) <= pos) {
                seg++;
            }
            int local = (int) (pos - list.start(seg));
            int whole = (list.segmentLength(seg) - local) / unit;
            if (whole > 0) {
                int count = (int) Math.min(Math.min(whole, nblocks - blk), MAX_RUN);
                ByteBuffer v = list.view(seg);
                if (!op.run(withData ? v : null, withData ? local : 0, dStride, v, local + dataSize, unit, count, blk)) {
                    return blk + count;
                }
                blk += count;
                pos += (long) count * unit;
            } else {
                if (scratch == null) {
                    scratch = new byte[unit];
                    scratchBuf = ByteBuffer.wrap(scratch).order(ByteOrder.BIG_ENDIAN);
                }
                list.read(pos, scratch, 0, unit);
                boolean go = op.run(withData ? scratchBuf : null, 0, dStride, scratchBuf, dataSize, unit, 1, blk);
                if (op.writes) {
                    list.write(pos, scratch, 0, unit);
                }
                blk++;
                pos += unit;
                if (!go) {
                    return blk;
                }
            }
        }
        return blk;
    }
}
