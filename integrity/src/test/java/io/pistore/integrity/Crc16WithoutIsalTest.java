package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The CRC-16 path stays native where ISA-L cannot be reached: a forked JVM loads the library's twin
 * built without the ISA-L dlopen (build.sh, {@code target/native-no-isal}), and must report CRC-16
 * and CRC-64 native, CRC-32C on the JDK with the reason, run PI generate/verify of 4096+8 on the
 * native path with the right guards, and have no libisal mapped in the process.
 */
class Crc16WithoutIsalTest {

    private static final Path TWIN = Path.of("target", "native-no-isal", "libpistore-native.so");

    @Test
    void crc16IsNativeWithoutLibisal() throws IOException, InterruptedException {
        assumeTrue(Files.isRegularFile(TWIN), "no-ISA-L twin not built (no gcc or JNI headers)");
        assumeTrue(!"false".equals(System.getProperty("pistore.native")), "this run forces pure Java");
        String out = ForkedJvm.run(Probe.class, 60, "-Dpistore.native.library=" + TWIN.toAbsolutePath());
        assertTrue(out.matches("(?s).*guards: native; crc16=native\\((pclmulqdq|vpclmulqdq-avx512)\\) crc64=native.*"), out);
        assertTrue(out.contains("crc32c=jdk(no native kernel: built without ISA-L support)"), out);
        assertTrue(out.contains("crc16 path=native ok"), out);
        assertFalse(out.contains("libisal mapped"), out);
    }

    /** Runs in the forked JVM: prints the guards line, checks one generate/verify, looks for libisal. */
    public static final class Probe {
        public static void main(String[] args) throws IOException {
            System.out.println(GuardPath.describe());
            BlockFormat f = BlockFormat.of(4096, 8, GuardType.CRC16, PiType.TYPE_1, PiLocation.FIRST);
            byte[] raw = new byte[64 * 4104];
            new SplittableRandom(8).nextBytes(raw);
            ByteBuffer nb = ByteBuffer.allocateDirect(raw.length).put(raw.clone()).clear();
            ByteBuffer jb = ByteBuffer.allocateDirect(raw.length).put(raw.clone()).clear();
            PiContext c = PiContext.builder(f).initialRefTag(7).build();
            PiContext nat = c.toBuilder().guardPath(GuardPath.Use.NATIVE).build();
            PiContext jav = c.toBuilder().guardPath(GuardPath.Use.JAVA).build();
            Pi.generate(nat, ScatterList.of(nb), 64);
            Pi.generate(jav, ScatterList.of(jb), 64);
            boolean same = nb.equals(jb) && Pi.verify(nat, ScatterList.of(nb), 64) == null;
            System.out.println("crc16 path=" + (GuardType.CRC16.isNativeByDefault() ? "native" : "java")
                    + (same ? " ok" : " MISMATCH"));
            for (String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
                if (line.contains("libisal")) {
                    System.out.println("libisal mapped: " + line);
                    break;
                }
            }
        }
    }
}
