package io.pistore.integrity.internal;

/**
 * Arithmetic modulo a reflected CRC polynomial of width 32 or 64 (the zlib {@code crc32_combine}
 * method): lets a CRC computed from the standard initial value be moved to any other initial value,
 * so the JDK's CRC-32C intrinsic (which always starts from all-ones) can continue a split block or
 * honour a guard seed.
 */
public final class ReflectedGf2 {
    private final long poly;
    private final int width;
    private final long one;
    /** x^(2^k) mod poly. */
    private final long[] x2n = new long[64];

    public ReflectedGf2(long reflectedPoly, int width) {
        this.poly = reflectedPoly;
        this.width = width;
        this.one = 1L << (width - 1);
        long p = one >>> 1; // x^1
        x2n[0] = p;
        for (int n = 1; n < 64; n++) {
            p = multiply(p, p);
            x2n[n] = p;
        }
    }

    /** a * b modulo the polynomial, both in reflected form. */
    public long multiply(long a, long b) {
        long m = one;
        long p = 0;
        for (;;) {
            if ((a & m) != 0) {
                p ^= b;
                if ((a & (m - 1)) == 0) {
                    break;
                }
            }
            m >>>= 1;
            b = (b & 1) != 0 ? (b >>> 1) ^ poly : b >>> 1;
        }
        return p;
    }

    /** x^(8 * bytes) modulo the polynomial. */
    public long xPowBytes(long bytes) {
        long p = one; // x^0
        int k = 3;
        long n = bytes;
        while (n != 0) {
            if ((n & 1) != 0) {
                p = multiply(x2n[k & 63], p);
            }
            n >>>= 1;
            k++;
        }
        return p;
    }

    /** The register that {@code register} becomes after {@code bytes} zero bytes. */
    public long shift(long register, long bytes) {
        if (register == 0 || bytes == 0) {
            return register;
        }
        return multiply(xPowBytes(bytes), register);
    }

    public int width() {
        return width;
    }
}
