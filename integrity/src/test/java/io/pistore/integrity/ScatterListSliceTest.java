package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link ScatterList}'s structure: slices against the flat bytes, the segments a list is made of,
 * and the ranges it refuses, with the message a caller sees.
 */
class ScatterListSliceTest {

    /** Segments a slice of [offset, offset+len) touches in a list with the given segment starts. */
    private static int touched(long[] starts, long offset, long len) {
        if (len == 0) {
            return 0;
        }
        int n = 0;
        for (int i = 0; i + 1 < starts.length; i++) {
            if (starts[i] < offset + len && starts[i + 1] > offset) {
                n++;
            }
        }
        return n;
    }

    @Test
    void slicesMatchTheFlatBytesAndShareTheMemory() {
        Random r = new Random(41);
        for (int round = 0; round < 300; round++) {
            byte[] content = new byte[1 + r.nextInt(200)];
            r.nextBytes(content);
            TestLists.Kind kind = TestLists.Kind.writable()[r.nextInt(4)];
            TestLists.Built b = TestLists.split(content, kind, TestLists.randomCuts(r, content.length, 6));
            ScatterList l = b.list;
            long[] starts = new long[l.segmentCount() + 1];
            for (int i = 0; i < l.segmentCount(); i++) {
                starts[i + 1] = starts[i] + l.segment(i).remaining();
            }
            assertEquals(content.length, starts[l.segmentCount()]);
            int off = r.nextInt(content.length + 1);
            int len = r.nextInt(content.length - off + 1);
            ScatterList s = l.slice(off, len);
            assertEquals(len, s.length());
            assertArrayEquals(Arrays.copyOfRange(content, off, off + len), s.toArray(), "round " + round);
            assertEquals(touched(starts, off, len), s.segmentCount(), "round " + round);
            if (len > 0) {
                // a write through the slice lands in the caller's memory at the same logical place
                int at = r.nextInt(len);
                s.write(at, new byte[] {(byte) ~content[off + at]}, 0, 1);
                assertEquals((byte) ~content[off + at], l.toArray()[off + at]);
            }
            b.assertIntact();
        }
    }

    @Test
    void slicesAtTheEdges() {
        ScatterList l = ScatterList.of(ByteBuffer.wrap(new byte[] {1, 2, 3}), ByteBuffer.wrap(new byte[] {4, 5}));
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, l.slice(0, 5).toArray());
        assertArrayEquals(new byte[] {4, 5}, l.slice(3, 2).toArray());
        assertEquals(1, l.slice(3, 2).segmentCount());
        assertArrayEquals(new byte[] {3}, l.slice(2, 1).toArray());
        assertEquals(1, l.slice(2, 1).segmentCount());
        assertArrayEquals(new byte[] {3, 4}, l.slice(2, 2).toArray());
        assertEquals(2, l.slice(2, 2).segmentCount());
        assertEquals(0, l.slice(5, 0).length());
        assertEquals(0, l.slice(0, 0).segmentCount());
        assertEquals("slice [3, 6) of a list of 5 bytes",
                assertThrows(IndexOutOfBoundsException.class, () -> l.slice(3, 3)).getMessage());
        assertEquals("slice [-1, 0) of a list of 5 bytes",
                assertThrows(IndexOutOfBoundsException.class, () -> l.slice(-1, 1)).getMessage());
        assertEquals("slice [2, 1) of a list of 5 bytes",
                assertThrows(IndexOutOfBoundsException.class, () -> l.slice(2, -1)).getMessage());
        assertEquals("slice [6, 6) of a list of 5 bytes",
                assertThrows(IndexOutOfBoundsException.class, () -> l.slice(6, 0)).getMessage());
    }

    @Test
    void emptyBuffersAreNotSegmentsAndSegmentsAreFreshViews() {
        ByteBuffer a = ByteBuffer.allocate(10).order(ByteOrder.LITTLE_ENDIAN);
        a.position(2).limit(6);
        ScatterList l = ScatterList.of(ByteBuffer.allocate(0), a, ByteBuffer.allocateDirect(0),
                ByteBuffer.allocateDirect(3));
        assertEquals(2, l.segmentCount());
        assertEquals(7, l.length());
        assertEquals("ScatterList{2 segments, 7 bytes}", l.toString());
        ByteBuffer s0 = l.segment(0);
        assertEquals(0, s0.position());
        assertEquals(4, s0.limit());
        assertEquals(ByteOrder.BIG_ENDIAN, s0.order());
        s0.putShort(0, (short) 0x0102);
        assertEquals(1, a.get(2), "big-endian, at the window's first byte of the caller's buffer");
        s0.position(3);
        assertEquals(0, l.segment(0).position(), "each call is a fresh view");
        assertEquals(3, l.segment(1).limit());
        assertEquals(0, ScatterList.of(ByteBuffer.allocate(0)).segmentCount());
        assertEquals("ScatterList{0 segments, 0 bytes}", ScatterList.of().toString());
    }

    @Test
    void rangesOutsideTheListNameTheRange() {
        ScatterList l = ScatterList.of(ByteBuffer.allocate(3), ByteBuffer.allocateDirect(5));
        String msg = "range [7, 9) of a list of 8 bytes";
        assertEquals(msg, assertThrows(IndexOutOfBoundsException.class, () -> l.read(7, new byte[2], 0, 2)).getMessage());
        assertEquals(msg, assertThrows(IndexOutOfBoundsException.class, () -> l.write(7, new byte[2], 0, 2)).getMessage());
        assertEquals(msg, assertThrows(IndexOutOfBoundsException.class,
                () -> l.read(7, ByteBuffer.allocate(2), 0, 2)).getMessage());
        assertEquals(msg, assertThrows(IndexOutOfBoundsException.class,
                () -> l.write(7, ByteBuffer.allocate(2), 0, 2)).getMessage());
        assertEquals(msg, assertThrows(IndexOutOfBoundsException.class, () -> l.isZero(7, 2)).getMessage());
        assertEquals(msg, assertThrows(IndexOutOfBoundsException.class,
                () -> l.contentEquals(7, new byte[2], 0, 2)).getMessage());
        assertEquals("range [-1, 1) of a list of 8 bytes",
                assertThrows(IndexOutOfBoundsException.class, () -> l.isZero(-1, 2)).getMessage());
        assertEquals("range [2, 1) of a list of 8 bytes",
                assertThrows(IndexOutOfBoundsException.class, () -> l.isZero(2, -1)).getMessage());
        // the last byte is inside; the whole list is one range
        assertTrue(l.isZero(7, 1));
        assertTrue(l.isZero(0, 8));
        assertTrue(l.contentEquals(0, new byte[8], 0, 8));
    }

    @Test
    void aListLongerThanAnArrayDoesNotBecomeOne() {
        ByteBuffer big = ByteBuffer.allocate(1 << 26);
        ByteBuffer[] views = new ByteBuffer[32];
        Arrays.fill(views, big);
        ScatterList l = ScatterList.of(views);
        assertEquals(1L << 31, l.length());
        IllegalStateException e = assertThrows(IllegalStateException.class, l::toArray);
        assertEquals("scatter list of 2147483648 bytes does not fit an array", e.getMessage());
        assertEquals(0, ScatterList.of().toArray().length);
    }
}
