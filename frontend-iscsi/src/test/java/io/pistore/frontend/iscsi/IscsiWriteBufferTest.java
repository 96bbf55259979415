package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A WRITE whose data all comes as immediate data is read from the socket into a pooled direct
 * buffer ({@link DataInPool#placesWrite}), which goes back to the pool once the task is answered or
 * aborted, or at once when no task takes it. Pipelined writes of every size around the threshold
 * each store their own blocks, and once the connection is quiet no buffer is still lent: one never
 * given back, or given back twice (then shared by two transfers), shows in the pool's count. A
 * connection's receive buffer has room for a queue of such writes.
 */
class IscsiWriteBufferTest extends IscsiLoopbackFixture {
    private static final int REGION = 16_384; // blocks of 512 bytes: 8 MiB, past the largest pooled transfer
    private static final int REGIONS = 16;
    private static final int[] SIZES = {16, 31, 32, 64, 256, 512}; // 8 KiB (an array) to 256 KiB, all immediate
    /**
     * Each pooled size, full and one block past it (256 KiB; 1, 2 and 4 MiB of blocks with tuples:
     * 512, 2080, 4160 and 8320 blocks, the last DataInPool.LARGEST), then larger ones in heap arrays.
     */
    private static final int[] LARGER_SIZES = {16, 64, 512, 513, 2048, 2080, 2081, 4160, 4161, 8192, 8320, 8321, 12_000};

    @Override
    void createVolumes() throws IOException {
        store.create("w", BlockFormat.of(512, 8), (long) REGION * REGIONS);
    }

    private IscsiTestInitiator open(String... more) throws IOException {
        String[] keys = {"MaxRecvDataSegmentLength", "262144", "FirstBurstLength", "262144"};
        String[] all = java.util.Arrays.copyOf(keys, keys.length + more.length);
        System.arraycopy(more, 0, all, keys.length, more.length);
        return login("w", all);
    }

    private void awaitNoBufferLent() {
        Eventually.await("every pooled buffer given back", () -> server.dataIn().lent() == 0);
    }

    @Test
    void pipelinedWritesEachStoreTheirOwnBlocks() throws IOException {
        Random r = new Random(23);
        byte[][] stored = new byte[REGIONS][];
        try (IscsiTestInitiator c = open()) {
            for (int round = 0; round < 4; round++) {
                c.hold();
                Map<Integer, Integer> regionOf = new HashMap<>();
                for (int i = 0; i < REGIONS; i++) {
                    int blocks = SIZES[r.nextInt(SIZES.length)];
                    byte[] d = new byte[blocks * 512];
                    r.nextBytes(d);
                    stored[i] = d;
                    byte[] cdb = (i + round) % 2 == 0 ? cdb10(0x2A, (long) i * REGION, blocks)
                            : IscsiProtectionTest.cdb16(0x8A, (long) i * REGION, blocks, 0);
                    regionOf.put(c.submit(cdb, d, d.length, true, 0), i);
                }
                c.release();
                for (int k = 0; k < REGIONS; k++) {
                    Pdu p = c.next();
                    assertEquals(Pdu.SCSI_RESPONSE, p.opcode(), "a write is answered with its status");
                    assertEquals(GOOD, p.u8(3), "the write of region " + regionOf.get(p.i32(16)) + " in round " + round);
                }
                for (int i = 0; i < REGIONS; i++) {
                    IscsiTestInitiator.Result got = c.command(cdb10(0x28, (long) i * REGION, stored[i].length / 512),
                            new byte[0], 0, stored[i].length, true);
                    assertEquals(GOOD, got.status());
                    assertArrayEquals(stored[i], got.dataIn(), "round " + round + ": region " + i + " holds its own write");
                }
            }
        }
        awaitNoBufferLent();
    }

    /**
     * Each connection's receive buffer holds a queue of large writes: eight of 128 KiB in flight
     * must not close the window (the kernel caps the size at net.core.rmem_max).
     */
    @Test
    void eachConnectionCanReceiveAQueueOfLargeWrites() throws IOException {
        Path max = Path.of("/proc/sys/net/core/rmem_max");
        assumeTrue(Files.isReadable(max), "no " + max);
        long want = Math.min(4L << 20, Long.parseLong(Files.readAllLines(max).get(0).trim()));
        try (IscsiTestInitiator c = open()) {
            int got = server.smallestReceiveBuffer();
            assertTrue(got >= want, "SO_RCVBUF " + got + ", want at least " + want);
        }
    }

    /**
     * The data of a write that does not all come with its command (16 KiB first bursts, then R2Ts of
     * at most 64 KiB) goes into the task's pooled buffer too, of each size: Data-Out of 16 KiB or
     * more read into it in place, smaller ones copied; past the largest pooled size (a server allowing
     * 8 MiB transfers), heap arrays.
     * Reads of each size (pooled too) return the blocks.
     */
    @Test
    void writesWhoseDataFollowsInDataOutStoreTheirBlocks() throws IOException {
        Random r = new Random(29);
        int[] immediates = {0, 4096, 16_384};
        serve(options().maxTransferBytes(16 << 20)); // the LUN allows 8 MiB transfers, past the pool's largest (the engine takes at most 8 MiB with tuples)
        try (IscsiTestInitiator c = open("FirstBurstLength", "16384", "MaxBurstLength", "65536")) {
            for (int round = 0; round < 2; round++) {
                byte[][] stored = new byte[REGIONS][];
                for (int i = 0; i < REGIONS; i++) {
                    stored[i] = new byte[LARGER_SIZES[(i + round) % LARGER_SIZES.length] * 512];
                    r.nextBytes(stored[i]);
                    int immediate = Math.min(immediates[(i + round) % immediates.length], stored[i].length);
                    IscsiTestInitiator.Result w = c.command(cdb10(0x2A, (long) i * REGION, stored[i].length / 512),
                            stored[i], immediate, stored[i].length, false);
                    assertEquals(GOOD, w.status(), "round " + round + ", region " + i);
                }
                for (int i = 0; i < REGIONS; i++) {
                    IscsiTestInitiator.Result got = c.command(cdb10(0x28, (long) i * REGION, stored[i].length / 512),
                            new byte[0], 0, stored[i].length, true);
                    assertArrayEquals(stored[i], got.dataIn(), "round " + round + ": region " + i);
                }
            }
        }
        awaitNoBufferLent();
    }

    /**
     * A write waiting for its Data-Out when another session resets the unit is answered TASK ABORTED
     * at once; its buffer goes back only once this connection has dropped it too (its late Data-Out),
     * once: a buffer given back twice leaves the pool's count below zero.
     */
    @Test
    void aWriteAbortedWhileItWaitsForDataGivesItsBufferBackOnce() throws IOException {
        try (IscsiTestInitiator a = loginAs("iqn.2026-12.io.pistore.test:a", "w");
                IscsiTestInitiator b = loginAs("iqn.2026-12.io.pistore.test:b", "w")) {
            byte[] d = new byte[128 * 512];
            int write = b.submit(cdb10(0x2A, 0, 128), new byte[0], d.length, true, IscsiTask.SIMPLE);
            Pdu r2t = b.next();
            assertEquals(Pdu.R2T, r2t.opcode());
            int tmf = a.taskManagement(IscsiTaskSetTest.LOGICAL_UNIT_RESET, Pdu.RESERVED_TAG, 0);
            assertEquals(tmf, a.next().itt());
            Pdu aborted = b.next();
            assertEquals(write, aborted.itt());
            assertEquals(ScsiResult.TASK_ABORTED, aborted.u8(3));
            b.dataOut(write, r2t.i32(20), 0, d); // dropped, its task gone
            int ping = b.ping();
            assertEquals(ping, b.next().itt(), "the connection goes on");
        }
        awaitNoBufferLent();
    }

    @Test
    void aRefusedWriteGivesItsBufferBack() throws IOException {
        try (IscsiTestInitiator c = open()) {
            byte[] d = new byte[64 * 512];
            IscsiTestInitiator.Result beyond = c.command(cdb10(0x2A, (long) REGION * REGIONS - 8, 64), d, d.length,
                    d.length, false);
            assertEquals(CHECK, beyond.status());
            assertEquals(0x2100, beyond.ascq(), "LBA out of range");
            IscsiTestInitiator.Result ok = c.command(cdb10(0x2A, 0, 64), d, d.length, d.length, false);
            assertEquals(GOOD, ok.status(), "the connection goes on");
        }
        awaitNoBufferLent();
    }

    @Test
    void immediateDataWhereNoneWasAgreedEndsTheConnectionAndGivesTheBufferBack() throws IOException {
        try (IscsiTestInitiator c = open("ImmediateData", "No")) {
            byte[] d = new byte[64 * 512];
            assertThrows(IOException.class, () -> c.command(cdb10(0x2A, 0, 64), d, d.length, d.length, false),
                    "a protocol error closes the connection");
        }
        Eventually.await("the connection's end logged", () -> log.stream().anyMatch(l -> l.contains("immediate data of")));
        awaitNoBufferLent();
    }
}
