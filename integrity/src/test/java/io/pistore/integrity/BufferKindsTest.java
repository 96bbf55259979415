package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.pistore.integrity.TestLists.Built;
import io.pistore.integrity.TestLists.Kind;
import io.pistore.integrity.reference.ReferencePi;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Heap, direct and read-only buffers (read-only: verify only), windows at a non-zero position inside
 * larger buffers: results equal the reference, no byte outside a window is written, no caller buffer
 * is moved.
 */
class BufferKindsTest {

    static Stream<Arguments> kindsAndFormats() {
        List<Arguments> out = new ArrayList<>();
        BlockFormat[] fs = {
            BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.LAST),
            BlockFormat.of(512, 16, GuardType.IP_CHECKSUM, PiType.TYPE_2, PiLocation.LAST),
            BlockFormat.of(4096, 16, GuardType.CRC64, PiType.TYPE_1, PiLocation.FIRST),
            BlockFormat.of(4096, 128, GuardType.CRC32C, PiType.TYPE_3, PiLocation.LAST),
        };
        for (Kind k : Kind.values()) {
            for (BlockFormat f : fs) {
                out.add(Arguments.of(k, f));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("kindsAndFormats")
    void generateAndVerifyOnEveryKind(Kind kind, BlockFormat f) {
        PiContext c = Fx.ctx(f);
        GeometryCheck.Case one = new GeometryCheck.Case(c, 3, f.hashCode());
        one.interleaved(kind);
        one.interleaved(kind, ScatterGeometryTest.complexCuts(f, 3));
        one.interleaved(kind, TestLists.randomCuts(new Random(kind.ordinal()), 3 * f.blockSize(), 10));
        one.separate(kind, new int[0], new int[0]);
        one.separate(kind, new int[] {f.dataSize() / 2, f.dataSize() + 1}, new int[] {3, f.metadataSize() + 5});
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("kindsAndFormats")
    void insertStripAndRemapOnEveryKind(Kind kind, BlockFormat f) {
        PiContext c = Fx.ctx(f);
        int n = 3;
        Random r = new Random(41);
        byte[] data = new byte[n * f.dataSize()];
        r.nextBytes(data);
        byte[] want = ReferencePi.insert(c, data, n);
        int[] cuts = ScatterGeometryTest.complexCuts(f, n);
        Built src = TestLists.split(data, kind, f.dataSize() / 3, f.dataSize() + 2);
        if (!kind.readOnly) {
            Built out = TestLists.split(new byte[want.length], kind, cuts);
            Pi.insert(c, src.list, out.list, n);
            assertArrayEquals(want, out.bytes(), "insert");
            out.assertIntact();
            // remap in place
            byte[] remapped = want.clone();
            assertNull(ReferencePi.remap(c, remapped, n, 99, true));
            Built rm = TestLists.split(want, kind, cuts);
            assertNull(Pi.remapRefTag(c, rm.list, n, 99, true));
            assertArrayEquals(remapped, rm.bytes(), "remap");
            rm.assertIntact();
        }
        src.assertIntact();
        // strip reads any kind and writes a writable kind
        Built blocks = TestLists.split(want, kind, cuts);
        Built out = TestLists.split(new byte[data.length], kind.readOnly ? Kind.DIRECT_OFFSET : kind, 700);
        assertNull(Pi.strip(c, blocks.list, out.list, n));
        assertArrayEquals(data, out.bytes(), "strip");
        blocks.assertIntact();
        out.assertIntact();
    }

    /** A list built from buffers whose position is not zero takes exactly their remaining bytes. */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = Kind.class, names = {"HEAP", "DIRECT"})
    void nonZeroPositionWindowIsWhatIsProtected(Kind kind) {
        PiContext c = Fx.ctx(BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST));
        byte[] blocks = Fx.randomBlocks(c, 2, new Random(43));
        byte[] want = blocks.clone();
        ReferencePi.generate(c, want, 2);
        ByteBuffer big = kind.direct ? ByteBuffer.allocateDirect(2000) : ByteBuffer.allocate(2000);
        big.position(100);
        big.put(blocks);
        big.position(100).limit(100 + blocks.length);
        Pi.generate(c, ScatterList.of(big), 2);
        assertEquals(100, big.position());
        assertEquals(100 + blocks.length, big.limit());
        byte[] got = new byte[blocks.length];
        big.get(100, got);
        assertArrayEquals(want, got);
        big.clear();
        for (int i = 0; i < 100; i++) {
            assertEquals(0, big.get(i), "byte " + i + " before the window");
        }
        for (int i = 100 + blocks.length; i < 2000; i++) {
            assertEquals(0, big.get(i), "byte " + i + " after the window");
        }
    }
}
