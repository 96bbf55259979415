package io.pistore.engine.volume;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Another process that opens a data directory: {@code try DIR} opens and closes it (exit 0, or 2 with
 * the refusal on stdout); {@code hold DIR} opens it, says {@code opened} and keeps it until killed.
 * Started by the tests in a JVM of its own with the tests' class path.
 */
final class LockProbe implements AutoCloseable {
    final Process process;
    private final BufferedReader out;

    private LockProbe(Process p) {
        this.process = p;
        this.out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    }

    public static void main(String[] args) throws Exception {
        VolumeStore s;
        try {
            s = VolumeStore.open(Path.of(args[1]), 0, "lock probe");
        } catch (DataDirInUseException e) {
            System.out.println(e.getMessage());
            System.exit(2);
            return;
        }
        System.out.println("opened");
        System.out.flush();
        if (args[0].equals("hold")) {
            Thread.sleep(Long.MAX_VALUE); // not a synchronisation: the holder stays until it is killed
        }
        s.close();
    }

    static LockProbe start(String mode, Path dir) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(List.of(
                System.getProperty("java.home") + File.separator + "bin" + File.separator + "java",
                "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), LockProbe.class.getName(),
                mode, dir.toString()));
        pb.redirectErrorStream(true);
        return new LockProbe(pb.start());
    }

    /** The first line the probe printed. */
    String firstLine() throws IOException {
        return out.readLine();
    }

    /** {@code try DIR}: the exit code and what the probe printed. */
    static String[] tryOpen(Path dir) throws Exception {
        try (LockProbe p = start("try", dir)) {
            String line = p.firstLine();
            if (!p.process.waitFor(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("lock probe did not end: " + line);
            }
            return new String[] {Integer.toString(p.process.exitValue()), line};
        }
    }

    /** kill -9. */
    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }
}
