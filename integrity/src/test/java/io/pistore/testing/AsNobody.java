package io.pistore.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs commands as the unprivileged user {@code nobody} ({@code setpriv --reuid=nobody
 * --regid=nogroup --clear-groups}), for tests of what another local user can and cannot do with
 * pistore's files: a test running as root reads anything, so only a switch of user shows what the
 * modes keep out. Tests that need it are skipped with the reason where the tests do not run as root
 * or setpriv is missing. Their files go under {@link #traversableDir}, since nobody cannot even
 * pass through the usual 0700 temporary directories, which would make every refusal meaningless.
 */
public final class AsNobody {
    private AsNobody() {
    }

    /** What a command run as nobody printed (stdout and stderr together) and its exit code. */
    public record Run(int code, String output) {
        public boolean ok() {
            return code == 0;
        }
    }

    /** Skips the calling test unless this process is root and setpriv is installed. */
    public static void assumeAvailable() {
        String uid = uid();
        assumeTrue("0".equals(uid), "skipped: checking as user nobody needs the tests to run as root (uid " + uid + ")");
        assumeTrue(onPath("setpriv"), "skipped: setpriv is not installed (apt-get install util-linux)");
    }

    /**
     * A new directory {@code /tmp/PREFIX…}, mode 0711: nobody may pass through it to what pistore
     * made inside, but not list it.
     */
    public static Path traversableDir(String prefix) throws IOException {
        Path d = Files.createTempDirectory(Path.of("/tmp"), prefix);
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwx--x--x"));
        return d;
    }

    /** Runs {@code command} as nobody, with no supplementary groups, and waits up to 60 s for it. */
    public static Run run(String... command) throws IOException, InterruptedException {
        List<String> c = new ArrayList<>(List.of("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"));
        c.addAll(List.of(command));
        ProcessBuilder pb = new ProcessBuilder(c).redirectErrorStream(true);
        pb.directory(new File("/"));
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("as nobody, " + command[0] + " did not end within 60 s");
        }
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    /** Whether nobody can read the first byte of {@code file}. */
    public static boolean canRead(Path file) throws IOException, InterruptedException {
        return run("head", "-c", "1", file.toString()).ok();
    }

    /** Whether nobody can list {@code dir}. */
    public static boolean canList(Path dir) throws IOException, InterruptedException {
        return run("ls", dir.toString()).ok();
    }

    private static String uid() {
        try {
            return String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid"));
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static boolean onPath(String tool) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }
}
