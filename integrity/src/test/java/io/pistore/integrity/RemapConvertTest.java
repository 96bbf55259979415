package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** SPDK catalog H (remap, interleaved and DIX, with splits) and guard conversion ip <-> crc16. */
class RemapConvertTest {
    private static final int N = 5;

    static Stream<Arguments> remapCases() {
        List<Arguments> out = new ArrayList<>();
        for (BlockFormat f : new BlockFormat[] {
                BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST),
                BlockFormat.of(4096, 16, GuardType.CRC32C, PiType.TYPE_1, PiLocation.FIRST),
                BlockFormat.of(4096, 128, GuardType.CRC64, PiType.TYPE_1, PiLocation.FIRST),
                BlockFormat.of(4096, 128, GuardType.CRC32C, PiType.TYPE_1, PiLocation.FIRST)}) {
            for (PiLocation loc : PiLocation.values()) {
                for (PiType t : Fx.PROTECTED) {
                    for (boolean complex : new boolean[] {false, true}) {
                        out.add(Arguments.of(f.withLocation(loc).withType(t), complex));
                    }
                }
            }
        }
        return out.stream();
    }

    /** Remap through lists (interleaved: cut as asked; separate: metadata cut the same way). */
    private static PiError remap(PiContext c, Layout l, byte[] blocks, long to, boolean checkOld, boolean complex) {
        BlockFormat f = c.format();
        if (l == Layout.INTERLEAVED) {
            Built b = TestLists.split(blocks, Kind.HEAP, complex ? ScatterGeometryTest.complexCuts(f, N) : new int[0]);
            PiError e = Pi.remapRefTag(c, b.list, N, to, checkOld);
            System.arraycopy(b.bytes(), 0, blocks, 0, blocks.length);
            return e;
        }
        byte[][] dm = Fx.separate(c, blocks, N);
        int t = ReferencePi.tupleOffset(c);
        GuardType g = f.guard();
        int[] cuts = complex ? new int[] {t + 1, f.metadataSize() + t + ReferencePi.refAt(g) + 1,
                2 * f.metadataSize() + t + ReferencePi.appAt(g) + 1, 3 * f.metadataSize() - 1} : new int[0];
        Built m = TestLists.split(dm[1], Kind.DIRECT_OFFSET, cuts);
        PiError e = Pi.remapRefTagSeparate(c, m.list, N, to, checkOld);
        m.assertIntact();
        System.arraycopy(ReferencePi.interleave(c, dm[0], m.bytes(), N), 0, blocks, 0, blocks.length);
        return e;
    }

    @ParameterizedTest(name = "{0} complex={1}")
    @MethodSource("remapCases")
    void remap22To99(BlockFormat f, boolean complex) {
        PiContext c = Fx.ctx(f);
        boolean t3 = f.type() == PiType.TYPE_3;
        for (Layout l : Layout.values()) {
            for (boolean checkOld : new boolean[] {false, true}) {
                byte[] good = Fx.protectedBlocks(c, N, new Random(83));
                // block 1 is escaped and carries a foreign ref tag and a broken guard
                Fx.setApp(c, good, 1, 0xFFFF);
                Fx.setRef(c, good, 1, t3 ? ReferencePi.refAllOnes(f.guard()) : 4242);
                Fx.breakGuard(c, good, 1);
                byte[] b = good.clone();
                assertNull(remap(c, l, b, 99, checkOld, complex), l + " checkOld=" + checkOld);
                byte[] want = good.clone();
                assertNull(ReferencePi.remap(c, want, N, 99, checkOld));
                assertArrayEquals(want, b, l + " checkOld=" + checkOld);
                for (int i = 0; i < N; i++) {
                    if (i == 1) {
                        assertArrayEquals(ReferencePi.tupleOf(c, good, 1), ReferencePi.tupleOf(c, b, 1),
                                "escaped block untouched");
                    } else {
                        assertEquals(t3 ? 99 : 99 + i, Fx.ref(c, b, i), "ref of block " + i);
                    }
                }
                PiContext at99 = c.toBuilder().initialRefTag(99).build();
                assertNull(l.verify(at99, b, N));
                if (!t3) {
                    assertEquals(PiErrorKind.REF_TAG, l.verify(c, b, N).kind());
                }
            }
        }
    }

    @ParameterizedTest(name = "{0} complex={1}")
    @MethodSource("remapCases")
    void remapWithCheckOldStopsAtTheBadBlock(BlockFormat f, boolean complex) {
        PiContext c = Fx.ctx(f);
        boolean t3 = f.type() == PiType.TYPE_3;
        for (Layout l : Layout.values()) {
            byte[] good = Fx.protectedBlocks(c, N, new Random(89));
            Fx.setRef(c, good, 2, 5);
            byte[] b = good.clone();
            PiError e = remap(c, l, b, 99, true, complex);
            byte[] want = good.clone();
            assertEquals(ReferencePi.remap(c, want, N, 99, true), e);
            assertArrayEquals(want, b);
            if (t3) {
                assertNull(e, "Type 3 has no old tag to check");
                for (int i = 0; i < N; i++) {
                    assertEquals(99, Fx.ref(c, b, i));
                }
                continue;
            }
            assertEquals(new PiError(PiErrorKind.REF_TAG, 2, 24, 5), e);
            assertEquals(99, Fx.ref(c, b, 0));
            assertEquals(100, Fx.ref(c, b, 1));
            for (int i = 2; i < N; i++) {
                assertArrayEquals(ReferencePi.tupleOf(c, good, i), ReferencePi.tupleOf(c, b, i),
                        "block " + i + " at or after the failure untouched");
            }
            // without the check every block is rewritten
            byte[] b2 = good.clone();
            assertNull(remap(c, l, b2, 99, false, complex));
            for (int i = 0; i < N; i++) {
                assertEquals(99 + i, Fx.ref(c, b2, i));
            }
        }
    }

    // ------------------------------------------------------------------ convertGuard

    static Stream<Arguments> convertCases() {
        List<Arguments> out = new ArrayList<>();
        for (int[] s : new int[][] {{512, 8}, {4096, 8}, {512, 16}}) {
            for (PiLocation loc : PiLocation.values()) {
                for (PiType t : Fx.PROTECTED) {
                    for (GuardType from : new GuardType[] {GuardType.IP_CHECKSUM, GuardType.CRC16}) {
                        for (Layout l : Layout.values()) {
                            out.add(Arguments.of(BlockFormat.of(s[0], s[1], from, t, loc), l));
                        }
                    }
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("convertCases")
    void convertGuardBetweenIpAndCrc16(BlockFormat f, Layout l) {
        GuardType to = f.guard() == GuardType.CRC16 ? GuardType.IP_CHECKSUM : GuardType.CRC16;
        PiContext from = Fx.ctx(f);
        PiContext into = Fx.ctx(f.withGuard(to));
        byte[] blocks = Fx.protectedBlocks(from, N, new Random(97));
        byte[] want = blocks.clone();
        ReferencePi.generate(into, want, N);
        byte[] b = blocks.clone();
        assertNull(l.convertGuard(from, b, N, to));
        assertArrayEquals(want, b, "converted blocks equal blocks generated under " + to);
        assertNull(l.verify(into, b, N));
        assertEquals(PiErrorKind.GUARD, l.verify(from, b, N).kind(), "old guard no longer valid");
        // and back
        assertNull(l.convertGuard(into, b, N, f.guard()));
        assertArrayEquals(blocks, b);
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("convertCases")
    void convertGuardStopsAtABadOldGuard(BlockFormat f, Layout l) {
        GuardType to = f.guard() == GuardType.CRC16 ? GuardType.IP_CHECKSUM : GuardType.CRC16;
        PiContext from = Fx.ctx(f);
        PiContext into = Fx.ctx(f.withGuard(to));
        byte[] good = Fx.protectedBlocks(from, N, new Random(101));
        Fx.flipData(from, good, 3);
        byte[] b = good.clone();
        PiError e = l.convertGuard(from, b, N, to);
        assertEquals(ReferencePi.verify(from, good, N), e);
        assertEquals(PiErrorKind.GUARD, e.kind());
        assertEquals(3, e.blockIndex());
        byte[] converted = good.clone();
        ReferencePi.generate(into, converted, N);
        for (int i = 0; i < N; i++) {
            byte[] want = ReferencePi.tupleOf(from, i < 3 ? converted : good, i);
            assertArrayEquals(want, ReferencePi.tupleOf(from, b, i), "block " + i);
        }
        // guard check off: converts everything, reports nothing
        PiContext unchecked = from.toBuilder().checks(CheckFlags.of(false, true, true)).build();
        byte[] b2 = good.clone();
        assertNull(l.convertGuard(unchecked, b2, N, to));
        assertArrayEquals(converted, b2);
        // an escaped block with a broken guard converts without error
        byte[] esc = Fx.protectedBlocks(from, N, new Random(103));
        Fx.setApp(from, esc, 2, 0xFFFF);
        Fx.setRef(from, esc, 2, ReferencePi.refAllOnes(f.guard()));
        Fx.breakGuard(from, esc, 2);
        assertNull(l.convertGuard(from, esc, N, to));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("wideGuards")
    void convertGuardNeedsEightByteTuplesWithPi(BlockFormat f, GuardType to) {
        PiContext c = PiContext.of(f);
        byte[] b = new byte[2 * f.blockSize()];
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Pi.convertGuard(c, ScatterList.wrap(b), 2, to));
        assertTrue(e.getMessage().contains("guard conversion works between 8-byte tuples"), e.getMessage());
        assertArrayEquals(new byte[b.length], b);
    }

    static Stream<Arguments> wideGuards() {
        return Stream.of(
                Arguments.of(BlockFormat.of(4096, 16, GuardType.CRC64, PiType.TYPE_1, PiLocation.FIRST), GuardType.CRC32C),
                Arguments.of(BlockFormat.of(4096, 16, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST), GuardType.CRC64),
                Arguments.of(BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_0, PiLocation.FIRST), GuardType.IP_CHECKSUM));
    }
}
