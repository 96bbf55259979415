package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.integrity.reference.ReferencePi;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Run-level CRC-16 PI on the library's own kernel against the pure-Java path in the same JVM:
 * generate writes the same bytes (and the reference's), verify passes, and one flipped data bit
 * gives the same error on both paths; formats 512+8, 4096+8 and CRC-16 with a guarded metadata
 * prefix (PI last in 16 and 64 bytes), interleaved and separate layouts, heap and direct buffers.
 */
class Crc16RunCrossCheckTest {

    private static ScatterList list(byte[] b, boolean direct) {
        ByteBuffer buf = direct ? ByteBuffer.allocateDirect(b.length) : ByteBuffer.allocate(b.length);
        buf.put(b).clear();
        return ScatterList.of(buf);
    }

    private static byte[] bytes(ScatterList l, int len) {
        byte[] out = l.toArray();
        assertEquals(len, out.length);
        return out;
    }

    @Test
    void nativeAndJavaRunsAgreeOnBothLayouts() {
        assumeTrue(GuardType.CRC16.hasNativePath(), () -> "no native CRC-16: " + GuardPath.describe());
        Random r = new Random(0x16B10C);
        int[][] formats = {{512, 8}, {4096, 8}, {4096, 16}, {4096, 64}};
        for (int[] dm : formats) {
            for (PiLocation loc : PiLocation.values()) {
                for (boolean separate : new boolean[] {false, true}) {
                    for (boolean direct : new boolean[] {false, true}) {
                        BlockFormat f = BlockFormat.of(dm[0], dm[1], GuardType.CRC16, PiType.TYPE_1, loc);
                        PiContext c = PiContext.builder(f).initialRefTag(r.nextInt() & 0x7FFFFFFF).appTag(r.nextInt(0xFFFF)).build();
                        check(c, 2 + r.nextInt(100), separate, direct, r);
                    }
                }
            }
        }
    }

    private static void check(PiContext c, int n, boolean separate, boolean direct, Random r) {
        PiContext nat = c.toBuilder().guardPath(GuardPath.Use.NATIVE).build();
        PiContext jav = c.toBuilder().guardPath(GuardPath.Use.JAVA).build();
        String where = c + " n=" + n + (separate ? " separate" : " interleaved") + " direct=" + direct;
        byte[] raw = Fx.randomBlocks(c, n, r);
        byte[] want = raw.clone();
        ReferencePi.generate(c, want, n);
        byte[][] got = new byte[2][];
        PiError[] errs = new PiError[2];
        int flip = r.nextInt(n) * (c.format().dataSize() + c.format().metadataSize()) + r.nextInt(c.format().dataSize());
        byte mask = (byte) (1 << r.nextInt(8));
        PiContext[] both = {nat, jav};
        for (int i = 0; i < 2; i++) {
            if (separate) {
                byte[][] dm = Fx.separate(c, raw, n);
                ScatterList d = list(dm[0], direct);
                ScatterList m = list(dm[1], direct);
                Pi.generate(both[i], d, m, n);
                got[i] = ReferencePi.interleave(c, bytes(d, dm[0].length), bytes(m, dm[1].length), n);
                assertNull(Pi.verify(both[i], d, m, n), where);
            } else {
                ScatterList b = list(raw, direct);
                Pi.generate(both[i], b, n);
                got[i] = bytes(b, raw.length);
                assertNull(Pi.verify(both[i], b, n), where);
            }
            byte[] bad = got[i].clone();
            bad[flip] ^= mask;
            if (separate) {
                byte[][] dm = Fx.separate(c, bad, n);
                errs[i] = Pi.verify(both[i], list(dm[0], direct), list(dm[1], direct), n);
            } else {
                errs[i] = Pi.verify(both[i], list(bad, direct), n);
            }
        }
        assertArrayEquals(want, got[0], "native generate vs reference " + where);
        assertArrayEquals(got[1], got[0], "native vs java generate " + where);
        assertNotNull(errs[0], "native verify missed a flipped bit " + where);
        assertEquals(String.valueOf(errs[1]), String.valueOf(errs[0]), where);
    }
}
