package io.pistore.integrity.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link ReflectedGf2} against the definition it shortcuts: a register shifted by n zero bytes is
 * the register run bit by bit through 8n zero bits of the reflected CRC.
 */
class ReflectedGf2Test {

    /** The register after {@code bytes} zero bytes, one bit at a time. */
    private static long zeroBits(long register, long poly, long mask, long bytes) {
        long r = register;
        for (long i = 0; i < 8 * bytes; i++) {
            r = (r & 1) != 0 ? (r >>> 1) ^ poly : r >>> 1;
        }
        return r & mask;
    }

    @Test
    void shiftingByZeroBytesMatchesTheBitwiseRegister() {
        long[][] polys = {{Crc32cGuard.POLY_REFLECTED, 32, 0xFFFF_FFFFL}, {Crc64Nvme.POLY_REFLECTED, 64, -1L}};
        SplittableRandom r = new SplittableRandom(4);
        for (long[] p : polys) {
            ReflectedGf2 gf = new ReflectedGf2(p[0], (int) p[1]);
            assertEquals(p[1], gf.width());
            for (int i = 0; i < 200; i++) {
                long reg = r.nextLong() & p[2];
                long bytes = i < 40 ? i : 1 + r.nextInt(3000);
                assertEquals(zeroBits(reg, p[0], p[2], bytes), gf.shift(reg, bytes), "width " + p[1] + " bytes " + bytes);
            }
            assertEquals(0, gf.shift(0, 1000));
            assertEquals(0x1234, gf.shift(0x1234, 0));
        }
    }
}
