package io.pistore.integrity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a class's {@code main} in a fresh JVM on this test class path, with {@code jvmArgs} and
 * without {@code PISTORE_NATIVE} in its environment: how the tests see what a process binds at load
 * (the native library is chosen once per JVM).
 */
public final class ForkedJvm {
    private ForkedJvm() {
    }

    /** The child's stdout and stderr together; fails unless it exits 0 within {@code seconds}. */
    public static String run(Class<?> main, long seconds, String... jvmArgs) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of(jvmArgs));
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("PISTORE_NATIVE");
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(seconds, TimeUnit.SECONDS), "probe did not finish");
        assertEquals(0, p.exitValue(), out);
        return out;
    }
}
