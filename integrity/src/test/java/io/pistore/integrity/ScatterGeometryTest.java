package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.TestLists.Kind;
import io.pistore.integrity.reference.ReferencePi;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** SPDK catalog B and E: scatter-list geometry, interleaved and separate, against the reference. */
class ScatterGeometryTest {

    static List<BlockFormat> formats() {
        List<BlockFormat> out = new ArrayList<>();
        for (PiLocation l : PiLocation.values()) {
            out.add(BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, l));
            out.add(BlockFormat.of(512, 8, GuardType.IP_CHECKSUM, PiType.TYPE_1, l));
            out.add(BlockFormat.of(512, 16, GuardType.CRC16, PiType.TYPE_1, l));
            out.add(BlockFormat.of(4096, 16, GuardType.CRC32C, PiType.TYPE_1, l));
            out.add(BlockFormat.of(4096, 128, GuardType.CRC64, PiType.TYPE_1, l));
            out.add(BlockFormat.of(4096, 128, GuardType.CRC32C, PiType.TYPE_1, l));
        }
        return out;
    }

    static Stream<BlockFormat> formatStream() {
        return formats().stream();
    }

    static Stream<Arguments> formatsAndChecks() {
        List<Arguments> out = new ArrayList<>();
        for (BlockFormat f : formats()) {
            for (CheckFlags c : Fx.CHECK_SETS) {
                out.add(Arguments.of(f, c));
            }
        }
        return out.stream();
    }

    private static int[] blockCuts(PiContext c, int... blocks) {
        return IntStream.of(blocks).map(b -> b * Fx.bs(c)).toArray();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formatStream")
    void singleSegment(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        GeometryCheck.interleaved(c, 1, Kind.HEAP, 1);
        GeometryCheck.interleaved(c, 4, Kind.HEAP, 2);
        GeometryCheck.separate(c, 4, Kind.HEAP, 3, new int[0], new int[0]);
    }

    /** Four segments of 1, 2, 3 and 4 blocks (10 blocks), for checks none / each / all. */
    @ParameterizedTest(name = "{0} checks={1}")
    @MethodSource("formatsAndChecks")
    void multiSegmentsOf1234Blocks(BlockFormat f, CheckFlags checks) {
        PiContext c = Fx.ctx(f).toBuilder().checks(checks).build();
        GeometryCheck.interleaved(c, 10, Kind.HEAP, 4, blockCuts(c, 1, 3, 6));
        int ds = f.dataSize();
        int ms = f.metadataSize();
        GeometryCheck.separate(c, 10, Kind.HEAP, 5, new int[] {ds, 3 * ds, 6 * ds}, new int[] {ms, 3 * ms, 6 * ms});
        // data and metadata cut at different block counts
        GeometryCheck.separate(c, 10, Kind.HEAP, 6, new int[] {2 * ds, 7 * ds}, new int[] {ms, 5 * ms, 9 * ms});
    }

    /** Every block in two segments: [DATA][META]. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("formatStream")
    void splitDataAndMetadata(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        int n = 4;
        int[] cuts = new int[2 * n];
        for (int i = 0; i < n; i++) {
            cuts[2 * i] = i * f.blockSize() + f.dataSize();
            cuts[2 * i + 1] = (i + 1) * f.blockSize();
        }
        GeometryCheck.interleaved(c, n, Kind.HEAP, 7, cuts);
        int[] mdCuts = IntStream.range(1, n).map(i -> i * f.metadataSize()).toArray();
        int[] dataCuts = IntStream.range(1, n).map(i -> i * f.dataSize()).toArray();
        GeometryCheck.separate(c, n, Kind.HEAP, 8, dataCuts, mdCuts);
    }

    /** Cuts inside the data of every block: at 1, the middle, and the last data byte. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("formatStream")
    void splitInsideData(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        int n = 3;
        List<Integer> cuts = new ArrayList<>();
        List<Integer> dataCuts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            for (int k : new int[] {1, f.dataSize() / 2 + 1, f.dataSize() - 1}) {
                cuts.add(i * f.blockSize() + k);
                dataCuts.add(i * f.dataSize() + k);
            }
        }
        GeometryCheck.interleaved(c, n, Kind.HEAP, 9, cuts.stream().mapToInt(Integer::intValue).toArray());
        GeometryCheck.separate(c, n, Kind.HEAP, 10, dataCuts.stream().mapToInt(Integer::intValue).toArray(),
                new int[0]);
    }

    /**
     * A cut at every byte of the metadata of every block: inside the md prefix (PI last), inside the
     * guard, the app tag and the ref tag ([513][7], [515][5], [518][2] and their 16-byte analogues).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("formatStream")
    void splitAtEveryMetadataByte(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        int n = 3;
        GeometryCheck.Case one = new GeometryCheck.Case(c, n, 100);
        // PI first: every tuple byte and a few after it; PI last: every byte (md prefix, then tuple)
        int upTo = f.location() == PiLocation.FIRST ? Math.min(f.metadataSize(), f.guard().tupleSize() + 3)
                : f.metadataSize();
        for (int k = 0; k < upTo; k++) {
            int[] cuts = new int[n];
            int[] mdCuts = new int[n];
            for (int i = 0; i < n; i++) {
                cuts[i] = i * f.blockSize() + f.dataSize() + k;
                mdCuts[i] = i * f.metadataSize() + k;
            }
            one.interleaved(Kind.HEAP, cuts);
            one.separate(Kind.HEAP, new int[] {f.dataSize() + 3}, mdCuts);
        }
    }

    /** Two cuts inside one tuple at every pair of field boundaries, plus one into the next block. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("formatStream")
    void splitAcrossFieldBoundariesAndIntoTheNextBlock(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        int t = f.dataSize() + ReferencePi.tupleOffset(c);
        GuardType g = f.guard();
        GeometryCheck.Case one = new GeometryCheck.Case(c, 2, 14);
        int[] inTuple = {1, ReferencePi.appAt(g) - 1, ReferencePi.appAt(g) + 1, ReferencePi.refAt(g) + 1,
                ReferencePi.tupleSize(g) - 1};
        for (int a : inTuple) {
            for (int b : inTuple) {
                if (a < b) {
                    one.interleaved(Kind.HEAP, t + a, t + b, f.blockSize() + f.dataSize() / 3);
                }
            }
        }
    }

    /** dif_sec_512_md_8_prchk_7_multi_iovs_complex_splits_test: 9 segments for 2 x 520. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("spdkComplexFormats")
    void spdkComplexSplits(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        int[] lens = {256, 257, 2, 2, 259, 257, 2, 2, 3};
        assertEquals(2 * 520, IntStream.of(lens).sum());
        TestLists.Built b = TestLists.lengths(new byte[1040], Kind.HEAP, lens);
        assertEquals(9, b.segments());
        int[] cuts = new int[lens.length - 1];
        int off = 0;
        for (int i = 0; i < cuts.length; i++) {
            off += lens[i];
            cuts[i] = off;
        }
        GeometryCheck.interleaved(c, 2, Kind.HEAP, 11, cuts);
        // DIX analogue: data [256][256+256][256], metadata [1][2][2][3] (g0|g1+a0|a1+r0|r3:1)
        GeometryCheck.separate(c, 2, Kind.HEAP, 12, new int[] {256, 768},
                new int[] {1, 3, 5, 8, 9, 11, 13});
    }

    static Stream<BlockFormat> spdkComplexFormats() {
        return Stream.of(BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST),
                BlockFormat.of(512, 8, GuardType.IP_CHECKSUM, PiType.TYPE_1, PiLocation.LAST),
                BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_3, PiLocation.LAST));
    }

    /** The same pattern generalised to any format (the 4K variant has 11 segments and more). */
    static int[] complexCuts(BlockFormat f, int n) {
        GuardType g = f.guard();
        int t = f.dataSize() + (f.location() == PiLocation.FIRST ? 0 : f.metadataSize() - g.tupleSize());
        List<Integer> cuts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int base = i * f.blockSize();
            cuts.add(base + f.dataSize() / 2);
            cuts.add(base + t + 1);
            cuts.add(base + t + ReferencePi.appAt(g) + 1);
            cuts.add(base + t + ReferencePi.refAt(g) + 1);
        }
        return cuts.stream().mapToInt(Integer::intValue).toArray();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("formatStream")
    void complexSplitsAnyFormat(BlockFormat f) {
        PiContext c = Fx.ctx(f);
        GeometryCheck.interleaved(c, 3, Kind.HEAP, 13, complexCuts(f, 3));
    }

    /** Random cuts (some at 1-byte distance) over random types and check sets. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void randomSplits(int seed) {
        Random r = new Random(seed);
        List<BlockFormat> fs = formats();
        BlockFormat f = fs.get(r.nextInt(fs.size())).withType(Fx.PROTECTED[r.nextInt(3)]);
        PiContext c = Fx.ctx(f).toBuilder().checks(CheckFlags.fromBits(r.nextInt(8))).build();
        int n = 1 + r.nextInt(5);
        GeometryCheck.interleaved(c, n, Kind.HEAP, seed, TestLists.randomCuts(r, n * f.blockSize(), 16));
        GeometryCheck.separate(c, n, Kind.HEAP, seed, TestLists.randomCuts(r, n * f.dataSize(), 8),
                TestLists.randomCuts(r, n * f.metadataSize(), 12));
    }

    static IntStream seeds() {
        return IntStream.range(0, 30);
    }
}
