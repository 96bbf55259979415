package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.BlockFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Reads that arrive in one socket read are answered together: their Data-In segments wait in the
 * connection's output by reference until it flushes ({@link PduChannel}), and each read's pooled
 * buffer goes back to the pool only after that. A buffer given back before its segment left would
 * be filled by the next read of the batch, and the first read would carry the second's data.
 */
class IscsiReadBatchTest extends IscsiLoopbackFixture {
    private static final int BLOCKS = 256; // 128 KiB of 512-byte blocks: one Data-In by reference
    private static final int READS = 12;

    @Override
    void createVolumes() throws IOException {
        store.create("big", BlockFormat.of(512, 8), (long) BLOCKS * READS);
    }

    @Test
    void readsAnsweredTogetherEachCarryTheirOwnBlocks() throws IOException {
        try (IscsiTestInitiator c = login("big", "MaxRecvDataSegmentLength", "262144")) {
            Random r = new Random(11);
            byte[][] regions = new byte[READS][BLOCKS * 512];
            for (int i = 0; i < READS; i++) {
                r.nextBytes(regions[i]);
                IscsiTestInitiator.Result w = c.command(cdb10(0x2A, (long) i * BLOCKS, BLOCKS), regions[i], 0,
                        regions[i].length, false);
                assertEquals(GOOD, w.status(), "write of region " + i);
            }
            for (int round = 0; round < 3; round++) {
                c.hold();
                Map<Integer, Integer> regionOf = new HashMap<>();
                for (int k = 0; k < READS; k++) {
                    int i = (k * 5 + round) % READS;
                    regionOf.put(c.submit(cdb10(0x28, (long) i * BLOCKS, BLOCKS), new byte[0], BLOCKS * 512L,
                            false, 0), i);
                }
                c.release();
                Map<Integer, ByteArrayOutputStream> got = new HashMap<>();
                int done = 0;
                while (done < READS) {
                    Pdu p = c.next();
                    assertEquals(Pdu.DATA_IN, p.opcode(), "a read answers with Data-In");
                    int tag = p.i32(16);
                    ByteArrayOutputStream b = got.computeIfAbsent(tag, t -> new ByteArrayOutputStream());
                    assertEquals(b.size(), p.i32(40), "buffer offset");
                    b.write(p.data);
                    if ((p.flags() & 0x01) != 0) {
                        assertEquals(GOOD, p.u8(3));
                        done++;
                    }
                }
                for (Map.Entry<Integer, Integer> e : regionOf.entrySet()) {
                    assertArrayEquals(regions[e.getValue()], got.get(e.getKey()).toByteArray(),
                            "round " + round + ": the read of region " + e.getValue() + " carries its own blocks");
                }
            }
        }
    }
}
