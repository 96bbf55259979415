package io.pistore.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A tmpfs of a given size that a test mounts on a directory of its own, to meet a full file system
 * for real: root only, so a test assumes {@link #mount} succeeded and is skipped elsewhere.
 */
public final class SmallTmpfs {
    private SmallTmpfs() {
    }

    /** Mounts a tmpfs with {@code options} (e.g. {@code size=70M}) on {@code at}, made if missing; false where not allowed. */
    public static boolean mount(Path at, String options) throws IOException, InterruptedException {
        Files.createDirectories(at);
        return run("mount", "-t", "tmpfs", "-o", options, "tmpfs", at.toString());
    }

    /** Gives the tmpfs on {@code at} other options (a larger size: room made). */
    public static boolean remount(Path at, String options) throws IOException, InterruptedException {
        return run("mount", "-o", "remount," + options, at.toString());
    }

    /** Unmounts {@code at} lazily: a mapping the JVM has not dropped yet keeps the mount busy. */
    public static void unmount(Path at) throws IOException, InterruptedException {
        run("umount", "-l", at.toString());
    }

    private static boolean run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    }
}
