package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.Fx.Layout;
import io.pistore.integrity.TestLists.Built;
import io.pistore.integrity.TestLists.Kind;
import io.pistore.integrity.reference.ReferencePi;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * SPDK catalog C (and the DIX inject tests of E): error injection per field, PI first / last,
 * interleaved / separate, across segment splits. The reported kind (data surfaces as guard), the block
 * index equals the injection's, and exactly one bit changed, inside the chosen field.
 */
class ErrorInjectionTest {
    private static final int N = 4;

    enum Split { SINGLE, BLOCKS_1234, COMPLEX, RANDOM }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        BlockFormat[] fs = {
            BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST),
            BlockFormat.of(512, 8, GuardType.IP_CHECKSUM, PiType.TYPE_2, PiLocation.FIRST),
            BlockFormat.of(4096, 128, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST),
            BlockFormat.of(4096, 128, GuardType.CRC32C, PiType.TYPE_1, PiLocation.FIRST),
            BlockFormat.of(4096, 128, GuardType.CRC64, PiType.TYPE_2, PiLocation.FIRST),
        };
        for (BlockFormat f : fs) {
            for (PiLocation loc : PiLocation.values()) {
                for (InjectTarget t : InjectTarget.values()) {
                    for (Layout l : Layout.values()) {
                        for (Split s : Split.values()) {
                            out.add(Arguments.of(f.withLocation(loc), t, l, s));
                        }
                    }
                }
            }
        }
        return out.stream();
    }

    private static int[] cuts(Split s, PiContext c, int len, int unit, Random r) {
        switch (s) {
            case SINGLE: return new int[0];
            case BLOCKS_1234: return new int[] {unit, 3 * unit};
            case COMPLEX: return unit == Fx.bs(c) ? ScatterGeometryTest.complexCuts(c.format(), N)
                    : new int[] {unit / 2, unit + 1, 2 * unit + unit / 3};
            default: return TestLists.randomCuts(r, len, 10);
        }
    }

    /** [start, end) of the target field of one block, in the interleaved list or in a separate list. */
    private static int[] field(PiContext c, InjectTarget t, long block, boolean interleaved) {
        BlockFormat f = c.format();
        GuardType g = f.guard();
        if (t == InjectTarget.DATA) {
            int base = (int) block * (interleaved ? f.blockSize() : f.dataSize());
            return new int[] {base, base + f.dataSize()};
        }
        int tuple = (int) block * (interleaved ? f.blockSize() : f.metadataSize())
                + (interleaved ? f.dataSize() : 0) + ReferencePi.tupleOffset(c);
        switch (t) {
            case GUARD: return new int[] {tuple, tuple + ReferencePi.guardBytes(g)};
            case APP_TAG: return new int[] {tuple + ReferencePi.appAt(g), tuple + ReferencePi.appAt(g) + 2};
            default: return new int[] {tuple + ReferencePi.refAt(g), tuple + ReferencePi.refAt(g) + ReferencePi.refBytes(g)};
        }
    }

    private static void assertOneBitFlipped(byte[] before, byte[] after, Pi.Injection inj, int[] field) {
        int changed = 0;
        for (int i = 0; i < before.length; i++) {
            if (before[i] != after[i]) {
                changed++;
                assertEquals(inj.byteOffset(), i, "changed byte is the one reported");
                assertEquals(1 << inj.bit(), (before[i] ^ after[i]) & 0xFF, "exactly the reported bit");
            }
        }
        assertEquals(1, changed, "exactly one byte changed");
        assertTrue(inj.byteOffset() >= field[0] && inj.byteOffset() < field[1],
                "offset " + inj.byteOffset() + " inside the field [" + field[0] + ", " + field[1] + ")");
    }

    private static PiErrorKind expectedKind(InjectTarget t) {
        switch (t) {
            case APP_TAG: return PiErrorKind.APP_TAG;
            case REF_TAG: return PiErrorKind.REF_TAG;
            default: return PiErrorKind.GUARD;
        }
    }

    @ParameterizedTest(name = "{0} {1} {2} {3}")
    @MethodSource("cases")
    void injectedErrorIsFoundAtItsBlock(BlockFormat f, InjectTarget target, Layout l, Split split) {
        PiContext c = PiContext.builder(f).initialRefTag(88).appTag(0x88).build();
        for (int seed = 0; seed < 2; seed++) {
            Random r = new Random(seed * 1000 + target.ordinal());
            byte[] good = Fx.protectedBlocks(c, N, r);
            Pi.Injection inj;
            PiError e;
            if (l == Layout.INTERLEAVED) {
                Built b = TestLists.split(good, Kind.HEAP, cuts(split, c, good.length, Fx.bs(c), r));
                inj = Pi.injectError(c, b.list, N, target, r);
                byte[] after = b.bytes();
                assertOneBitFlipped(good, after, inj, field(c, target, inj.blockIndex(), true));
                e = Pi.verify(c, b.list, N);
                assertEquals(ReferencePi.verify(c, after, N), e);
            } else {
                byte[][] dm = Fx.separate(c, good, N);
                Built d = TestLists.split(dm[0], Kind.HEAP, cuts(split, c, dm[0].length, f.dataSize(), r));
                Built m = TestLists.split(dm[1], Kind.HEAP, cuts(split, c, dm[1].length, f.metadataSize(), r));
                inj = Pi.injectError(c, d.list, m.list, N, target, r);
                boolean inData = target == InjectTarget.DATA;
                assertOneBitFlipped(inData ? dm[0] : dm[1], inData ? d.bytes() : m.bytes(), inj,
                        field(c, target, inj.blockIndex(), false));
                assertArrayEquals(inData ? dm[1] : dm[0], inData ? m.bytes() : d.bytes(), "the other list untouched");
                e = Pi.verify(c, d.list, m.list, N);
                assertEquals(ReferencePi.verify(c, d.bytes(), m.bytes(), N), e);
            }
            assertEquals(target, inj.target());
            assertNotNull(e, inj + " not found");
            assertEquals(expectedKind(target), e.kind(), inj.toString());
            assertEquals(inj.blockIndex(), e.blockIndex(), inj.toString());
        }
    }

    @Test
    void injectionSpreadsOverBlocks() {
        PiContext c = Fx.ctx(BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST));
        boolean[] hit = new boolean[8];
        Random r = new Random(5);
        for (int i = 0; i < 200; i++) {
            byte[] b = Fx.protectedBlocks(c, 8, new Random(i));
            hit[(int) Pi.injectError(c, ScatterList.wrap(b), 8, InjectTarget.DATA, r).blockIndex()] = true;
        }
        for (int i = 0; i < 8; i++) {
            assertTrue(hit[i], "block " + i + " never chosen");
        }
    }

    @Test
    void injectionNeedsPiAndBlocks() {
        BlockFormat t0 = BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_0, PiLocation.FIRST);
        byte[] b = new byte[520];
        assertTrue(assertThrows(IllegalArgumentException.class, () -> Pi.injectError(PiContext.of(t0),
                ScatterList.wrap(b), 1, InjectTarget.GUARD, new Random())).getMessage().contains("without PI"));
        PiContext c = Fx.ctx(t0.withType(PiType.TYPE_1));
        assertThrows(IllegalArgumentException.class,
                () -> Pi.injectError(c, ScatterList.wrap(b), 0, InjectTarget.GUARD, new Random()));
        assertArrayEquals(new byte[520], b);
    }
}
