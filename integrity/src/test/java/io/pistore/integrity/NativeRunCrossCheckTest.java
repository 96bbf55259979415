package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.integrity.TestLists.Built;
import io.pistore.integrity.TestLists.Kind;
import io.pistore.integrity.internal.GuardAlgorithm;
import io.pistore.integrity.reference.ReferencePi;
import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The native run-level generate / verify ({@code GuardAlgorithm.generateRun / verifyRun}, one JNI
 * call per run of whole blocks) against the pure-Java path in the same JVM, through
 * {@link PiContext.Builder#guardPath}: random formats (every guard with a native kernel, both PI
 * locations, metadata larger than the tuple, Types 1-3), seeds, tags, masks, check flags, long runs
 * of up to 300 blocks with few segment cuts (so most blocks go through the hook), buffer kinds, and
 * random corruption (data, guard, app tag, escapes, ref tags) with verifyAll at random limits.
 * Skipped when the native path is not loaded (the module's pure-Java test pass).
 */
class NativeRunCrossCheckTest {
    static final int ITERATIONS = 300;

    static IntStream seeds() {
        return IntStream.range(0, ITERATIONS);
    }

    private static PiContext nativeCapableContext(Random r) {
        for (;;) {
            PiContext c = RandomCrossCheckTest.randomContext(r);
            if (c.format().hasPi() && c.format().guard().hasNativePath()) {
                return c;
            }
        }
    }

    /** Heavier damage than RandomCrossCheckTest's: up to 12 hits over long runs. */
    private static void corrupt(PiContext c, byte[] b, int n, Random r) {
        int hits = r.nextInt(4) == 0 ? 0 : 1 + r.nextInt(12);
        for (int i = 0; i < hits; i++) {
            int block = r.nextInt(n);
            switch (r.nextInt(6)) {
                case 0: Fx.setApp(c, b, block, r.nextBoolean() ? 0xFFFF : r.nextInt(0x10000)); break;
                case 1: Fx.setRef(c, b, block, r.nextBoolean() ? ReferencePi.refAllOnes(c.format().guard())
                        : Fx.ref(c, b, block) + 1); break;
                case 2: Fx.breakGuard(c, b, block); break;
                case 3: Fx.flipData(c, b, block); break;
                case 4: b[block * c.format().blockSize() + r.nextInt(c.format().blockSize())] ^= 0x40; break;
                default: Fx.setApp(c, b, block, 0xFFFF); Fx.setRef(c, b, block,
                        ReferencePi.refAllOnes(c.format().guard())); break;
            }
        }
    }

    private static Kind kind(Random r, boolean writable) {
        Kind[] k = writable ? Kind.writable() : Kind.values();
        return k[r.nextInt(k.length)];
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void nativeRunsAgreeWithJava(int seed) {
        assumeTrue(GuardPath.isNative(), () -> "native path unavailable: " + GuardPath.unavailabilityCause());
        Random r = new Random(0xC0FFEE00L + seed);
        PiContext c = nativeCapableContext(r);
        PiContext nat = c.toBuilder().guardPath(GuardPath.Use.NATIVE).build();
        PiContext jav = c.toBuilder().guardPath(GuardPath.Use.JAVA).build();
        BlockFormat f = c.format();
        int n = 2 + r.nextInt(r.nextBoolean() ? 20 : 300);
        boolean separate = r.nextBoolean();
        String where = c + " n=" + n + (separate ? " separate" : " interleaved");
        byte[] raw = Fx.randomBlocks(c, n, r);
        int cuts = r.nextInt(4);

        // generate: same bytes on both paths, and the reference's
        byte[] want = raw.clone();
        ReferencePi.generate(c, want, n);
        byte[] gotNative;
        byte[] gotJava;
        if (separate) {
            byte[][] dm = Fx.separate(c, raw, n);
            Kind dk = kind(r, false);
            Kind mk = kind(r, true);
            int[] dc = TestLists.randomCuts(r, dm[0].length, cuts);
            int[] mc = TestLists.randomCuts(r, dm[1].length, cuts);
            Built dn = TestLists.split(dm[0], dk, dc);
            Built mn = TestLists.split(dm[1], mk, mc);
            Built dj = TestLists.split(dm[0], dk, dc);
            Built mj = TestLists.split(dm[1], mk, mc);
            Pi.generate(nat, dn.list, mn.list, n);
            Pi.generate(jav, dj.list, mj.list, n);
            dn.assertIntact();
            mn.assertIntact();
            assertArrayEquals(dm[0], dn.bytes(), "native generate wrote the data list " + where);
            gotNative = ReferencePi.interleave(c, dn.bytes(), mn.bytes(), n);
            gotJava = ReferencePi.interleave(c, dj.bytes(), mj.bytes(), n);
        } else {
            Kind k = kind(r, true);
            int[] cc = TestLists.randomCuts(r, raw.length, cuts);
            Built bn = TestLists.split(raw, k, cc);
            Built bj = TestLists.split(raw, k, cc);
            Pi.generate(nat, bn.list, n);
            Pi.generate(jav, bj.list, n);
            bn.assertIntact();
            gotNative = bn.bytes();
            gotJava = bj.bytes();
        }
        assertArrayEquals(gotJava, gotNative, "native vs java generate " + where);
        assertArrayEquals(want, gotNative, "native generate vs reference " + where);

        // verify / verifyAll after corruption: same errors, in the same order
        byte[] bad = want.clone();
        corrupt(c, bad, n, r);
        int max = 1 + r.nextInt(n + 1);
        Kind k = kind(r, false);
        List<PiError> all;
        PiError first;
        if (separate) {
            byte[][] dm = Fx.separate(c, bad, n);
            Built d = TestLists.split(dm[0], k, TestLists.randomCuts(r, dm[0].length, cuts));
            Built m = TestLists.split(dm[1], k, TestLists.randomCuts(r, dm[1].length, cuts));
            all = Pi.verifyAll(nat, d.list, m.list, n, max);
            first = Pi.verify(nat, d.list, m.list, n);
            assertEquals(Pi.verifyAll(jav, d.list, m.list, n, max), all, "verifyAll native vs java " + where);
            assertEquals(Pi.verify(jav, d.list, m.list, n), first, "verify native vs java " + where);
        } else {
            Built b = TestLists.split(bad, k, TestLists.randomCuts(r, bad.length, cuts));
            all = Pi.verifyAll(nat, b.list, n, max);
            first = Pi.verify(nat, b.list, n);
            assertEquals(Pi.verifyAll(jav, b.list, n, max), all, "verifyAll native vs java " + where);
            assertEquals(Pi.verify(jav, b.list, n), first, "verify native vs java " + where);
        }
        assertEquals(ReferencePi.verifyAll(c, bad, n, max), all, "verifyAll native vs reference " + where);
        assertEquals(ReferencePi.verify(c, bad, n), first, "verify native vs reference " + where);
    }

    /** The hook is really taken for heap and direct buffers, and returns the right answers. */
    @Test
    void hookIsTakenOnTheNativePath() {
        assumeTrue(GuardPath.isNative());
        for (GuardType g : GuardType.values()) {
            if (!g.hasNativePath()) {
                continue;
            }
            BlockFormat f = BlockFormat.of(4096, g.tupleSize(), g, PiType.TYPE_1, PiLocation.FIRST);
            GuardAlgorithm a = g.algorithm(GuardPath.Use.NATIVE);
            for (boolean direct : new boolean[] {false, true}) {
                int n = 5;
                ByteBuffer b = direct ? ByteBuffer.allocateDirect(n * f.blockSize()) : ByteBuffer.allocate(n * f.blockSize());
                assertTrue(a.generateRun(b, 0, f.blockSize(), b, f.dataSize(), f.blockSize(), n, f.dataSize(), 0, 0, 0,
                        0x1234, 7, g.refTagMask(), false), g + " direct=" + direct);
                long[] res = new long[3];
                int all = GuardAlgorithm.CHECK_GUARD | GuardAlgorithm.CHECK_APP | GuardAlgorithm.CHECK_REF;
                assertEquals(n, a.verifyRun(b, 0, f.blockSize(), b, f.dataSize(), f.blockSize(), n, f.dataSize(), 0, 0,
                        0, all, 0x1234, 0xFFFF, 7, g.refTagMask(), false, res));
                assertEquals(0, a.verifyRun(b, 0, f.blockSize(), b, f.dataSize(), f.blockSize(), n, f.dataSize(), 0, 0,
                        0, all, 0x1234, 0xFFFF, 5, g.refTagMask(), false, res));
                assertArrayEquals(new long[] {GuardAlgorithm.KIND_REF, 5, 7}, res);
                b.put(2 * f.blockSize() + 100, (byte) 1);
                assertEquals(2, a.verifyRun(b, 0, f.blockSize(), b, f.dataSize(), f.blockSize(), n, f.dataSize(), 0, 0,
                        0, all, 0x1234, 0xFFFF, 7, g.refTagMask(), false, res));
                assertEquals(GuardAlgorithm.KIND_GUARD, res[0]);
            }
        }
    }

    /** Bad geometry throws before C; a read-only metadata list is refused as by the Java path. */
    @Test
    void badInputNeverReachesC() {
        assumeTrue(GuardPath.isNative());
        GuardAlgorithm a = GuardType.CRC16.algorithm(GuardPath.Use.NATIVE);
        ByteBuffer b = ByteBuffer.allocateDirect(2 * 520);
        long[] res = new long[3];
        assertThrows(IndexOutOfBoundsException.class, () -> a.generateRun(b, 0, 520, b, 512, 520, 3, 512, 0, 0, 0, 0,
                0, 0xFFFFFFFFL, false));
        assertThrows(IndexOutOfBoundsException.class, () -> a.generateRun(b, -1, 520, b, 512, 520, 2, 512, 0, 0, 0, 0,
                0, 0xFFFFFFFFL, false));
        assertThrows(IndexOutOfBoundsException.class, () -> a.verifyRun(b, 0, 520, b, 513, 520, 2, 512, 0, 0, 0, 7, 0,
                0xFFFF, 0, 0xFFFFFFFFL, false, res));
        assertThrows(IllegalArgumentException.class, () -> a.verifyRun(b, 0, 520, b, 512, 520, 2, 512, 0, 0, 0, 7, 0,
                0xFFFF, 0, 0xFFFFFFFFL, false, new long[2]));
        assertThrows(IndexOutOfBoundsException.class, () -> a.generateRun(b, 0, 520, b, 512, 520, 0, 512, 0, 0, 0, 0,
                0, 0xFFFFFFFFL, false));
        ByteBuffer ro = b.asReadOnlyBuffer();
        assertEquals(false, a.generateRun(b, 0, 520, ro, 512, 520, 2, 512, 0, 0, 0, 0, 0, 0xFFFFFFFFL, false));
        BlockFormat f = BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST);
        PiContext nat = PiContext.builder(f).guardPath(GuardPath.Use.NATIVE).build();
        PiContext jav = PiContext.builder(f).guardPath(GuardPath.Use.JAVA).build();
        ScatterList data = ScatterList.of(ByteBuffer.allocateDirect(4 * 512));
        assertThrows(ReadOnlyBufferException.class, () -> Pi.generate(nat, data,
                ScatterList.of(ByteBuffer.allocateDirect(32).asReadOnlyBuffer()), 4));
        assertThrows(ReadOnlyBufferException.class, () -> Pi.generate(jav, data,
                ScatterList.of(ByteBuffer.allocateDirect(32).asReadOnlyBuffer()), 4));
    }

    @Test
    void nativeIsRefusedWhereThereIsNone() {
        BlockFormat ip = BlockFormat.of(512, 8, GuardType.IP_CHECKSUM, PiType.TYPE_1, PiLocation.FIRST);
        assertThrows(IllegalArgumentException.class,
                () -> PiContext.builder(ip).guardPath(GuardPath.Use.NATIVE).build());
        assertEquals(GuardPath.Use.JAVA, PiContext.builder(ip).guardPath(GuardPath.Use.JAVA).build().guardPath());
    }
}
