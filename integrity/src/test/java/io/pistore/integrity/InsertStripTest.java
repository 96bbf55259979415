package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.pistore.integrity.GeometryCheck.Corruption;
import io.pistore.integrity.TestLists.Built;
import io.pistore.integrity.TestLists.Kind;
import io.pistore.integrity.reference.ReferencePi;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** SPDK catalog D: copy insert / strip and the PRACT paths (md == tuple and md > tuple). */
class InsertStripTest {
    private static final int N = 4;

    static Stream<BlockFormat> formats() {
        return Fx.matrixFormats().stream();
    }

    private static byte[] filled(int len, int v) {
        byte[] b = new byte[len];
        Arrays.fill(b, (byte) v);
        return b;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    void insertThenStripRoundTrips(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        Random r = new Random(f.hashCode());
        byte[] data = new byte[N * f.dataSize()];
        r.nextBytes(data);
        byte[] want = ReferencePi.insert(c, data, N);
        int[][] dataCuts = {{}, {f.dataSize(), 3 * f.dataSize()}, {7, f.dataSize() + 1, 3 * f.dataSize() - 2}};
        int[][] outCuts = {{}, {f.blockSize(), 3 * f.blockSize()}, ScatterGeometryTest.complexCuts(f, N)};
        for (int i = 0; i < dataCuts.length; i++) {
            Built src = TestLists.split(data, Kind.HEAP, dataCuts[i]);
            Built out = TestLists.split(filled(want.length, 0xEE), Kind.HEAP_OFFSET, outCuts[i]);
            Pi.insert(c, src.list, out.list, N);
            assertArrayEquals(want, out.bytes(), "insert, geometry " + i);
            assertArrayEquals(data, src.bytes(), "insert changed its input");
            out.assertIntact();
            Built back = TestLists.split(filled(data.length, 0x11), Kind.DIRECT_OFFSET, dataCuts[(i + 1) % 3]);
            assertNull(Pi.strip(c, out.list, back.list, N));
            assertArrayEquals(data, back.bytes(), "strip, geometry " + i);
            back.assertIntact();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formats")
    void stripRefusesBadInputAndLeavesTheOutputUntouched(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        Random r = new Random(f.hashCode() + 1);
        byte[] data = new byte[N * f.dataSize()];
        r.nextBytes(data);
        byte[] good = ReferencePi.insert(c, data, N);
        for (Corruption what : Corruption.values()) {
            byte[] bad = GeometryCheck.corrupt(c, good, 2, what);
            if (bad == null) {
                continue;
            }
            PiError want = ReferencePi.verify(c, bad, N);
            if (want == null) {
                assertEquals(PiType.TYPE_3, f.type(), what + " must fail outside Type 3");
                continue;
            }
            byte[] out = filled(data.length, 0x77);
            Built blocks = TestLists.split(bad, Kind.HEAP, ScatterGeometryTest.complexCuts(f, N));
            assertEquals(want, Pi.strip(c, blocks.list, ScatterList.wrap(out), N), what.toString());
            assertEquals(2, want.blockIndex());
            assertArrayEquals(filled(data.length, 0x77), out, what + ": strip wrote despite the error");
            byte[] ref = filled(data.length, 0x77);
            assertEquals(want, ReferencePi.strip(c, bad, ref, N));
            assertArrayEquals(out, ref);
            // with no checks the same input strips
            PiContext none = c.toBuilder().checks(CheckFlags.NONE).build();
            assertNull(Pi.strip(none, blocks.list, ScatterList.wrap(out), N));
            assertArrayEquals(Fx.separate(c, bad, N)[0], out, "strip without checks copies the data");
        }
    }

    // ------------------------------------------------------------------ PRACT

    static Stream<Arguments> practFormats() {
        return Stream.of(
                Arguments.of(BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST)),
                Arguments.of(BlockFormat.of(512, 8, GuardType.IP_CHECKSUM, PiType.TYPE_3, PiLocation.LAST)),
                Arguments.of(BlockFormat.of(4096, 16, GuardType.CRC64, PiType.TYPE_1, PiLocation.LAST)),
                Arguments.of(BlockFormat.of(4096, 16, GuardType.CRC32C, PiType.TYPE_2, PiLocation.FIRST)),
                Arguments.of(BlockFormat.of(512, 16, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST)),
                Arguments.of(BlockFormat.of(512, 16, GuardType.CRC16, PiType.TYPE_2, PiLocation.LAST)),
                Arguments.of(BlockFormat.of(4096, 64, GuardType.CRC64, PiType.TYPE_1, PiLocation.LAST)),
                Arguments.of(BlockFormat.of(4096, 128, GuardType.CRC32C, PiType.TYPE_3, PiLocation.FIRST)),
                Arguments.of(BlockFormat.of(4096, 128, GuardType.CRC64, PiType.TYPE_2, PiLocation.LAST)));
    }

    /** nvme_pract_sec_4096_md_128_..._complex_splits: source segments that cross block boundaries. */
    private static int[] practSourceCuts(BlockFormat f) {
        if (f.blockSize() == 4224) {
            return new int[] {2048, 2048 + 2176 + 4221, 2048 + 2176 + 4221 + 3 + 4211};
        }
        return new int[] {f.blockSize() / 2, f.blockSize() + f.dataSize() + 1, 3 * f.blockSize() - 3};
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("practFormats")
    void practInsert(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        Random r = new Random(61);
        if (f.metadataSize() == f.tupleSize()) {
            // md == tuple: the source is data only, and this is insert
            byte[] data = new byte[N * f.dataSize()];
            r.nextBytes(data);
            Built dst = TestLists.split(filled(N * f.blockSize(), 0xEE), Kind.HEAP, ScatterGeometryTest.complexCuts(f, N));
            Pi.practInsert(c, TestLists.split(data, Kind.DIRECT, 100, 2000).list, dst.list, N);
            assertArrayEquals(ReferencePi.insert(c, data, N), dst.bytes());
            return;
        }
        // md > tuple: interleaved source with the application's metadata; only the tuple is rewritten,
        // unchecked (the source's tuples are garbage)
        byte[] src = Fx.randomBlocks(c, N, r);
        byte[] want = src.clone();
        ReferencePi.generate(c, want, N);
        Built s = TestLists.split(src, Kind.HEAP, practSourceCuts(f));
        Built dst = TestLists.split(filled(src.length, 0xEE), Kind.DIRECT_OFFSET, ScatterGeometryTest.complexCuts(f, N));
        Pi.practInsert(c, s.list, dst.list, N);
        byte[] got = dst.bytes();
        assertArrayEquals(want, got);
        assertArrayEquals(src, s.bytes(), "the source is not modified");
        dst.assertIntact();
        // the other metadata bytes are the source's
        int t = ReferencePi.tupleOffset(c);
        for (int b = 0; b < N; b++) {
            for (int k = 0; k < f.metadataSize(); k++) {
                if (k < t || k >= t + f.tupleSize()) {
                    int at = b * f.blockSize() + f.dataSize() + k;
                    assertEquals(src[at], got[at], "metadata byte " + k + " of block " + b);
                }
            }
        }
        assertNull(Pi.verify(c, dst.list, N));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("practFormats")
    void practStrip(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        Random r = new Random(67);
        byte[] good = Fx.protectedBlocks(c, N, r);
        boolean exact = f.metadataSize() == f.tupleSize();
        int outLen = exact ? N * f.dataSize() : N * f.blockSize();
        byte[] wantOut = exact ? Fx.separate(c, good, N)[0] : good;
        Built src = TestLists.split(good, Kind.READ_ONLY_HEAP, practSourceCuts(f));
        Built dst = TestLists.split(filled(outLen, 0x33), Kind.HEAP_OFFSET, outLen / 3);
        assertNull(Pi.practStrip(c, src.list, dst.list, N));
        assertArrayEquals(wantOut, dst.bytes(), exact ? "md == tuple: data only" : "md > tuple: blocks whole");
        dst.assertIntact();
        for (Corruption what : List.of(Corruption.DATA, Corruption.GUARD, Corruption.APP)) {
            byte[] bad = GeometryCheck.corrupt(c, good, 3, what);
            Built b = TestLists.split(bad, Kind.HEAP, practSourceCuts(f));
            byte[] out = filled(outLen, 0x44);
            PiError e = Pi.practStrip(c, b.list, ScatterList.wrap(out), N);
            assertNotNull(e, what.toString());
            assertEquals(ReferencePi.verify(c, bad, N), e);
            assertArrayEquals(filled(outLen, 0x44), out, what + ": output written despite the error");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("practFormats")
    void separateInsertIsGenerateIntoTheMetadataList(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        byte[] data = new byte[N * f.dataSize()];
        new Random(71).nextBytes(data);
        // the data list is read-only and cut inside the first block: generate must not write it
        Built mdList = TestLists.split(new byte[N * f.metadataSize()], Kind.HEAP, 3);
        Pi.generate(c, TestLists.split(data, Kind.READ_ONLY_DIRECT, 5, f.dataSize() + 9).list, mdList.list, N);
        byte[] md = mdList.bytes();
        byte[] refMd = new byte[md.length];
        ReferencePi.generate(c, data, refMd, N);
        assertArrayEquals(refMd, md);
        assertArrayEquals(ReferencePi.insert(c, data, N), ReferencePi.interleave(c, data, md, N));
    }
}
