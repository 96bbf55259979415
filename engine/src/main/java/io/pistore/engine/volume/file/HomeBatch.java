package io.pistore.engine.volume.file;

import java.io.IOException;
import java.util.Arrays;

/**
 * The blocks a checkpoint or recovery writes home, gathered while it scans the journal records it
 * applies and then written in LBA order, the newest version of each block only. Applying records
 * one after the other wrote a block once per record that held it, in the order the requests came
 * (for random writes, all over the files); in LBA order, runs of neighbouring blocks of one record
 * go home with one write each, and the page cache is dirtied front to back.
 *
 * <p>Writing only the newest version of each block leaves the home files as applying every record
 * in order would. Gathering is bounded: every {@link #most} blocks what is gathered is written out
 * and gathering starts again (later records then overwrite earlier ones, as in order).
 */
final class HomeBatch {
    /** Where the gathered blocks go. */
    interface Sink {
        /**
         * Blocks {@code lba} to {@code lba + blocks - 1}, whose data lies back to back in the journal
         * from {@code dataPos} and their metadata from {@code metaPos} (one record's).
         */
        void write(long lba, int blocks, long dataPos, long metaPos) throws IOException;

        /** Blocks {@code lba} to {@code lba + blocks - 1}, zeroed. */
        void zero(long lba, int blocks) throws IOException;
    }

    /** Blocks per write at most, so that a reader's buffer for an unmapped journal stays small. */
    static final int MOST_PER_WRITE = 256;
    private static final int MOST_GATHERED = 1 << 20;

    private final int dataSize;
    private final int metaSize;
    private final Sink sink;
    /** Bits of a sort key below the LBA: the block's place in the gathering order, so equal LBAs sort oldest first. */
    private final int orderBits;
    private final int most;
    private long[] keys = new long[4096];
    private long[] dataPos = new long[4096];
    private long[] metaPos = new long[4096];
    private int count;

    HomeBatch(long blockCount, int dataSize, int metaSize, Sink sink) {
        this.dataSize = dataSize;
        this.metaSize = metaSize;
        this.sink = sink;
        int lbaBits = 64 - Long.numberOfLeadingZeros(Math.max(1, blockCount));
        this.orderBits = Math.max(1, Math.min(20, 63 - lbaBits));
        this.most = Math.min(MOST_GATHERED, 1 << orderBits);
    }

    /** The newest version so far of block {@code lba}: in the journal at these positions, or zeroed ({@code dataPos < 0}). */
    void add(long lba, long dataPos, long metaPos) throws IOException {
        if (count == most) {
            writeOut();
        }
        if (count == keys.length) {
            int n = Math.min(most, count * 2);
            keys = Arrays.copyOf(keys, n);
            this.dataPos = Arrays.copyOf(this.dataPos, n);
            this.metaPos = Arrays.copyOf(this.metaPos, n);
        }
        keys[count] = (lba << orderBits) | count;
        this.dataPos[count] = dataPos;
        this.metaPos[count] = metaPos;
        count++;
    }

    /** Writes what was gathered, in LBA order, the newest version of each block, and starts over. */
    void writeOut() throws IOException {
        long[] sorted = Arrays.copyOf(keys, count);
        Arrays.sort(sorted);
        long mask = (1L << orderBits) - 1;
        long runLba = 0;
        int run = 0;
        long runData = 0;
        long runMeta = 0;
        for (int i = 0; i < sorted.length; i++) {
            long lba = sorted[i] >>> orderBits;
            if (i + 1 < sorted.length && sorted[i + 1] >>> orderBits == lba) {
                continue; // a newer version of the block follows
            }
            int at = (int) (sorted[i] & mask);
            long d = dataPos[at];
            long m = metaPos[at];
            boolean extends_ = run > 0 && run < MOST_PER_WRITE && lba == runLba + run
                    && (d < 0 ? runData < 0
                    : runData >= 0 && d == runData + (long) run * dataSize && m == runMeta + (long) run * metaSize);
            if (extends_) {
                run++;
                continue;
            }
            flush(runLba, run, runData, runMeta);
            runLba = lba;
            run = 1;
            runData = d;
            runMeta = m;
        }
        flush(runLba, run, runData, runMeta);
        count = 0;
    }

    private void flush(long lba, int run, long d, long m) throws IOException {
        if (run == 0) {
            return;
        }
        if (d < 0) {
            sink.zero(lba, run);
        } else {
            sink.write(lba, run, d, m);
        }
    }
}
