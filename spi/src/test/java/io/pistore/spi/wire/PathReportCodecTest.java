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

    private static String refused(byte[] b) {
        return assertThrows(VolumeListCodec.MalformedListException.class,
                () -> PathReportCodec.decode(ByteBuffer.wrap(b))).getMessage();
    }
}
