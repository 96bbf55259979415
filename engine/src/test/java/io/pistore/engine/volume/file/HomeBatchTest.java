package io.pistore.engine.volume.file;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class HomeBatchTest {
    private static final int DS = 512;
    private static final int MS = 8;

    /** What the sink got, one line per call. */
    private static final class Calls implements HomeBatch.Sink {
        final List<String> got = new ArrayList<>();

        @Override
        public void write(long lba, int blocks, long dataPos, long metaPos) {
            got.add("write " + lba + "+" + blocks + " @" + dataPos + "/" + metaPos);
        }

        @Override
        public void zero(long lba, int blocks) {
            got.add("zero " + lba + "+" + blocks);
        }
    }

    @Test
    void writesTheNewestVersionOfEachBlockInLbaOrderWithNeighboursOfOneRecordTogether() throws IOException {
        Calls c = new Calls();
        HomeBatch b = new HomeBatch(1000, DS, MS, c);
        // A record of blocks 10..12 at 1000 (metadata after its data), then block 11 again at 5000,
        // then a zeroing of 3..4, then block 2 at 9000.
        for (int i = 0; i < 3; i++) {
            b.add(10 + i, 1000 + i * DS, 1000 + 3 * DS + i * MS);
        }
        b.add(11, 5000, 5000 + DS);
        b.add(3, -1, -1);
        b.add(4, -1, -1);
        b.add(2, 9000, 9000 + DS);
        b.writeOut();
        assertEquals(List.of("write 2+1 @9000/9512", "zero 3+2", "write 10+1 @1000/2536", "write 11+1 @5000/5512",
                "write 12+1 @2024/2552"), c.got);
        c.got.clear();
        b.writeOut(); // nothing gathered since
        assertEquals(List.of(), c.got);
    }

    /**
     * For a volume of 2^60 blocks only 4 blocks fit under a sort key beside the LBA, so gathering
     * writes out every 4 blocks: the result must still be the newest version of each block.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(longs = {64, 1L << 60})
    void theSameBlocksAppliedInOrderOrGatheredEndTheSame(long blockCount) throws IOException {
        // A model: each block's final position after applying random single-block versions in order.
        Random r = new Random(7);
        long[] want = new long[64];
        java.util.Arrays.fill(want, Long.MIN_VALUE);
        long[] got = want.clone();
        HomeBatch b = new HomeBatch(blockCount, DS, MS, new HomeBatch.Sink() {
            @Override
            public void write(long lba, int blocks, long dataPos, long metaPos) {
                for (int i = 0; i < blocks; i++) {
                    got[(int) lba + i] = dataPos + (long) i * DS;
                }
            }

            @Override
            public void zero(long lba, int blocks) {
                for (int i = 0; i < blocks; i++) {
                    got[(int) lba + i] = -1;
                }
            }
        });
        long pos = 0;
        for (int k = 0; k < 5000; k++) {
            int lba = r.nextInt(64);
            int n = 1 + r.nextInt(Math.min(8, 64 - lba));
            boolean zero = r.nextInt(5) == 0;
            for (int i = 0; i < n; i++) {
                long d = zero ? -1 : pos + (long) i * DS;
                b.add(lba + i, d, zero ? -1 : pos + (long) n * DS + (long) i * MS);
                want[lba + i] = d;
            }
            pos += 40 + (long) n * (DS + MS);
        }
        b.writeOut();
        for (int i = 0; i < 64; i++) {
            assertEquals(want[i], got[i], "block " + i);
        }
    }
}
