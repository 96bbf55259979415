package io.pistore.it.nbd;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.pistore.security.tls.TestPki;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * How a real NBD client (nbdcopy, nbdinfo, qemu-img, fio) ran: its exit code and its output,
 * stdout and stderr together. The interop tests run their tools through {@link #run}.
 */
record ToolRun(int code, String output) {
    /** Whether {@code tool} is an executable on the PATH. */
    static boolean onPath(String tool) {
        return TestPki.onPath(tool);
    }

    /** Skips the calling test when {@code tool} is missing, naming the Debian package that has it. */
    static void assumeTool(String tool, String pkg) {
        assumeTrue(onPath(tool), "skipped: " + tool + " is not installed (apt-get install " + pkg + ")");
    }

    /**
     * Runs {@code cmd} in {@code dir} (fio leaves its verify state file in the working directory),
     * failing the test if it outlives {@code seconds}.
     */
    static ToolRun run(Path dir, long seconds, String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).directory(dir.toFile()).start();
        p.getOutputStream().close();
        StringBuilder out = new StringBuilder();
        Thread reader = new Thread(() -> {
            try {
                out.append(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // process ended
            }
        });
        reader.start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            reader.join(5000);
            throw new AssertionError(String.join(" ", cmd) + " did not finish in " + seconds + " s: " + out);
        }
        reader.join(5000);
        return new ToolRun(p.exitValue(), out.toString());
    }
}
