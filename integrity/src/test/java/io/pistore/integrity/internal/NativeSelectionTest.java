package io.pistore.integrity.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.integrity.GuardType;
import io.pistore.integrity.reference.ReferenceGuards;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Which algorithm {@link NativeGuards} hands out for each guard (the policy of docs/NATIVE.md: CRC-16
 * and CRC-64 native by default where the library has them, CRC-32C only on request, the IP checksum
 * never), the line {@code --version} prints for it, and the argument checks of the block and run
 * entries at their exact edges, with the messages. Runs on both paths: with the library loaded and
 * with {@code pistore.native=false}.
 */
@Isolated("sets the CRC-32C opt-in system property, which guard selection reads")
class NativeSelectionTest {
    private static final String CRC32C_PROPERTY = "pistore.native.crc32c";

    private static void assertNativeOf(GuardAlgorithm java, GuardAlgorithm got) {
        assertNotNull(got, java.name());
        assertTrue(got instanceof NativeGuardAlgorithm, got.name());
        assertSame(java, ((NativeGuardAlgorithm) got).javaKernel());
        assertEquals(java.name() + "-native", got.name());
    }

    @Test
    void crc16AndCrc64AreNativeByDefaultWhereTheLibraryHasThem() {
        GuardAlgorithm c16 = NativeGuards.select(Crc16T10Dif.INSTANCE);
        GuardAlgorithm c64 = NativeGuards.select(Crc64Nvme.INSTANCE);
        if (NativeGuards.hasCrc16()) {
            assertNativeOf(Crc16T10Dif.INSTANCE, c16);
        } else {
            assertSame(Crc16T10Dif.INSTANCE, c16);
        }
        if (NativeGuards.hasCrc64()) {
            assertNativeOf(Crc64Nvme.INSTANCE, c64);
        } else {
            assertSame(Crc64Nvme.INSTANCE, c64);
        }
        // what GuardType bound at class initialisation is this same choice
        assertEquals(NativeGuards.hasCrc16(), GuardType.CRC16.isNativeByDefault());
        assertEquals(NativeGuards.hasCrc64(), GuardType.CRC64.isNativeByDefault());
        assertEquals(NativeGuards.hasCrc16(), GuardType.CRC16.hasNativePath());
        assertEquals(NativeGuards.hasCrc64(), GuardType.CRC64.hasNativePath());
    }

    @Test
    void theIpChecksumHasNoNativeKernel() {
        assertSame(IpChecksum.INSTANCE, NativeGuards.select(IpChecksum.INSTANCE));
        assertNull(NativeGuards.nativeAlgorithm(IpChecksum.INSTANCE));
        assertNull(NativeGuards.nativeVariant(IpChecksum.INSTANCE));
        assertTrue(!GuardType.IP_CHECKSUM.isNativeByDefault() && !GuardType.IP_CHECKSUM.hasNativePath());
    }

    @Test
    void crc32cIsNativeOnlyOnRequest() {
        String before = System.getProperty(CRC32C_PROPERTY);
        try {
            System.clearProperty(CRC32C_PROPERTY);
            assertSame(Crc32cGuard.INSTANCE, NativeGuards.select(Crc32cGuard.INSTANCE), "the JDK intrinsic by default");
            System.setProperty(CRC32C_PROPERTY, "TRUE");
            GuardAlgorithm optedIn = NativeGuards.select(Crc32cGuard.INSTANCE);
            if (NativeGuards.hasCrc32c()) {
                assertNativeOf(Crc32cGuard.INSTANCE, optedIn);
            } else {
                assertSame(Crc32cGuard.INSTANCE, optedIn);
            }
            System.setProperty(CRC32C_PROPERTY, "yes");
            assertSame(Crc32cGuard.INSTANCE, NativeGuards.select(Crc32cGuard.INSTANCE), "only true opts in");
        } finally {
            if (before == null) {
                System.clearProperty(CRC32C_PROPERTY);
            } else {
                System.setProperty(CRC32C_PROPERTY, before);
            }
        }
        assertEquals(NativeGuards.hasCrc32c(), GuardType.CRC32C.hasNativePath());
    }

    @Test
    void theNativeAlgorithmAndVariantOfEachGuard() {
        GuardAlgorithm[] javas = {Crc16T10Dif.INSTANCE, Crc64Nvme.INSTANCE, Crc32cGuard.INSTANCE};
        boolean[] has = {NativeGuards.hasCrc16(), NativeGuards.hasCrc64(), NativeGuards.hasCrc32c()};
        for (int i = 0; i < javas.length; i++) {
            GuardAlgorithm a = NativeGuards.nativeAlgorithm(javas[i]);
            GuardAlgorithm v = NativeGuards.nativeVariant(javas[i]);
            if (has[i]) {
                assertNativeOf(javas[i], a);
                assertNativeOf(javas[i], v);
            } else {
                assertNull(a, javas[i].name());
                assertNull(v, javas[i].name());
            }
        }
    }

    @Test
    void theVersionLineSaysWhichPathAndWhy() {
        String d = NativeGuards.describe();
        if (NativeGuards.isAvailable()) {
            assertNull(NativeGuards.unavailabilityCause());
            assertDoesNotThrow(NativeGuards::ensureAvailability);
            boolean c32 = NativeGuards.hasCrc32c() && "true".equalsIgnoreCase(System.getProperty(CRC32C_PROPERTY));
            // per guard: the path bound, the kernel's name where native, the reason where not
            String kernels = "pclmulqdq|vpclmulqdq-avx512";
            String want = "guards: native; crc16="
                    + (NativeGuards.hasCrc16() ? "native\\((" + kernels + "|isal)\\)" : "java")
                    + " crc64=" + (NativeGuards.hasCrc64() ? "native\\((" + kernels + ")\\)" : "java")
                    + " crc32c=" + (c32 ? "native\\(isal\\)"
                            : NativeGuards.hasCrc32c() ? "jdk\\(native is opt-in: -Dpistore\\.native\\.crc32c=true\\)"
                            : "jdk\\(no native kernel: .+\\)")
                    + " ip=java\\(no native kernel\\)";
            assertTrue(d.matches(want), d + " / " + want);
        } else {
            Throwable cause = NativeGuards.unavailabilityCause();
            assertNotNull(cause);
            assertEquals("guards: pure Java (native unavailable: " + cause.getMessage()
                    + "); crc16=java crc64=java crc32c=jdk ip=java", d);
            UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class, NativeGuards::ensureAvailability);
            assertEquals("pistore native guard path unavailable: " + cause.getMessage(), e.getMessage());
            assertSame(cause, e.getCause());
            assertThrows(UnsatisfiedLinkError.class, NativeGuards::crc64Constants);
            assertTrue(!NativeGuards.hasCrc16() && !NativeGuards.hasCrc64() && !NativeGuards.hasCrc32c());
        }
    }

    // ---------------------------------------------------------------- argument checks at their edges

    private static void assumeCrc16() {
        assumeTrue(NativeGuards.hasCrc16(), () -> "native CRC-16 unavailable: " + NativeGuards.unavailabilityCause());
    }

    @Test
    void blockCallsTakeZeroCountsLengthsAndStrides() {
        assumeCrc16();
        byte[] a = new byte[1000];
        new SplittableRandom(3).nextBytes(a);
        long s0 = Crc16T10Dif.INSTANCE.start(0);
        // no blocks: nothing written
        long[] none = {42};
        NativeGuards.blocks(NativeGuards.ALG_CRC16, s0, a, 0, 0, 0, 0, none);
        assertEquals(42, none[0]);
        // empty blocks: the start state
        long[] empty = new long[2];
        NativeGuards.blocks(NativeGuards.ALG_CRC16, s0, a, 0, 10, 0, 2, empty);
        assertArrayEquals(new long[] {s0, s0}, empty);
        // stride 0: the same block again
        long want = ReferenceGuards.guard(GuardType.CRC16, 0, a, 5, 300);
        long[] same = new long[3];
        NativeGuards.blocks(NativeGuards.ALG_CRC16, s0, a, 5, 0, 300, 3, same);
        for (long s : same) {
            assertEquals(want, Crc16T10Dif.INSTANCE.finish(s));
        }
        ByteBuffer direct = ByteBuffer.allocateDirect(a.length).put(a).clear();
        long[] sameDirect = new long[3];
        NativeGuards.blocksDirect(NativeGuards.ALG_CRC16, s0, direct, 5, 0, 300, 3, sameDirect);
        assertArrayEquals(same, sameDirect);
    }

    @Test
    void blockCallsEndingAtTheLimitPassAndOneByteMoreNamesTheRange() {
        assumeCrc16();
        byte[] a = new byte[4096];
        long s0 = Crc16T10Dif.INSTANCE.start(0);
        long[] out = new long[4];
        // blocks at 96, 1096, 2096, 3096 of 1000 bytes end exactly at 4096
        NativeGuards.blocks(NativeGuards.ALG_CRC16, s0, a, 96, 1000, 1000, 4, out);
        ByteBuffer direct = ByteBuffer.allocateDirect(4096);
        NativeGuards.blocksDirect(NativeGuards.ALG_CRC16, s0, direct, 96, 1000, 1000, 4, out);
        assertEquals("blocks [97, 4097) outside [0, 4096)", assertThrows(IndexOutOfBoundsException.class,
                () -> NativeGuards.blocks(NativeGuards.ALG_CRC16, s0, a, 97, 1000, 1000, 4, out)).getMessage());
        assertEquals("blocks [96, 4097) outside [0, 4096)", assertThrows(IndexOutOfBoundsException.class,
                () -> NativeGuards.blocksDirect(NativeGuards.ALG_CRC16, s0, direct, 96, 1000, 1001, 4, out)).getMessage());
        assertEquals("negative argument: off=0 stride=1000 len=-1 count=1", assertThrows(IndexOutOfBoundsException.class,
                () -> NativeGuards.blocks(NativeGuards.ALG_CRC16, s0, a, 0, 1000, -1, 1, out)).getMessage());
        assertEquals("negative argument: off=0 stride=1000 len=1 count=-1", assertThrows(IndexOutOfBoundsException.class,
                () -> NativeGuards.blocks(NativeGuards.ALG_CRC16, s0, a, 0, 1000, 1, -1, out)).getMessage());
        assertEquals("statesOut holds 4 < 5", assertThrows(IndexOutOfBoundsException.class,
                () -> NativeGuards.blocks(NativeGuards.ALG_CRC16, s0, a, 0, 10, 10, 5, out)).getMessage());
    }

    /** A verify run over {@code count} blocks of {@code dataLen} + an 8-byte CRC-16 tuple, separate lists. */
    private static int verifyRun(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int count, int dataLen,
                                 int prefix, int tupleOff, long[] result) {
        return NativeGuards.run(NativeGuards.OP_VERIFY, NativeGuards.ALG_CRC16, Crc16T10Dif.INSTANCE.start(0), d, dOff,
                dStride, m, mOff, 8 + tupleOff, count, dataLen, prefix, tupleOff, 0, 0, 0, 0, 0xFFFFFFFFL, result);
    }

    @Test
    void runsEndingAtTheLimitsPassAndOneByteMoreNamesBothRanges() {
        assumeCrc16();
        long[] result = new long[3];
        ByteBuffer d = ByteBuffer.allocate(3 * 512);
        ByteBuffer m = ByteBuffer.allocate(3 * 8);
        // no checks asked: every block passes, the answer is the count
        assertEquals(3, verifyRun(d, 0, 512, m, 0, 3, 512, 0, 0, result));
        assertEquals(2, verifyRun(d, 512, 512, m, 8, 2, 512, 0, 0, result));
        assertEquals("run outside its buffers: data [1, 1537) of 1536, metadata [0, 24) of 24",
                assertThrows(IndexOutOfBoundsException.class, () -> verifyRun(d, 1, 512, m, 0, 3, 512, 0, 0, result))
                        .getMessage());
        assertEquals("run outside its buffers: data [0, 1536) of 1536, metadata [1, 25) of 24",
                assertThrows(IndexOutOfBoundsException.class, () -> verifyRun(d, 0, 512, m, 1, 3, 512, 0, 0, result))
                        .getMessage());
        // metadata reaches the larger of the guarded prefix and the end of the tuple
        ByteBuffer m2 = ByteBuffer.allocate(2 * 16);
        assertEquals(2, verifyRun(d, 0, 512, m2, 0, 2, 512, 0, 8, result));
        assertEquals("run outside its buffers: data [0, 1024) of 1536, metadata [1, 33) of 32",
                assertThrows(IndexOutOfBoundsException.class, () -> verifyRun(d, 0, 512, m2, 1, 2, 512, 0, 8, result))
                        .getMessage());
        assertEquals("run outside its buffers: data [0, 1024) of 1536, metadata [0, 33) of 32",
                assertThrows(IndexOutOfBoundsException.class, () -> NativeGuards.run(NativeGuards.OP_VERIFY,
                        NativeGuards.ALG_CRC16, 0, d, 0, 512, m2, 0, 16, 2, 512, 17, 0, 0, 0, 0, 0, 0, result))
                        .getMessage());
        assertEquals("bad run: count=0 dataLen=512 prefix=0 tupleOff=0 dOff=0 dStride=512 mOff=0 mStride=8",
                assertThrows(IndexOutOfBoundsException.class, () -> verifyRun(d, 0, 512, m, 0, 0, 512, 0, 0, result))
                        .getMessage());
        assertEquals("verify needs a result array of 3", assertThrows(IllegalArgumentException.class,
                () -> verifyRun(d, 0, 512, m, 0, 1, 512, 0, 0, new long[2])).getMessage());
        assertEquals("op 2 alg 0", assertThrows(IllegalArgumentException.class, () -> NativeGuards.run(2,
                NativeGuards.ALG_CRC16, 0, d, 0, 512, m, 0, 8, 1, 512, 0, 0, 0, 0, 0, 0, 0, result)).getMessage());
        assertEquals("op 0 alg 3", assertThrows(IllegalArgumentException.class, () -> NativeGuards.run(
                NativeGuards.OP_GENERATE, 3, 0, d, 0, 512, m, 0, 8, 1, 512, 0, 0, 0, 0, 0, 0, 0, null)).getMessage());
        // zero-length data and a zero stride are geometry the checks accept
        assertEquals(1, verifyRun(d, 1536, 0, m, 0, 1, 0, 0, 0, result));
    }

    @Test
    void aReadOnlyMetadataBufferIsNotGeneratedInto() {
        assumeCrc16();
        ByteBuffer d = ByteBuffer.allocate(1024);
        ByteBuffer ro = ByteBuffer.allocate(16).asReadOnlyBuffer();
        assertEquals(-1, NativeGuards.run(NativeGuards.OP_GENERATE, NativeGuards.ALG_CRC16, 0, d, 0, 512, ro, 0, 8, 2,
                512, 0, 0, 0, 0, 0, 0, 0xFFFFFFFFL, null));
        ByteBuffer rw = ByteBuffer.allocate(16);
        assertEquals(2, NativeGuards.run(NativeGuards.OP_GENERATE, NativeGuards.ALG_CRC16,
                Crc16T10Dif.INSTANCE.start(0), d, 0, 512, rw, 0, 8, 2, 512, 0, 0, 0, 0x1234, 0, 7, 0xFFFFFFFFL, null));
        // the tuple of block 1: guard of zeros, app 0x1234, ref 8
        assertEquals(0x1234, rw.getShort(8 + 2) & 0xFFFF);
        assertEquals(8, rw.getInt(8 + 4));
    }

    @Test
    void heapBlocksAreBoundedByTheLimitBeforeNativeCode() {
        assumeCrc16();
        GuardAlgorithm a = NativeGuards.nativeVariant(Crc16T10Dif.INSTANCE);
        byte[] raw = new byte[5000];
        new SplittableRandom(9).nextBytes(raw);
        ByteBuffer b = ByteBuffer.wrap(raw).limit(4096);
        long[] out = new long[4];
        a.updateBlocks(b, 96, 1000, 1000, 4, 0, out);
        for (int k = 0; k < 4; k++) {
            assertEquals(ReferenceGuards.guard(GuardType.CRC16, 0, raw, 96 + k * 1000, 1000), a.finish(out[k]), "block " + k);
        }
        assertEquals("blocks off=97 stride=1000 len=1000 count=4 outside limit 4096",
                assertThrows(IndexOutOfBoundsException.class, () -> a.updateBlocks(b, 97, 1000, 1000, 4, 0, out))
                        .getMessage());
        assertEquals("blocks off=96 stride=1000 len=1001 count=4 outside limit 4096",
                assertThrows(IndexOutOfBoundsException.class, () -> a.updateBlocks(b, 96, 1000, 1001, 4, 0, out))
                        .getMessage());
        assertEquals("blocks off=-1 stride=1000 len=1000 count=1 outside limit 4096",
                assertThrows(IndexOutOfBoundsException.class, () -> a.updateBlocks(b, -1, 1000, 1000, 1, 0, out))
                        .getMessage());
        assertEquals("blocks off=0 stride=-1 len=1000 count=1 outside limit 4096",
                assertThrows(IndexOutOfBoundsException.class, () -> a.updateBlocks(b, 0, -1, 1000, 1, 0, out))
                        .getMessage());
        // a zero stride repeats the block; a zero length is the seed's start state
        a.updateBlocks(b, 3096, 0, 1000, 2, 0, out);
        assertEquals(out[0], out[1]);
        assertEquals(ReferenceGuards.guard(GuardType.CRC16, 0, raw, 3096, 1000), a.finish(out[1]));
        a.updateBlocks(b, 4096, 0, 0, 1, 0x1234, out);
        assertEquals(Crc16T10Dif.INSTANCE.start(0x1234), out[0]);
    }
}
