package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The allocation-free queries and copies of {@link ScatterList} the target and the memory volume
 * use per request ({@code contentEquals}, {@code isZero}, {@code isReadOnly}, {@code read}, {@code
 * write}), against the same question asked of the flat bytes, over random cuts and buffer kinds.
 */
class ScatterListQueryTest {

    @Test
    void contentEqualsAndIsZeroMatchTheFlatBytesForRandomCutsAndRanges() {
        Random r = new Random(11);
        for (int round = 0; round < 400; round++) {
            int n = 1 + r.nextInt(300);
            byte[] content = new byte[n];
            // mostly zeros with a few set bytes, so both answers occur
            for (int i = 0; i < n; i++) {
                content[i] = r.nextInt(8) == 0 ? (byte) (1 + r.nextInt(255)) : 0;
            }
            TestLists.Kind kind = TestLists.Kind.values()[r.nextInt(TestLists.Kind.values().length)];
            TestLists.Built b = TestLists.split(content, kind, TestLists.randomCuts(r, n, 6));
            for (int q = 0; q < 20; q++) {
                int off = r.nextInt(n + 1);
                int len = r.nextInt(n - off + 1);
                boolean zero = true;
                for (int i = off; i < off + len; i++) {
                    zero &= content[i] == 0;
                }
                assertEquals(zero, b.list.isZero(off, len), "isZero [" + off + ", " + (off + len) + ") " + kind);
                byte[] same = Arrays.copyOfRange(content, off, off + len);
                assertTrue(b.list.contentEquals(off, same, 0, len), "equal range " + off + "+" + len);
                if (len > 0) {
                    byte[] other = same.clone();
                    other[r.nextInt(len)] ^= (byte) (1 << r.nextInt(8));
                    assertFalse(b.list.contentEquals(off, other, 0, len), "one bit off at " + off + "+" + len);
                }
            }
            b.assertIntact();
        }
    }

    /**
     * Long runs of zeros (several of the chunks {@code isZero} compares at once) with at most one set
     * byte, anywhere: at a chunk's edge, a cut's edge, the first or last byte of the range.
     */
    @Test
    void isZeroFindsOneSetByteInLongRuns() {
        Random r = new Random(12);
        for (int round = 0; round < 300; round++) {
            int n = 1 + r.nextInt(20_000);
            byte[] content = new byte[n];
            int set = r.nextInt(4) == 0 ? -1 : switch (r.nextInt(4)) {
                case 0 -> Math.max(0, Math.min(n - 1, 4096 * (1 + r.nextInt(4)) + r.nextInt(3) - 1));
                case 1 -> 0;
                case 2 -> n - 1;
                default -> r.nextInt(n);
            };
            if (set >= 0) {
                content[set] = (byte) (1 << r.nextInt(8));
            }
            TestLists.Kind kind = TestLists.Kind.values()[r.nextInt(TestLists.Kind.values().length)];
            TestLists.Built b = TestLists.split(content, kind, TestLists.randomCuts(r, n, 4));
            for (int q = 0; q < 8; q++) {
                int off = q == 0 ? 0 : r.nextInt(n + 1);
                int len = q == 0 ? n : r.nextInt(n - off + 1);
                boolean zero = set < off || set >= off + len;
                assertEquals(zero, b.list.isZero(off, len), "isZero [" + off + ", " + (off + len) + ") set at " + set
                        + " " + kind);
            }
            b.assertIntact();
        }
    }

    /** A writable list of up to 300 random bytes cut at random, and a random range of it. */
    private record RangeCase(byte[] content, TestLists.Kind kind, TestLists.Built b, int off, int len) {
        static RangeCase random(Random r) {
            int n = 1 + r.nextInt(300);
            byte[] content = new byte[n];
            r.nextBytes(content);
            TestLists.Kind kind = TestLists.Kind.writable()[r.nextInt(TestLists.Kind.writable().length)];
            TestLists.Built b = TestLists.split(content, kind, TestLists.randomCuts(r, n, 6));
            int off = r.nextInt(n + 1);
            return new RangeCase(content, kind, b, off, r.nextInt(n - off + 1));
        }
    }

    @Test
    void readAndWriteCopyTheLogicalRangeForRandomCuts() {
        Random r = new Random(12);
        for (int round = 0; round < 300; round++) {
            RangeCase c = RangeCase.random(r);
            byte[] content = c.content();
            TestLists.Kind kind = c.kind();
            TestLists.Built b = c.b();
            int off = c.off();
            int len = c.len();
            byte[] got = new byte[len + 3];
            b.list.read(off, got, 2, len);
            assertTrue(Arrays.equals(content, off, off + len, got, 2, 2 + len), "read " + off + "+" + len);
            byte[] src = new byte[len + 1];
            r.nextBytes(src);
            b.list.write(off, src, 1, len);
            System.arraycopy(src, 1, content, off, len);
            assertTrue(Arrays.equals(content, b.bytes()), "write " + off + "+" + len + " " + kind);
            b.assertIntact();
        }
    }

    @Test
    void readAndWriteWithBuffersCopyTheLogicalRangeAndLeaveTheBufferWindowAlone() {
        Random r = new Random(13);
        for (int round = 0; round < 300; round++) {
            RangeCase c = RangeCase.random(r);
            byte[] content = c.content();
            TestLists.Kind kind = c.kind();
            TestLists.Built b = c.b();
            int off = c.off();
            int len = c.len();
            ByteBuffer got = r.nextBoolean() ? ByteBuffer.allocate(len + 5) : ByteBuffer.allocateDirect(len + 5);
            got.position(1).limit(len + 4); // absolute copies ignore (and keep) the window
            b.list.read(off, got, 3, len);
            assertEquals(1, got.position());
            assertEquals(len + 4, got.limit());
            for (int i = 0; i < len; i++) {
                assertEquals(content[off + i], got.get(3 + i), "read byte " + i + " of " + off + "+" + len + " " + kind);
            }
            ByteBuffer src = r.nextBoolean() ? ByteBuffer.allocate(len + 2) : ByteBuffer.allocateDirect(len + 2);
            byte[] fresh = new byte[len + 2];
            r.nextBytes(fresh);
            src.put(0, fresh);
            src.position(2);
            b.list.write(off, src, 2, len);
            assertEquals(2, src.position());
            System.arraycopy(fresh, 2, content, off, len);
            assertTrue(Arrays.equals(content, b.bytes()), "write " + off + "+" + len + " " + kind);
            b.assertIntact();
        }
        ScatterList l = ScatterList.of(ByteBuffer.allocate(3), ByteBuffer.allocateDirect(5));
        assertThrows(IndexOutOfBoundsException.class, () -> l.read(6, ByteBuffer.allocate(4), 0, 3));
        assertThrows(IndexOutOfBoundsException.class, () -> l.read(0, ByteBuffer.allocate(4), 2, 3));
        assertThrows(IndexOutOfBoundsException.class, () -> l.write(0, ByteBuffer.allocate(4).limit(2), 0, 3));
        assertThrows(java.nio.ReadOnlyBufferException.class,
                () -> ScatterList.of(ByteBuffer.allocate(4).asReadOnlyBuffer()).write(0, ByteBuffer.allocate(1), 0, 1));
    }

    @Test
    void copyBetweenBuffersMovesTheBytesShortOrLongAndLeavesBothWindowsAlone() {
        Random r = new Random(14);
        for (int n : new int[] {0, 1, 8, 31, 32, 33, 4096}) {
            for (boolean direct : new boolean[] {false, true}) {
                byte[] content = new byte[n + 7];
                r.nextBytes(content);
                ByteBuffer from = ByteBuffer.wrap(content).position(3);
                ByteBuffer to = direct ? ByteBuffer.allocateDirect(n + 10) : ByteBuffer.allocate(n + 10);
                to.position(1).limit(n + 9);
                ScatterList.copy(from, 5, to, 2, n);
                assertEquals(3, from.position());
                assertEquals(1, to.position());
                assertEquals(n + 9, to.limit());
                for (int i = 0; i < n; i++) {
                    assertEquals(content[5 + i], to.get(2 + i), n + " bytes, byte " + i);
                }
                assertEquals(0, to.get(0));
                assertEquals(0, to.get(n + 2), "nothing written past the range");
            }
        }
        assertThrows(IndexOutOfBoundsException.class, () -> ScatterList.copy(ByteBuffer.allocate(4), 0,
                ByteBuffer.allocate(4).limit(2), 0, 3), "short copy beyond the target's limit");
        assertThrows(IndexOutOfBoundsException.class, () -> ScatterList.copy(ByteBuffer.allocate(40), 0,
                ByteBuffer.allocate(40).limit(20), 0, 35), "bulk copy beyond the target's limit");
    }

    @Test
    void shortWordCopiesKeepTheByteSequenceWhateverTheBuffersByteOrders() {
        Random r = new Random(15);
        java.nio.ByteOrder[] orders = {java.nio.ByteOrder.BIG_ENDIAN, java.nio.ByteOrder.LITTLE_ENDIAN};
        for (int n : new int[] {8, 16, 24, 12}) {
            for (java.nio.ByteOrder fromOrder : orders) {
                for (java.nio.ByteOrder toOrder : orders) {
                    byte[] content = new byte[n + 3];
                    r.nextBytes(content);
                    ByteBuffer from = ByteBuffer.allocateDirect(n + 3).put(content).clear().order(fromOrder);
                    ByteBuffer to = ByteBuffer.allocate(n + 5).order(toOrder);
                    ScatterList.copy(from, 3, to, 1, n);
                    for (int i = 0; i < n; i++) {
                        assertEquals(content[3 + i], to.get(1 + i), n + " bytes " + fromOrder + " to " + toOrder
                                + ", byte " + i);
                    }
                    assertEquals(0, to.get(0));
                    assertEquals(0, to.get(n + 1), "nothing written past the range");
                }
            }
        }
        assertThrows(IndexOutOfBoundsException.class, () -> ScatterList.copy(ByteBuffer.allocate(16), 0,
                ByteBuffer.allocate(16).limit(12), 8, 8), "a word beyond the target's limit");
        assertThrows(IndexOutOfBoundsException.class, () -> ScatterList.copy(ByteBuffer.allocate(16).limit(12), 8,
                ByteBuffer.allocate(16), 0, 8), "a word beyond the source's limit");
        assertThrows(java.nio.ReadOnlyBufferException.class, () -> ScatterList.copy(ByteBuffer.allocate(8), 0,
                ByteBuffer.allocate(8).asReadOnlyBuffer(), 0, 8));
    }

    @Test
    void readAndWriteOutsideTheListOrArrayAreRejected() {
        ScatterList l = ScatterList.of(ByteBuffer.allocate(3), ByteBuffer.allocateDirect(5));
        assertThrows(IndexOutOfBoundsException.class, () -> l.read(6, new byte[4], 0, 3));
        assertThrows(IndexOutOfBoundsException.class, () -> l.read(0, new byte[4], 2, 3));
        assertThrows(IndexOutOfBoundsException.class, () -> l.write(-1, new byte[4], 0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> l.write(0, new byte[2], 0, 3));
        assertThrows(java.nio.ReadOnlyBufferException.class,
                () -> ScatterList.of(ByteBuffer.allocate(4).asReadOnlyBuffer()).write(0, new byte[1], 0, 1));
    }

    @Test
    void contentEqualsReadsFromTheGivenArrayOffset() {
        ScatterList l = ScatterList.wrap(new byte[] {1, 2, 3, 4});
        assertTrue(l.contentEquals(1, new byte[] {9, 2, 3, 9}, 1, 2));
        assertFalse(l.contentEquals(1, new byte[] {9, 2, 4, 9}, 1, 2));
    }

    @Test
    void rangesOutsideTheListAreRejected() {
        ScatterList l = ScatterList.of(ByteBuffer.allocate(3), ByteBuffer.allocateDirect(5));
        assertThrows(IndexOutOfBoundsException.class, () -> l.isZero(4, 5));
        assertThrows(IndexOutOfBoundsException.class, () -> l.isZero(-1, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> l.contentEquals(7, new byte[2], 0, 2));
        assertThrows(IndexOutOfBoundsException.class, () -> l.contentEquals(0, new byte[2], 1, 2));
        assertTrue(l.isZero(8, 0));
    }

    @Test
    void isReadOnlyWhenAnySegmentIs() {
        ByteBuffer rw = ByteBuffer.allocate(4);
        assertFalse(ScatterList.of(rw, ByteBuffer.allocateDirect(4)).isReadOnly());
        assertTrue(ScatterList.of(rw, ByteBuffer.allocateDirect(4).asReadOnlyBuffer()).isReadOnly());
        assertTrue(ScatterList.of(rw.asReadOnlyBuffer()).isReadOnly());
        assertFalse(ScatterList.of().isReadOnly());
    }
}
