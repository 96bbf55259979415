package io.pistore.integrity.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.integrity.ForkedJvm;
import io.pistore.integrity.GuardPath;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * What a forked JVM binds, and says, under other CPUs and broken installs: the 128-bit PCLMULQDQ
 * kernels (what CPUs without VPCLMULQDQ get) against the Java kernels over every length 0..4200 and
 * random ones; "CPU lacks PCLMULQDQ"; "library failed to load: ..."; "no native library for this
 * OS/arch in the jar". Each line is {@link GuardPath#describe()} as the child printed it.
 */
class NativeKernelChoiceTest {

    private static String fork(String... jvmArgs) throws IOException, InterruptedException {
        return ForkedJvm.run(Probe.class, 120, jvmArgs);
    }

    private static void assumeNativeHere() {
        assumeTrue(NativeGuards.isAvailable(), () -> "native path unavailable: " + NativeGuards.unavailabilityCause());
    }

    @Test
    void pclmulqdqKernelsMatchJava() throws Exception {
        assumeNativeHere();
        String out = fork("-Dpistore.native.kernel=pclmulqdq");
        assertTrue(out.contains("guards: native; crc16=native(pclmulqdq) crc64=native(pclmulqdq)"), out);
        assertTrue(out.contains("kernels match java"), out);
    }

    @Test
    void aCpuWithoutPclmulqdqIsNamedAsTheCause() throws Exception {
        assumeNativeHere();
        String out = fork("-Dpistore.native.kernel=none");
        assertTrue(out.contains("guards: pure Java (native unavailable: CPU lacks PCLMULQDQ"), out);
        assertTrue(out.contains("crc16=java crc64=java crc32c=jdk ip=java"), out);
    }

    @Test
    void aLibraryThatFailsToLoadIsNamedWithItsMessage() throws Exception {
        Path empty = Files.createTempFile("not-a-library", ".so");
        try {
            String out = fork("-Dpistore.native.library=" + empty);
            assertTrue(out.contains("guards: pure Java (native unavailable: library failed to load: "), out);
            assertTrue(out.contains(empty.getFileName().toString()), out);
        } finally {
            Files.deleteIfExists(empty);
        }
    }

    @Test
    void anotherArchitectureHasNoLibraryInTheJar() throws Exception {
        String out = fork("-Dos.arch=aarch64");
        assertTrue(out.contains("guards: pure Java (native unavailable: no native library for this OS/arch in the jar"),
                out);
        assertTrue(out.contains("aarch64"), out);
    }

    /** Runs in the forked JVM: the guards line, then the bound kernels against Java when native. */
    public static final class Probe {
        public static void main(String[] args) {
            System.out.println(GuardPath.describe());
            if (!NativeGuards.isAvailable()) {
                return;
            }
            SplittableRandom r = new SplittableRandom(0x128);
            byte[] data = new byte[1 << 16];
            r.nextBytes(data);
            ByteBuffer direct = ByteBuffer.allocateDirect(data.length).put(data).clear();
            GuardAlgorithm[] javas = {Crc16T10Dif.INSTANCE, Crc64Nvme.INSTANCE};
            for (GuardAlgorithm j : javas) {
                GuardAlgorithm n = NativeGuards.nativeVariant(j);
                for (int i = 0; i < 4600; i++) {
                    int len = i <= 4200 ? i : r.nextInt(data.length - 16);
                    int off = r.nextInt(16);
                    long seed = r.nextLong() & (j == Crc16T10Dif.INSTANCE ? 0xFFFF : -1L);
                    long want = j.update(seed, data, off, len);
                    if (n.update(seed, data, off, len) != want || n.update(seed, direct, off, len) != want) {
                        System.out.println("MISMATCH " + j.name() + " len=" + len + " off=" + off);
                        return;
                    }
                }
            }
            System.out.println("kernels match java");
        }
    }
}
