package io.pistore.spi.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pistore.spi.PathReport;
import io.pistore.spi.PathState;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The path report's bytes, as docs/PROTOCOL-TCP.md lays them out, and bad input refused in one line. */
class PathReportCodecTest {
    @Test
    void aReportEncodesAsTheSpecificationSaysAndDecodesBack() throws Exception {
        Map<String, PathState> m = new LinkedHashMap<>();
        m.put("rv", PathState.NON_OPTIMIZED);
        m.put("x", PathState.INACCESSIBLE);
        PathReport r = new PathReport(0x0102030405060708L, m);
        byte[] b = PathReportCodec.encode(r, 1 << 20);
        assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 2, 1, 2, 'r', 'v', 2, 1, 'x'}, b);
        PathReport back = PathReportCodec.decode(ByteBuffer.wrap(b));
        assertEquals(r, back);
        assertEquals(PathState.OPTIMIZED.code(), 0);
    }

    @Test
    void badInputIsRefusedWithAReason() {
        assertEquals("path report of 3 bytes (at least 12)", refused(new byte[3]));
        assertEquals("path report with change counter 0", refused(new byte[12]));
        assertEquals("path report of 5 volumes in 3 bytes", refused(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 5,
                0, 1, 'a'}));
        assertEquals("unknown path state 9", refused(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 9, 1, 'a'}));
        assertEquals("path report name of 0 bytes with 1 left", refused(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1,
                0, 0, 'a'}));
        assertEquals("path report names volume a twice", refused(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2,
                0, 1, 'a', 1, 1, 'a'}));
        assertEquals("1 bytes after the path report", refused(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1,
                0, 1, 'a', 7}));
    }

    @Test
    void namesOfSixtyFourBytesTravelAndLongerOnesAreLeftOutOrRefused() throws Exception {
        String longest = "n".repeat(VolumeListCodec.MAX_NAME);
        Map<String, PathState> m = new LinkedHashMap<>();
        m.put(longest, PathState.OPTIMIZED);
        m.put(longest + "x", PathState.OPTIMIZED);
        byte[] b = PathReportCodec.encode(new PathReport(1, m), 1 << 20);
        assertEquals(12 + 2 + VolumeListCodec.MAX_NAME, b.length, "the 65-byte name is left out");
        assertEquals(new PathReport(1, Map.of(longest, PathState.OPTIMIZED)), PathReportCodec.decode(ByteBuffer.wrap(b)));

        byte[] tooLong = new byte[12 + 2 + 65];
        ByteBuffer.wrap(tooLong).putLong(1).putInt(1).put((byte) 0).put((byte) 65);
        assertEquals("path report name of 65 bytes with 65 left", refused(tooLong));
    }

    @Test
    void encodingStopsAtTheLimitWithWholeVolumesOnly() throws Exception {
        Map<String, PathState> m = new LinkedHashMap<>();
        m.put("a", PathState.OPTIMIZED);
        m.put("bb", PathState.NON_OPTIMIZED);
        m.put("c", PathState.INACCESSIBLE);
        // room for the header and "a" exactly; "bb" does not fit, "c" would but no byte is left
        byte[] exact = PathReportCodec.encode(new PathReport(4, m), 12 + 3);
        assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 1, 0, 1, 'a'}, exact);
        // room for one record more: "bb" (4 bytes) still does not fit, "c" (3 bytes) does
        byte[] more = PathReportCodec.encode(new PathReport(4, m), 12 + 3 + 3);
        assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 2, 0, 1, 'a', 2, 1, 'c'}, more);
        assertEquals(PathState.INACCESSIBLE, PathReportCodec.decode(ByteBuffer.wrap(more)).state("c"));
        byte[] none = PathReportCodec.encode(new PathReport(4, m), 0);
        assertArrayEquals(new byte[] {0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0}, none, "the header always");
    }

    @Test
    void aVolumeCutShortAfterTheCountCheckIsRefused() {
        // two volumes in 6 bytes pass the count check; the first takes 4, the second has 2: a code and a
        // length of 1 with nothing left
        assertEquals("path report name of 1 bytes with 0 left", refused(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2,
                0, 2, 'a', 'b', 0, 1}));
        // the first takes 5: one byte left for the second
        assertEquals("path report ends inside volume 1", refused(new byte[] {0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2,
                0, 3, 'a', 'b', 'c', 0}));
    }

    private static String refused(byte[] b) {
        return assertThrows(VolumeListCodec.MalformedListException.class,
                () -> PathReportCodec.decode(ByteBuffer.wrap(b))).getMessage();
    }
}
