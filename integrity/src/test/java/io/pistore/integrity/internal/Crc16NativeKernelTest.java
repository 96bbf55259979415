package io.pistore.integrity.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The library's own CRC-16/T10-DIF folding kernel (crc16t10dif.c) against the Java kernel, and
 * against ISA-L's crc16_t10dif where libisal loads: every length 0..320 at every offset 0..15 (so
 * every tail length, the 16/128/256-byte kernel thresholds and the 64-byte steps of the 512-bit
 * kernel), random large buffers, raw seeds chained across random splits, heap and direct buffers.
 * The variant here has no short-update threshold, so each call reaches C.
 */
class Crc16NativeKernelTest {

    private static GuardAlgorithm nat() {
        assumeTrue(NativeGuards.isAvailable(), () -> "native path unavailable: " + NativeGuards.unavailabilityCause());
        GuardAlgorithm n = NativeGuards.nativeVariant(Crc16T10Dif.INSTANCE);
        assumeTrue(n != null, "no native CRC-16 kernel");
        return n;
    }

    private static ByteBuffer direct(byte[] a) {
        ByteBuffer b = ByteBuffer.allocateDirect(a.length);
        b.put(a).clear();
        return b;
    }

    @Test
    void everyLengthAndOffsetMatchesTheJavaKernelOnHeapAndDirect() {
        GuardAlgorithm n = nat();
        GuardAlgorithm j = Crc16T10Dif.INSTANCE;
        SplittableRandom r = new SplittableRandom(0x16);
        byte[] data = new byte[16 + 320];
        r.nextBytes(data);
        ByteBuffer d = direct(data);
        for (int len = 0; len <= 320; len++) {
            for (int off = 0; off < 16; off++) {
                long seed = r.nextInt(0x10000);
                long want = j.update(seed, data, off, len);
                assertEquals(want, n.update(seed, data, off, len), "heap len=" + len + " off=" + off);
                assertEquals(want, n.update(seed, d, off, len), "direct len=" + len + " off=" + off);
            }
        }
    }

    @Test
    void largeRandomBuffersMatchTheJavaKernel() {
        GuardAlgorithm n = nat();
        SplittableRandom r = new SplittableRandom(0x1616);
        for (int iter = 0; iter < 40; iter++) {
            byte[] data = new byte[1 + r.nextInt(1 << 20)];
            r.nextBytes(data);
            int off = r.nextInt(Math.min(64, data.length));
            int len = r.nextInt(data.length - off + 1);
            long seed = r.nextInt(0x10000);
            long want = Crc16T10Dif.INSTANCE.update(seed, data, off, len);
            assertEquals(want, n.update(seed, data, off, len), "heap len=" + len);
            assertEquals(want, n.update(seed, direct(data), off, len), "direct len=" + len);
        }
    }

    @Test
    void seedsChainAcrossSplitsOfNativePieces() {
        GuardAlgorithm n = nat();
        SplittableRandom r = new SplittableRandom(0x5EED);
        byte[] data = new byte[70000];
        r.nextBytes(data);
        ByteBuffer d = direct(data);
        for (int iter = 0; iter < 200; iter++) {
            int len = r.nextInt(data.length);
            long seed = r.nextInt(0x10000);
            long want = Crc16T10Dif.INSTANCE.update(seed, data, 0, len);
            boolean onDirect = r.nextBoolean();
            long s = seed;
            for (int at = 0; at < len;) {
                int piece = Math.min(len - at, r.nextInt(4) == 0 ? r.nextInt(17) : 1 + r.nextInt(5000));
                s = onDirect ? n.update(s, d, at, piece) : n.update(s, data, at, piece);
                at += piece;
            }
            assertEquals(want, s, "len=" + len + " direct=" + onDirect);
        }
    }

    @Test
    void matchesIsalWhereLibisalLoads() {
        GuardAlgorithm n = nat();
        byte[] probe = new byte[1];
        assumeTrue(NativeGuards.isalCrc16(0, probe, 0, 1) >= 0, "libisal not loaded: no ISA-L oracle here");
        SplittableRandom r = new SplittableRandom(0x15A1);
        byte[] data = new byte[1 << 17];
        r.nextBytes(data);
        for (int iter = 0; iter < 3000; iter++) {
            int len = iter <= 600 ? iter : r.nextInt(data.length - 64);
            int off = r.nextInt(64);
            int seed = r.nextInt(0x10000);
            long isal = NativeGuards.isalCrc16(seed, data, off, len);
            assertEquals(isal, n.update(seed, data, off, len), "len=" + len + " off=" + off + " seed=" + seed);
        }
    }

    @Test
    void ourKernelIsBoundUnlessIsalIsAskedFor() {
        nat();
        String d = NativeGuards.describe();
        boolean isalAsked = "isal".equalsIgnoreCase(System.getProperty("pistore.native.crc16"));
        if (isalAsked && NativeGuards.isalCrc16(0, new byte[1], 0, 1) >= 0) {
            assertTrue(NativeGuards.crc16IsIsal(), d);
            assertTrue(d.contains("crc16=native(isal)"), d);
        } else {
            assertFalse(NativeGuards.crc16IsIsal(), d);
            assertTrue(d.matches(".*crc16=native\\((pclmulqdq|vpclmulqdq-avx512)\\).*"), d);
        }
    }
}
