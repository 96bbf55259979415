package io.pistore.replication.raft;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ServedVolume;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;

/** Writes of random data to aligned runs of blocks, each block remembered once acknowledged (the tests' model). */
final class AcknowledgedRuns {
    private AcknowledgedRuns() {
    }

    /**
     * {@code n} writes of {@code runBlocks} blocks at random run-aligned LBAs of a volume of {@code blocks},
     * one at a time through {@code s}; each acknowledged block's data put into {@code acked} by LBA.
     */
    static void write(ServedVolume s, Random random, BlockFormat format, long blocks, int runBlocks, int n,
            Map<Long, byte[]> acked) throws Exception {
        int ds = format.dataSize();
        for (int i = 0; i < n; i++) {
            long lba = (long) random.nextInt((int) (blocks / runBlocks)) * runBlocks;
            byte[] d = new byte[runBlocks * ds];
            random.nextBytes(d);
            s.device.writeSync(lba, ByteBuffer.wrap(d));
            for (int b = 0; b < runBlocks; b++) {
                acked.put(lba + b, Arrays.copyOfRange(d, b * ds, (b + 1) * ds));
            }
        }
    }
}
