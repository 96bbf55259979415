package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.reference.ReferencePi;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The unwritten-block escape rule against the reference implementation: the pattern's fields written
 * out by hand, every PI check passing over it in Types 1 to 3, and the data check finding exactly the
 * pattern blocks that hold something other than zeros, at their index.
 */
class UnwrittenBlockTest {
    static Stream<BlockFormat> formats() {
        List<BlockFormat> l = new ArrayList<>();
        for (GuardType g : GuardType.values()) {
            int tuple = g.tupleSize();
            for (int md : new int[] {tuple, 64}) {
                for (PiLocation loc : PiLocation.values()) {
                    for (PiType t : new PiType[] {PiType.TYPE_1, PiType.TYPE_2, PiType.TYPE_3}) {
                        l.add(BlockFormat.of(tuple == 8 ? 512 : 4096, md, g, t, loc));
                    }
                }
            }
        }
        l.add(BlockFormat.of(4096, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST));
        return l.stream();
    }

    @ParameterizedTest
    @MethodSource("formats")
    void thePatternIsZerosAroundATupleOfTheZeroGuardAndBothEscapeTags(BlockFormat f) {
        byte[] meta = UnwrittenBlock.metadata(f);
        assertEquals(f.metadataSize(), meta.length);
        GuardType g = f.guard();
        PiContext c = PiContext.builder(f).build();
        int t = ReferencePi.tupleOffset(c);
        byte[] zeroData = new byte[f.dataSize()];
        assertEquals(ReferencePi.guardOf(c, zeroData, 0, meta, 0),
                ReferencePi.getBe(meta, t, ReferencePi.guardBytes(g)), "the guard of zero data");
        assertEquals(0xFFFF, ReferencePi.getBe(meta, t + ReferencePi.appAt(g), 2), "app tag");
        assertEquals(ReferencePi.refAllOnes(g), ReferencePi.getBe(meta, t + ReferencePi.refAt(g), ReferencePi.refBytes(g)),
                "ref tag");
        for (int i = 0; i < meta.length; i++) {
            boolean inTuple = i >= t && i < t + g.tupleSize();
            boolean field = i - t < ReferencePi.guardBytes(g) + 2
                    || (i - t >= ReferencePi.refAt(g) && i - t < ReferencePi.refAt(g) + ReferencePi.refBytes(g));
            if (!inTuple || !field) {
                assertEquals(0, meta[i], "byte " + i + " outside the tuple's fields");
            }
        }
        assertSame(UnwrittenBlock.pattern(f), UnwrittenBlock.pattern(f), "computed once per format");
        assertArrayEquals(meta, UnwrittenBlock.pattern(f));
    }

    @ParameterizedTest
    @MethodSource("formats")
    void everyCheckPassesOverThePatternAtAnyReferenceTag(BlockFormat f) {
        int n = 5;
        byte[] data = new byte[n * f.dataSize()];
        byte[] meta = new byte[n * f.metadataSize()];
        for (int i = 0; i < n; i++) {
            System.arraycopy(UnwrittenBlock.metadata(f), 0, meta, i * f.metadataSize(), f.metadataSize());
        }
        PiContext c = PiContext.builder(f).initialRefTag(12345).appTag(0x1234).checks(CheckFlags.ALL).build();
        assertNull(ReferencePi.verify(c, data, meta, n), "the reference's verify");
        assertNull(Pi.verify(c, ScatterList.wrap(data), ScatterList.wrap(meta), n), "pistore's verify");
    }

    /**
     * The check of one 8-byte tuple per block in one buffer (a long compare per block) answers as the
     * general walk does over the same metadata cut into pieces: random runs of written tuples, the
     * pattern over zeros, the pattern over data that is not zeros, and tuples one byte off the pattern.
     */
    @Test
    void oneBufferOfEightByteTuplesAnswersAsTheWalkOverPieces() {
        Random r = new Random(31);
        for (BlockFormat f : new BlockFormat[] {BlockFormat.of(512, 8), BlockFormat.of(4096, 8),
                BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_3, PiLocation.FIRST)}) {
            byte[] pattern = UnwrittenBlock.metadata(f);
            for (int round = 0; round < 300; round++) {
                int blocks = 1 + r.nextInt(64);
                byte[] data = new byte[blocks * f.dataSize()];
                byte[] meta = new byte[blocks * 8];
                for (int i = 0; i < blocks; i++) {
                    int kind = r.nextInt(4);
                    if (kind == 0) {
                        r.nextBytes(data);
                        java.util.Arrays.fill(data, i * f.dataSize(), (i + 1) * f.dataSize(), (byte) 0);
                    }
                    if (kind <= 1) {
                        System.arraycopy(pattern, 0, meta, i * 8, 8);
                    } else if (kind == 2) {
                        System.arraycopy(pattern, 0, meta, i * 8, 8);
                        meta[i * 8 + r.nextInt(8)] ^= (byte) (1 << r.nextInt(8));
                    } else {
                        byte[] t = new byte[8];
                        r.nextBytes(t);
                        System.arraycopy(t, 0, meta, i * 8, 8);
                    }
                    if (kind == 1 && r.nextInt(3) == 0) {
                        data[i * f.dataSize() + r.nextInt(f.dataSize())] = 1; // the pattern over data that is not zeros
                    }
                }
                java.nio.ByteBuffer single = java.nio.ByteBuffer.wrap(meta);
                int cut = 1 + r.nextInt(meta.length);
                ScatterList pieces = cut == meta.length ? ScatterList.of(single.duplicate())
                        : ScatterList.of(java.nio.ByteBuffer.wrap(meta, 0, cut).slice(),
                                java.nio.ByteBuffer.wrap(meta, cut, meta.length - cut).slice());
                PiError one = UnwrittenBlock.firstDataError(f, ScatterList.wrap(data), ScatterList.of(single), blocks);
                PiError walked = UnwrittenBlock.firstDataError(f, ScatterList.wrap(data), pieces, blocks);
                assertEquals(String.valueOf(walked), String.valueOf(one), f + " round " + round);
            }
        }
    }

    @Test
    void formatsWithoutPiHaveZeroMetadataAndNoDataCheck() {
        BlockFormat f = BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_0, PiLocation.FIRST);
        assertArrayEquals(new byte[8], UnwrittenBlock.metadata(f));
        byte[] data = new byte[512];
        data[7] = 1;
        ScatterList d = ScatterList.wrap(data);
        ScatterList m = ScatterList.wrap(new byte[8]);
        assertEquals(0, UnwrittenBlock.checkData(f, d, m, 1, e -> {
            throw new AssertionError("no PI: nothing to check, got " + e);
        }));
        assertNull(UnwrittenBlock.firstDataError(f, d, m, 1));
    }

    @Test
    void isUnwrittenComparesThePatternAtAnOffset() {
        BlockFormat f = BlockFormat.of(4096, 16, GuardType.CRC32C, PiType.TYPE_1, PiLocation.LAST);
        byte[] p = UnwrittenBlock.metadata(f);
        byte[] meta = new byte[3 * 16];
        System.arraycopy(p, 0, meta, 16, 16);
        assertTrue(UnwrittenBlock.isUnwritten(f, p, meta, 16));
        assertFalse(UnwrittenBlock.isUnwritten(f, p, meta, 0));
        for (int i = 0; i < 16; i++) {
            meta[16 + i] ^= 0x20;
            assertFalse(UnwrittenBlock.isUnwritten(f, p, meta, 16), "byte " + i + " changed");
            meta[16 + i] ^= 0x20;
        }
        assertTrue(UnwrittenBlock.isUnwritten(f, p, meta, 16));
    }

    /**
     * Random runs of written blocks (real PI, data that may be zero), unwritten blocks of zeros and
     * unwritten blocks whose data is not zero: the data check reports exactly the last kind, at their
     * index, as guard errors against the guard of zeros; the first error is the first of them.
     */
    @ParameterizedTest
    @MethodSource("formats")
    void theDataCheckFindsExactlyThePatternBlocksThatAreNotZero(BlockFormat f) {
        Random r = new Random(f.hashCode());
        for (int round = 0; round < 8; round++) {
            int n = 1 + r.nextInt(24);
            int ds = f.dataSize();
            int ms = f.metadataSize();
            byte[] data = new byte[n * ds];
            byte[] meta = new byte[n * ms];
            List<Long> bad = new ArrayList<>();
            int clean = 0;
            PiContext written = PiContext.builder(f).initialRefTag(r.nextInt(1 << 20)).appTag(7).build();
            for (int i = 0; i < n; i++) {
                int kind = r.nextInt(3);
                if (kind == 0) { // written: its own data (zero in some) and real PI
                    if (r.nextBoolean()) {
                        for (int k = 0; k < ds; k++) {
                            data[i * ds + k] = (byte) r.nextInt();
                        }
                    }
                    byte[] d = java.util.Arrays.copyOfRange(data, i * ds, (i + 1) * ds);
                    byte[] m = new byte[ms];
                    ReferencePi.generate(written, d, m, 1);
                    System.arraycopy(m, 0, meta, i * ms, ms);
                } else {
                    System.arraycopy(UnwrittenBlock.metadata(f), 0, meta, i * ms, ms);
                    if (kind == 1) {
                        clean++;
                    } else {
                        data[i * ds + r.nextInt(ds)] = (byte) (1 + r.nextInt(255)); // one non-zero byte
                        bad.add((long) i);
                    }
                }
            }
            List<PiError> found = new ArrayList<>();
            int zeros = UnwrittenBlock.checkData(f, ScatterList.wrap(data), ScatterList.wrap(meta), n, found::add);
            assertEquals(clean, zeros, "pattern blocks holding zeros");
            List<Long> at = new ArrayList<>();
            long zeroGuard = ReferencePi.getBe(UnwrittenBlock.metadata(f), f.tupleOffsetInMetadata(), f.guard().guardSize());
            for (PiError e : found) {
                assertEquals(PiErrorKind.GUARD, e.kind(), e.toString());
                assertTrue(e.expected() == zeroGuard || e.actual() == zeroGuard, "one side is the guard of zeros: " + e);
                assertTrue(e.expected() != e.actual(), e.toString());
                at.add(e.blockIndex());
            }
            assertEquals(bad, at, "the blocks reported");
            PiError first = UnwrittenBlock.firstDataError(f, ScatterList.wrap(data), ScatterList.wrap(meta), n);
            if (bad.isEmpty()) {
                assertNull(first);
            } else {
                assertNotNull(first);
                assertEquals(found.get(0), first);
            }
        }
    }
}
