package io.pistore.integrity.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.integrity.GuardType;
import io.pistore.integrity.reference.ReferenceGuards;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The native kernels against the bitwise reference: random lengths, offsets, seeds, split points,
 * heap and direct buffers, single updates and batched runs of blocks; bounds checked before C; and
 * the CRC-64/NVME folding constants recomputed here bit by bit.
 */
class NativeGuardsTest {

    private record Kernel(GuardType type, GuardAlgorithm java, GuardAlgorithm nat) {
    }

    private static List<Kernel> kernels() {
        assumeTrue(NativeGuards.isAvailable(), () -> "native path unavailable: " + NativeGuards.unavailabilityCause());
        List<Kernel> ks = new ArrayList<>();
        add(ks, GuardType.CRC16, Crc16T10Dif.INSTANCE);
        add(ks, GuardType.CRC64, Crc64Nvme.INSTANCE);
        add(ks, GuardType.CRC32C, Crc32cGuard.INSTANCE);
        return ks;
    }

    private static void add(List<Kernel> ks, GuardType t, GuardAlgorithm java) {
        GuardAlgorithm n = NativeGuards.nativeVariant(java);
        if (n != null) {
            ks.add(new Kernel(t, java, n));
        }
    }

    private static ByteBuffer copy(byte[] a, boolean direct) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(a.length) : ByteBuffer.allocate(a.length);
        b.put(a).clear();
        return b;
    }

    @Test
    void checkValues() {
        byte[] s = "123456789".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        for (Kernel k : kernels()) {
            GuardAlgorithm a = k.nat();
            long v = a.finish(a.update(a.start(0), s, 0, s.length));
            long expected = switch (k.type()) {
                case CRC16 -> 0xD0DBL;
                case CRC64 -> 0xAE8B14860A799888L;
                default -> 0xE3069283L;
            };
            assertEquals(expected, v, k.type().toString());
        }
    }

    @Test
    void singleUpdatesMatchReference() {
        SplittableRandom r = new SplittableRandom(3);
        byte[] data = new byte[20000];
        r.nextBytes(data);
        for (Kernel k : kernels()) {
            GuardAlgorithm a = k.nat();
            for (int iter = 0; iter < 600; iter++) {
                int len = iter < 300 ? iter : r.nextInt(data.length - 16);
                int off = r.nextInt(16);
                long seed = r.nextInt(4) == 0 ? 0 : r.nextLong() & k.type().guardMask();
                long want = ReferenceGuards.guard(k.type(), seed, data, off, len);
                assertEquals(want, a.finish(a.update(a.start(seed), data, off, len)), k + " heap len=" + len);
                for (boolean direct : new boolean[] {false, true}) {
                    ByteBuffer b = copy(data, direct);
                    assertEquals(want, a.finish(a.update(a.start(seed), b, off, len)),
                            k.type() + " direct=" + direct + " len=" + len + " off=" + off);
                }
            }
        }
    }

    @Test
    void splitUpdatesMixNativeAndJava() {
        SplittableRandom r = new SplittableRandom(5);
        byte[] data = new byte[9000];
        r.nextBytes(data);
        for (Kernel k : kernels()) {
            for (int iter = 0; iter < 300; iter++) {
                int len = r.nextInt(data.length);
                long seed = r.nextLong() & k.type().guardMask();
                long want = ReferenceGuards.guard(k.type(), seed, data, 0, len);
                ByteBuffer b = copy(data, r.nextBoolean());
                long s = k.nat().start(seed);
                int at = 0;
                while (at < len) {
                    int piece = Math.min(len - at, 1 + r.nextInt(r.nextBoolean() ? 40 : 3000));
                    GuardAlgorithm use = r.nextBoolean() ? k.nat() : k.java();
                    s = use.update(s, b, at, piece);
                    at += piece;
                }
                assertEquals(want, k.nat().finish(s), k.type() + " len=" + len);
            }
        }
    }

    @Test
    void blocksMatchReference() {
        SplittableRandom r = new SplittableRandom(7);
        int[] sizes = {512, 520, 4096, 4104, 4112, 130, 1000};
        for (Kernel k : kernels()) {
            for (int iter = 0; iter < 60; iter++) {
                int len = sizes[r.nextInt(sizes.length)];
                int stride = len + (r.nextBoolean() ? 0 : r.nextInt(64));
                int count = 1 + r.nextInt(r.nextBoolean() ? 3 : 70);
                int off = r.nextInt(32);
                byte[] data = new byte[off + (count - 1) * stride + len + r.nextInt(8)];
                r.nextBytes(data);
                long seed = r.nextInt(3) == 0 ? 0 : r.nextLong() & k.type().guardMask();
                long[] want = new long[count];
                for (int i = 0; i < count; i++) {
                    want[i] = ReferenceGuards.guard(k.type(), seed, data, off + i * stride, len);
                }
                for (boolean direct : new boolean[] {false, true}) {
                    long[] got = new long[count];
                    k.nat().updateBlocks(copy(data, direct), off, stride, len, count, seed, got);
                    for (int i = 0; i < count; i++) {
                        got[i] = k.nat().finish(got[i]);
                    }
                    assertArrayEquals(want, got, k.type() + " direct=" + direct + " len=" + len + " count=" + count);
                }
            }
        }
    }

    @Test
    void sliceOffsetsAreHonoured() {
        byte[] data = new byte[10000];
        new SplittableRandom(11).nextBytes(data);
        for (Kernel k : kernels()) {
            for (boolean direct : new boolean[] {false, true}) {
                ByteBuffer whole = copy(data, direct);
                ByteBuffer slice = whole.position(37).slice();
                long want = ReferenceGuards.guard(k.type(), 0, data, 37 + 100, 4096);
                GuardAlgorithm a = k.nat();
                assertEquals(want, a.finish(a.update(a.start(0), slice, 100, 4096)));
                long[] out = new long[2];
                a.updateBlocks(slice, 100, 4096, 4096, 2, 0, out);
                assertEquals(want, a.finish(out[0]));
            }
        }
    }

    @Test
    void badArgumentsThrowBeforeNativeCode() {
        for (Kernel k : kernels()) {
            GuardAlgorithm a = k.nat();
            byte[] arr = new byte[4096];
            long s = a.start(0);
            assertThrows(IndexOutOfBoundsException.class, () -> a.update(s, arr, 1, 4096));
            assertThrows(IndexOutOfBoundsException.class, () -> a.update(s, arr, -1, 200));
            assertThrows(IndexOutOfBoundsException.class, () -> a.update(s, arr, 4000, Integer.MAX_VALUE));
            for (ByteBuffer b : new ByteBuffer[] {ByteBuffer.allocate(4096), ByteBuffer.allocateDirect(4096)}) {
                assertThrows(IndexOutOfBoundsException.class, () -> a.update(s, b, 1, 4096));
                assertThrows(IndexOutOfBoundsException.class, () -> a.update(s, b.limit(1000), 0, 1001));
                b.clear();
                long[] out = new long[4];
                assertThrows(IndexOutOfBoundsException.class, () -> a.updateBlocks(b, 0, 1024, 1024, 5, 0, new long[5]));
                assertThrows(IndexOutOfBoundsException.class, () -> a.updateBlocks(b, 0, 1024, 1024, 4, 0, new long[3]));
                assertThrows(IndexOutOfBoundsException.class, () -> a.updateBlocks(b, -8, 1024, 1024, 2, 0, out));
                assertThrows(IndexOutOfBoundsException.class, () -> a.updateBlocks(b, 0, -1024, 1024, 2, 0, out));
                assertThrows(IndexOutOfBoundsException.class,
                        () -> a.updateBlocks(b, 0, Integer.MAX_VALUE, 1024, 3, 0, out));
            }
            assertThrows(IndexOutOfBoundsException.class,
                    () -> NativeGuards.blocks(NativeGuards.ALG_CRC64, 0, arr, 0, 1, -1, 1, new long[1]));
            assertThrows(IndexOutOfBoundsException.class,
                    () -> NativeGuards.updateDirect(NativeGuards.ALG_CRC64, 0, ByteBuffer.allocateDirect(8), 4, 5));
        }
    }

    @Test
    void directUpdatesByAddressMatchTheReferenceOverSlicesDuplicatesAndReadOnlyViews() {
        List<Kernel> ks = kernels();
        // On the JDKs this project supports the address is readable: the fast entry is what runs here.
        assertEquals(true, DirectAddress.available(), "Buffer.address unreadable: the object entry would run");
        SplittableRandom rnd = new SplittableRandom(91);
        byte[] a = new byte[9000];
        rnd.nextBytes(a);
        ByteBuffer whole = copy(a, true);
        for (Kernel k : ks) {
            for (int t = 0; t < 300; t++) {
                int sliceAt = rnd.nextInt(64);
                ByteBuffer base = whole.slice(sliceAt, a.length - sliceAt);
                ByteBuffer view = switch (t % 3) {
                    case 0 -> base;
                    case 1 -> base.duplicate();
                    default -> base.asReadOnlyBuffer();
                };
                int off = rnd.nextInt(4096);
                int len = 128 + rnd.nextInt(4500);
                long seed = rnd.nextBoolean() ? 0 : rnd.nextLong() & k.type().guardMask();
                GuardAlgorithm n = k.nat();
                long got = n.finish(n.update(n.start(seed), view, off, len));
                long expected = ReferenceGuards.guard(k.type(), seed, a, sliceAt + off, len);
                assertEquals(expected, got, k.type() + " slice at " + sliceAt + " off " + off + " len " + len);
            }
        }
    }

    // ---------------------------------------------------------------- CRC-64/NVME constants

    private static final long P = 0xAD93D23594C93659L;

    /** x^n mod P, normal form, one bit at a time. */
    private static long xpow(int n) {
        long r = 1;
        for (int i = 0; i < n; i++) {
            r = r < 0 ? (r << 1) ^ P : r << 1;
        }
        return r;
    }

    /** floor(x^128 / P) without its x^64 term, by long division one bit at a time. */
    private static long mu() {
        // dividend bits: hi (x^64..x^127 as a long) and a separate x^128 bit
        boolean top = true;
        long hi = 0;
        long q = 0;
        for (int i = 128; i >= 64; i--) {
            boolean bit = i == 128 ? top : ((hi >>> (i - 64)) & 1) != 0;
            if (bit) {
                int s = i - 64;
                if (s < 64) {
                    q |= 1L << s;
                }
                // subtract (x^64 + P) << s; only the part at or above x^64 matters for later quotient bits
                if (s == 64) {
                    top = false;
                    hi ^= P;
                } else {
                    hi ^= 1L << s;
                    hi ^= s == 0 ? 0 : P >>> (64 - s);
                }
            }
        }
        return q;
    }

    @Test
    void crc64FoldingConstantsMatchBitwiseDerivation() {
        assumeTrue(NativeGuards.isAvailable() && NativeGuards.hasCrc64(), "native CRC-64 unavailable");
        long[] c = NativeGuards.crc64Constants();
        assertNotNull(c);
        for (int m = 1; m <= 16; m++) {
            assertEquals(Long.reverse(xpow(128 * m + 63)), c[2 * (m - 1)], "fold " + m + " low");
            assertEquals(Long.reverse(xpow(128 * m - 1)), c[2 * (m - 1) + 1], "fold " + m + " high");
        }
        assertEquals(Long.reverse(xpow(127)), c[32], "k127");
        assertEquals(Long.reverse(mu()), c[33], "Barrett mu");
        assertEquals(Crc64Nvme.POLY_REFLECTED, c[34], "poly");
        // mu * P = x^128 + (remainder of degree < 64), checked by carry-less multiplication here
        long muFull = mu();
        // (x^64 + mu')(x^64 + P') = x^128 + x^64 (mu' + P') + mu' P'; the x^64..x^127 part must vanish
        long[] prod = clmul(muFull, P);
        long upper = muFull ^ P ^ prod[1];
        assertEquals(0, upper, "mu is the quotient of x^128 by P");
    }

    @Test
    void crc16FoldingConstantsMatchBitwiseDerivation() {
        assumeTrue(NativeGuards.isAvailable() && NativeGuards.hasCrc16(), "native CRC-16 unavailable");
        long[] c = NativeGuards.crc16Constants();
        assertNotNull(c);
        assertEquals(37, c.length);
        for (int m = 1; m <= 16; m++) {
            assertEquals(xpow16(128 * m), c[2 * (m - 1)], "fold " + m + " low");
            assertEquals(xpow16(128 * m + 64), c[2 * (m - 1) + 1], "fold " + m + " high");
        }
        assertEquals(xpow16(16), c[32], "k16");
        assertEquals(xpow16(64), c[33], "k64");
        assertEquals(xpow16(80), c[34], "k80");
        assertEquals(0x18BB7L, c[36], "poly with its x^16 term");
        // mu = floor(x^64 / P): mu * P = x^64 + r with deg r < 16, by carry-less multiplication
        long mu = c[35];
        assertEquals(48, 63 - Long.numberOfLeadingZeros(mu), "mu has degree 48");
        long[] prod = clmul(mu, 0x18BB7L);
        assertEquals(1L, prod[1], "x^64 term of mu * P");
        assertEquals(0L, prod[0] & ~0xFFFFL, "mu * P - x^64 has degree < 16");
    }

    /** x^n mod (x^16 + 0x8BB7), one shift at a time. */
    private static long xpow16(int n) {
        long r = 1;
        for (int i = 0; i < n; i++) {
            r <<= 1;
            if ((r & 0x10000) != 0) {
                r ^= 0x18BB7;
            }
        }
        return r;
    }

    /** 128-bit carry-less product {lo, hi}. */
    private static long[] clmul(long a, long b) {
        long lo = 0;
        long hi = 0;
        for (int i = 0; i < 64; i++) {
            if (((b >>> i) & 1) != 0) {
                lo ^= a << i;
                hi ^= i == 0 ? 0 : a >>> (64 - i);
            }
        }
        return new long[] {lo, hi};
    }
}
