package io.pistore.engine.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.UnwrittenBlock;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.PiDuty;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The target's PI work per request since it reuses a per-thread metadata buffer and builds no
 * builder per request: what one request leaves in the buffer never reaches the next, every check
 * still fires (including the unwritten-block check, which runs even when the transport checks the
 * PI), and threads never share a buffer.
 */
class TargetServicePiTest {
    private static final BlockFormat F8 = BlockFormat.of(4096, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST);

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Runs {@code r}; {@code checked}: a transport takes its check fields on (a read's on the way back). */
    private static Completion run(TargetService t, BlockRequest r, boolean checked) throws Exception {
        PiDuty d = PiDuty.of(r.protection());
        return t.executeNow(r, checked ? d.checkedBy(PiDuty.Hop.WIRE) : d);
    }

    @Test
    void insertWithMetadataLargerThanTheTupleZeroesTheRestEvenAfterARequestLeftBytesInTheBuffer() throws Exception {
        BlockFormat f = BlockFormat.of(4096, 16, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST);
        try (VolumeStore s = VolumeStore.inMemory()) {
            s.create("v", f, 8);
            TargetService t = new TargetService(s);
            // Block 0: written with PRACT=0 and application bytes in the non-tuple metadata.
            byte[] meta0 = new byte[16];
            Arrays.fill(meta0, 8, 16, (byte) 0xA5);
            ScatterList d0 = ScatterList.wrap(random(4096, 1));
            ScatterList m0 = ScatterList.wrap(meta0);
            Pi.generate(PiContext.builder(f).initialRefTag(0).build(), d0, m0, 1);
            assertEquals(Status.SUCCESS, run(t, BlockRequest.write("v", 0, 1, d0, m0,
                    Protection.pass(CheckFlags.ALL, 0, 0, 0), false), false).status());
            // A strip read of block 0 leaves its 0xA5 bytes in this thread's metadata buffer...
            ScatterList out = ScatterList.of(ByteBuffer.allocate(4096));
            assertEquals(Status.SUCCESS, run(t, BlockRequest.read("v", 0, 1, out, null, Protection.insertStrip(0)), false)
                    .status());
            // ...and an insert of block 1 must not store them.
            assertEquals(Status.SUCCESS, run(t, BlockRequest.write("v", 1, 1, ScatterList.wrap(random(4096, 2)), null,
                    Protection.insertStrip(1), false), false).status());
            byte[] stored = new byte[16];
            s.get("v").read(1, 1, ScatterList.of(ByteBuffer.allocate(4096)), ScatterList.wrap(stored));
            assertArrayEquals(new byte[8], Arrays.copyOfRange(stored, 8, 16), "non-tuple metadata of an insert");
        }
    }

    @Test
    void stripReadsReportCorruptionOfWrittenAndUnwrittenBlocksAndTheNextReadIsClean() throws Exception {
        try (VolumeStore s = VolumeStore.inMemory()) {
            s.create("v", F8, 16);
            TargetService t = new TargetService(s);
            Volume v = s.get("v");
            byte[] good = random(4096, 3);
            for (int lba = 0; lba < 4; lba++) {
                assertEquals(Status.SUCCESS, run(t, BlockRequest.write("v", lba, 1, ScatterList.wrap(good), null,
                        Protection.insertStrip(lba), false), false).status());
            }
            // Block 2: a bit flipped at rest, under its written PI.
            byte[] m2 = new byte[8];
            v.read(2, 1, ScatterList.of(ByteBuffer.allocate(4096)), ScatterList.wrap(m2));
            byte[] bad = good.clone();
            bad[100] ^= 4;
            v.write(2, 1, ScatterList.wrap(bad), ScatterList.wrap(m2), false);
            // Block 9: never written, but data reached the media under the unwritten pattern.
            v.write(9, 1, ScatterList.wrap(good), ScatterList.wrap(UnwrittenBlock.metadata(F8)), false);

            for (boolean checked : new boolean[] {false, true}) {
                ScatterList out = ScatterList.of(ByteBuffer.allocateDirect(4096));
                ScatterList meta = checked ? ScatterList.of(ByteBuffer.allocate(8)) : null;
                Completion c2 = run(t, BlockRequest.read("v", 2, 1, out, meta, Protection.insertStrip(2)), checked);
                if (checked) {
                    // The transport checks a read's PI further along (the TCP host, an RDMA MR): the
                    // engine returns it unchecked, with the stored metadata for that check.
                    assertEquals(Status.SUCCESS, c2.status(), c2.toString());
                    assertTrue(Pi.verify(PiContext.builder(F8).initialRefTag(2).build(), out, meta, 1) != null,
                            "the stored PI handed to the transport must fail its check there");
                } else {
                    assertEquals(PiErrorKind.GUARD, c2.piError().kind(), c2.toString());
                }
                // The unwritten-pattern check runs whoever checks the PI: the escape tuple hides it from them.
                Completion c9 = run(t, BlockRequest.read("v", 9, 1, ScatterList.of(ByteBuffer.allocate(4096)), meta,
                        Protection.insertStrip(9)), checked);
                assertEquals(Status.GUARD_CHECK, c9.status(), "checked=" + checked + ": " + c9);
                assertEquals(9, c9.errorLba());
                // A clean block right after, on the same thread's buffer.
                ScatterList ok = ScatterList.of(ByteBuffer.allocate(4096));
                assertEquals(Status.SUCCESS, run(t, BlockRequest.read("v", 3, 1, ok, meta, Protection.insertStrip(3)),
                        checked).status());
                assertArrayEquals(good, ok.toArray());
                // A never-written block with zero data passes.
                assertEquals(Status.SUCCESS, run(t, BlockRequest.read("v", 12, 1, ScatterList.of(ByteBuffer.allocate(4096)),
                        meta, Protection.insertStrip(12)), checked).status());
            }
        }
    }

    @Test
    void aWriteWithBadPiIsRefusedUnlessTheTransportCheckedIt() throws Exception {
        try (VolumeStore s = VolumeStore.inMemory()) {
            s.create("v", F8, 8);
            TargetService t = new TargetService(s);
            ScatterList d = ScatterList.wrap(random(4096, 5));
            ScatterList m = ScatterList.wrap(new byte[8]);
            Pi.generate(PiContext.builder(F8).initialRefTag(4).build(), d, m, 1);
            byte[] wrong = d.toArray();
            wrong[7] ^= 1;
            Completion c = run(t, BlockRequest.write("v", 4, 1, ScatterList.wrap(wrong), m,
                    Protection.pass(CheckFlags.ALL, 4, 0, 0), false), false);
            assertEquals(PiErrorKind.GUARD, c.piError().kind(), c.toString());
            byte[] stored = new byte[4096];
            s.get("v").read(4, 1, ScatterList.wrap(stored), null);
            assertArrayEquals(new byte[4096], stored, "a refused write stores nothing");
            // Type 1: a PI that matches a request whose LBA was changed on the way is still refused,
            // also after a transport checked the PI (the check the transport cannot make).
            Completion moved = run(t, BlockRequest.write("v", 5, 1, d, m, Protection.pass(CheckFlags.ALL, 4, 0, 0), false),
                    true);
            assertEquals(Status.REF_TAG_CHECK, moved.status(), moved.toString());
        }
    }

    @Test
    void threadsNeverShareAMetadataBuffer() throws Exception {
        int threads = 4;
        int perThread = 64;
        try (VolumeStore s = VolumeStore.inMemory()) {
            s.create("v", F8, threads * perThread);
            TargetService t = new TargetService(s);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int k = 0; k < threads; k++) {
                    int me = k;
                    results.add(pool.submit(() -> {
                        Random r = new Random(me);
                        int ok = 0;
                        long[] gen = new long[perThread];
                        for (int i = 0; i < 3000; i++) {
                            int b = r.nextInt(perThread);
                            long lba = (long) me * perThread + b;
                            if (r.nextBoolean()) {
                                gen[b]++;
                                ByteBuffer d = ByteBuffer.allocate(4096);
                                d.putLong(0, lba).putLong(8, gen[b]);
                                Completion c = run(t, BlockRequest.write("v", lba, 1, ScatterList.of(d), null,
                                        Protection.insertStrip(lba), false), false);
                                ok += c.isSuccess() ? 1 : 0;
                            } else {
                                ByteBuffer d = ByteBuffer.allocate(4096);
                                Completion c = run(t, BlockRequest.read("v", lba, 1, ScatterList.of(d), null,
                                        Protection.insertStrip(lba)), false);
                                boolean right = gen[b] == 0 ? d.getLong(0) == 0
                                        : d.getLong(0) == lba && d.getLong(8) == gen[b];
                                ok += c.isSuccess() && right ? 1 : 0;
                            }
                        }
                        return ok;
                    }));
                }
                for (Future<Integer> f : results) {
                    assertEquals(3000, f.get());
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void aSecondTakeBeforeTheReleaseGetsItsOwnBuffer() {
        MetadataScratch m = MetadataScratch.mine();
        ScatterList a = m.take(64);
        ScatterList b = m.take(64);
        assertNotSame(a, b);
        m.release(b);
        m.release(a);
        assertSame(a, m.take(64), "the same length reuses the list");
        m.release(a);
        ScatterList big = m.take(MetadataScratch.KEEP_BYTES + 1);
        assertEquals(MetadataScratch.KEEP_BYTES + 1, big.length());
        m.release(big);
        assertEquals(8, m.take(8).length());
    }
}
