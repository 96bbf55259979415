package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * What {@link BlockWalker} hands its ops, against the flat bytes of the lists: every block once, in
 * order; a run holds only blocks that lie whole in one segment (of each list), at most
 * {@link BlockWalker#MAX_RUN}, and ends only where the next block could not join it; a block cut by
 * a segment boundary comes alone, gathered; what a writing op writes to metadata reaches the list
 * on both paths, and a data list is never written; an op that stops the walk ends it there.
 */
class BlockWalkerRunsTest {
    private static final BlockFormat[] FORMATS = {
        BlockFormat.of(512, 8),
        BlockFormat.of(512, 24, GuardType.CRC16, PiType.TYPE_1, PiLocation.LAST),
        BlockFormat.of(1024, 16, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST),
    };

    /** Segment boundaries of a list, as logical offsets: starts[i] .. starts[i+1]. */
    private static long[] starts(ScatterList l) {
        long[] s = new long[l.segmentCount() + 1];
        for (int i = 0; i < l.segmentCount(); i++) {
            s[i + 1] = s[i] + l.segment(i).remaining();
        }
        return s;
    }

    /** The segment that holds [off, off+len) whole, or -1 when a boundary cuts it. */
    private static int wholeIn(long[] starts, long off, int len) {
        for (int i = 0; i + 1 < starts.length; i++) {
            if (starts[i] <= off && off + len <= starts[i + 1]) {
                return i;
            }
        }
        return -1;
    }

    private record Call(long index, int count, byte[][] data, byte[][] meta) {
    }

    /** Records each call with copies of the bytes it was handed; writes the block index into metadata. */
    private static class Recorder extends BlockWalker.RunOp {
        final List<Call> calls = new ArrayList<>();
        final int ds;
        final int ms;
        final int stopAtCall;

        Recorder(boolean writes, int ds, int ms, int stopAtCall) {
            super(writes);
            this.ds = ds;
            this.ms = ms;
            this.stopAtCall = stopAtCall;
        }

        @Override
        boolean run(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count, long index) {
            byte[][] data = new byte[count][];
            byte[][] meta = new byte[count][];
            for (int k = 0; k < count; k++) {
                if (d != null) {
                    data[k] = new byte[ds];
                    d.get(dOff + k * dStride, data[k]);
                }
                meta[k] = new byte[ms];
                m.get(mOff + k * mStride, meta[k]);
                if (writes) {
                    m.putInt(mOff + k * mStride, (int) (index + k) ^ 0x5EED0000);
                }
            }
            calls.add(new Call(index, count, data, meta));
            return calls.size() != stopAtCall;
        }
    }

    private static byte[] random(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    /**
     * Checks the calls against the layout: blocks in order, each run whole in one segment of each
     * list that has a {@code *Starts}, maximal, and the bytes each call saw.
     */
    private static long checkCalls(List<Call> calls, long nblocks, long[] dStarts, int dStride, int dSize,
                                   byte[] dFlat, long[] mStarts, int mBase, int mStride, int mSize, byte[] mFlat) {
        long next = 0;
        for (Call c : calls) {
            assertEquals(next, c.index(), "blocks come in order, each once");
            assertTrue(c.count() >= 1 && c.count() <= BlockWalker.MAX_RUN, "count " + c.count());
            long b0 = c.index();
            int dSeg = dStarts == null ? 0 : wholeIn(dStarts, b0 * dStride, dSize);
            int mSeg = wholeIn(mStarts, mBase + b0 * mStride, mSize);
            if (c.count() > 1) {
                for (int k = 0; k < c.count(); k++) {
                    long b = b0 + k;
                    if (dStarts != null) {
                        assertEquals(dSeg, wholeIn(dStarts, b * dStride, dSize), "run from " + b0 + ": data of " + b);
                    }
                    assertEquals(mSeg, wholeIn(mStarts, mBase + b * mStride, mSize), "run from " + b0 + ": meta of " + b);
                }
                assertTrue((dStarts == null || dSeg >= 0) && mSeg >= 0, "a run is whole");
            }
            long end = b0 + c.count();
            boolean lastWhole = (dStarts == null || dSeg >= 0) && mSeg >= 0;
            if (lastWhole && end < nblocks && c.count() < BlockWalker.MAX_RUN) {
                boolean joins = (dStarts == null || wholeIn(dStarts, end * dStride, dSize) == dSeg)
                        && wholeIn(mStarts, mBase + end * mStride, mSize) == mSeg;
                assertFalse(joins, "block " + end + " could have joined the run from " + b0);
            }
            for (int k = 0; k < c.count(); k++) {
                long b = b0 + k;
                if (dFlat != null) {
                    assertArrayEquals(Arrays.copyOfRange(dFlat, (int) (b * dStride), (int) (b * dStride) + dSize),
                            c.data()[k], "data of block " + b);
                }
                assertArrayEquals(Arrays.copyOfRange(mFlat, (int) (mBase + b * mStride), (int) (mBase + b * mStride) + mSize),
                        c.meta()[k], "metadata of block " + b);
            }
            next = end;
        }
        return next;
    }

    private static void assertMarked(byte[] flat, int base, int stride, long upTo, int size, byte[] before) {
        ByteBuffer f = ByteBuffer.wrap(flat);
        for (long b = 0; b < upTo; b++) {
            int at = (int) (base + b * stride);
            assertEquals((int) b ^ 0x5EED0000, f.getInt(at), "metadata of block " + b + " written back");
            assertArrayEquals(Arrays.copyOfRange(before, at + 4, at + size), Arrays.copyOfRange(flat, at + 4, at + size),
                    "rest of the metadata of block " + b);
        }
    }

    @Test
    void interleavedRunsFollowTheSegments() {
        Random r = new Random(5);
        for (int round = 0; round < 120; round++) {
            BlockFormat f = FORMATS[r.nextInt(FORMATS.length)];
            int bs = f.blockSize();
            int nblocks = 1 + r.nextInt(r.nextBoolean() ? 6 : 150);
            // a list may hold more than the walk asks for, whole blocks included: they are not handed over
            int extra = r.nextInt(3) == 0 ? r.nextInt(3 * bs) : 0;
            byte[] flat = random(r, nblocks * bs + extra);
            int[] cuts = r.nextInt(4) == 0 ? new int[0] : TestLists.randomCuts(r, flat.length, 8);
            if (r.nextBoolean() && nblocks > 2) {
                cuts = Arrays.copyOf(cuts, cuts.length + 1);
                cuts[cuts.length - 1] = bs * (1 + r.nextInt(nblocks - 1)) + (r.nextBoolean() ? 0 : 1);
            }
            TestLists.Built built = TestLists.split(flat, TestLists.Kind.writable()[r.nextInt(4)], cuts);
            boolean writes = r.nextBoolean();
            int stopAt = r.nextInt(3) == 0 ? 1 + r.nextInt(4) : 0;
            Recorder op = new Recorder(writes, f.dataSize(), f.metadataSize(), stopAt);
            long visited = BlockWalker.interleaved(f, built.list, nblocks, op);
            long[] segs = starts(built.list);
            // a run's blocks lie whole in one segment; the metadata check then sees the same segment
            long seen = checkCalls(op.calls, nblocks, segs, bs, bs, null, segs, f.dataSize(), bs, f.metadataSize(), flat);
            // the data bytes: interleaved calls hand data and metadata in one buffer, checked via the whole block
            for (Call c : op.calls) {
                for (int k = 0; k < c.count(); k++) {
                    long b = c.index() + k;
                    assertArrayEquals(Arrays.copyOfRange(flat, (int) (b * bs), (int) (b * bs) + f.dataSize()),
                            c.data()[k], "round " + round + " data of block " + b);
                }
            }
            assertEquals(seen, visited, "round " + round + ": the walk returns the blocks it handed over");
            if (stopAt == 0 || op.calls.size() < stopAt) {
                assertEquals(nblocks, visited, "round " + round);
            } else {
                assertEquals(stopAt, op.calls.size(), "round " + round + ": no call after the op said stop");
            }
            byte[] after = built.bytes();
            if (writes) {
                assertMarked(after, f.dataSize(), bs, visited, f.metadataSize(), flat);
                for (long b = 0; b < nblocks; b++) {
                    int at = (int) (b * bs);
                    assertArrayEquals(Arrays.copyOfRange(flat, at, at + f.dataSize()),
                            Arrays.copyOfRange(after, at, at + f.dataSize()), "data of block " + b);
                }
                assertArrayEquals(Arrays.copyOfRange(flat, (int) (visited * bs), flat.length),
                        Arrays.copyOfRange(after, (int) (visited * bs), flat.length), "nothing after the walk written");
            } else {
                assertArrayEquals(flat, after, "round " + round + ": a reading op changes nothing");
            }
            built.assertIntact();
        }
    }

    @Test
    void separateRunsFollowTheSegmentsOfBothLists() {
        Random r = new Random(6);
        for (int round = 0; round < 120; round++) {
            BlockFormat f = FORMATS[r.nextInt(FORMATS.length)];
            int ds = f.dataSize();
            int ms = f.metadataSize();
            int nblocks = 1 + r.nextInt(r.nextBoolean() ? 6 : 150);
            byte[] data = random(r, nblocks * ds + (r.nextBoolean() ? 0 : r.nextInt(3 * ds)));
            byte[] meta = random(r, nblocks * ms + (r.nextBoolean() ? 0 : r.nextInt(3 * ms)));
            int[] dCuts = r.nextInt(3) == 0 ? new int[0] : TestLists.randomCuts(r, data.length, 6);
            int[] mCuts = r.nextInt(3) == 0 ? new int[0] : TestLists.randomCuts(r, meta.length, 6);
            // data read-only: a writing op on separate lists writes metadata only
            TestLists.Built d = TestLists.split(data, r.nextBoolean() ? TestLists.Kind.READ_ONLY_HEAP
                    : TestLists.Kind.READ_ONLY_DIRECT, dCuts);
            TestLists.Built m = TestLists.split(meta, TestLists.Kind.writable()[r.nextInt(4)], mCuts);
            boolean writes = r.nextBoolean();
            int stopAt = r.nextInt(3) == 0 ? 1 + r.nextInt(4) : 0;
            Recorder op = new Recorder(writes, ds, ms, stopAt);
            long visited = BlockWalker.separate(f, d.list, m.list, nblocks, op);
            long seen = checkCalls(op.calls, nblocks, starts(d.list), ds, ds, data, starts(m.list), 0, ms, ms, meta);
            assertEquals(seen, visited, "round " + round);
            if (stopAt == 0 || op.calls.size() < stopAt) {
                assertEquals(nblocks, visited, "round " + round);
            } else {
                assertEquals(stopAt, op.calls.size(), "round " + round);
            }
            assertArrayEquals(data, d.bytes());
            byte[] after = m.bytes();
            if (writes) {
                assertMarked(after, 0, ms, visited, ms, meta);
                assertArrayEquals(Arrays.copyOfRange(meta, (int) (visited * ms), meta.length),
                        Arrays.copyOfRange(after, (int) (visited * ms), meta.length));
            } else {
                assertArrayEquals(meta, after, "round " + round);
            }
            d.assertIntact();
            m.assertIntact();
        }
    }

    @Test
    void metadataOnlyRunsFollowTheMetadataSegments() {
        Random r = new Random(7);
        for (int round = 0; round < 120; round++) {
            BlockFormat f = FORMATS[r.nextInt(FORMATS.length)];
            int ms = f.metadataSize();
            int nblocks = 1 + r.nextInt(r.nextBoolean() ? 6 : 150);
            byte[] meta = random(r, nblocks * ms + (r.nextBoolean() ? 0 : r.nextInt(3 * ms)));
            TestLists.Built m = TestLists.split(meta, TestLists.Kind.writable()[r.nextInt(4)],
                    r.nextInt(3) == 0 ? new int[0] : TestLists.randomCuts(r, meta.length, 6));
            boolean writes = r.nextBoolean();
            int stopAt = r.nextInt(3) == 0 ? 1 + r.nextInt(4) : 0;
            List<ByteBuffer> dataSeen = new ArrayList<>();
            Recorder op = new Recorder(writes, 0, ms, stopAt) {
                @Override
                boolean run(ByteBuffer d, int dOff, int dStride, ByteBuffer mm, int mOff, int mStride, int count,
                            long index) {
                    dataSeen.add(d);
                    assertEquals(0, dOff);
                    assertEquals(0, dStride);
                    assertEquals(ms, mStride);
                    return super.run(d, dOff, dStride, mm, mOff, mStride, count, index);
                }
            };
            long visited = BlockWalker.metadataOnly(f, m.list, nblocks, op);
            long seen = checkCalls(op.calls, nblocks, null, 0, 0, null, starts(m.list), 0, ms, ms, meta);
            assertEquals(seen, visited, "round " + round);
            if (stopAt == 0 || op.calls.size() < stopAt) {
                assertEquals(nblocks, visited, "round " + round);
            } else {
                assertEquals(stopAt, op.calls.size(), "round " + round);
            }
            for (ByteBuffer d : dataSeen) {
                assertNull(d, "no data for a metadata-only walk");
            }
            byte[] after = m.bytes();
            if (writes) {
                assertMarked(after, 0, ms, visited, ms, meta);
            } else {
                assertArrayEquals(meta, after);
            }
            m.assertIntact();
        }
    }

    @Test
    void aSeparateWalkWithoutMetadataRunsOverTheData() {
        BlockFormat f = BlockFormat.of(512, 0);
        byte[] data = random(new Random(8), 512 * 100);
        TestLists.Built d = TestLists.split(data, TestLists.Kind.HEAP, 700, 5000);
        List<long[]> calls = new ArrayList<>();
        // Only reading ops walk lists without metadata (every writing op needs PI, so metadata).
        long visited = BlockWalker.separate(f, d.list, ScatterList.of(), 100, new BlockWalker.RunOp(false) {
            @Override
            boolean run(ByteBuffer dd, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count,
                        long index) {
                assertNull(m);
                assertEquals(0, mStride);
                calls.add(new long[] {index, count});
                return true;
            }
        });
        assertEquals(100, visited);
        // 0..1 whole in the first segment, 1 cut at 700, 2..8 before 5000, 9 cut, 10..73 (64), 74..99
        List<String> got = new ArrayList<>();
        for (long[] c : calls) {
            got.add(c[0] + "+" + c[1]);
        }
        assertEquals(List.of("0+1", "1+1", "2+7", "9+1", "10+64", "74+26"), got);
    }

    @Test
    void shortListsAreRefusedBeforeAnyCall() {
        BlockFormat f = BlockFormat.of(512, 8);
        Recorder op = new Recorder(true, 512, 8, 0);
        ScatterList one = ScatterList.wrap(new byte[520]);
        assertEquals("the interleaved list holds 520 bytes, the operation needs 1040",
                assertThrows(IllegalArgumentException.class, () -> BlockWalker.interleaved(f, one, 2, op)).getMessage());
        assertEquals("the data list holds 520 bytes, the operation needs 1024",
                assertThrows(IllegalArgumentException.class,
                        () -> BlockWalker.separate(f, one, ScatterList.wrap(new byte[16]), 2, op)).getMessage());
        assertEquals("the metadata list holds 15 bytes, the operation needs 16",
                assertThrows(IllegalArgumentException.class,
                        () -> BlockWalker.separate(f, ScatterList.wrap(new byte[1024]), ScatterList.wrap(new byte[15]), 2,
                                op)).getMessage());
        assertEquals("the metadata list holds 15 bytes, the operation needs 16",
                assertThrows(IllegalArgumentException.class,
                        () -> BlockWalker.metadataOnly(f, ScatterList.wrap(new byte[15]), 2, op)).getMessage());
        assertTrue(op.calls.isEmpty());
        // exactly enough is enough
        assertEquals(1, BlockWalker.interleaved(f, one, 1, op));
        assertEquals(2, BlockWalker.metadataOnly(f, ScatterList.wrap(new byte[16]), 2, op));
        assertEquals(0, BlockWalker.interleaved(f, ScatterList.of(), 0, op));
    }
}
