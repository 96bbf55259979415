package io.pistore.it;

import io.pistore.testkit.FreePorts;
import io.pistore.testkit.TestFiles;

import io.pistore.app.cli.Main;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * How the tests start a {@code pistore} CLI in a JVM of its own ({@code serve}, {@code bench},
 * {@code stop}, the documents' {@code ./pistore}): this JVM's {@code java}, the build's jars (this
 * JVM's class path without its test-classes directories: the test classes, e.g. the test-only {@code faulty}
 * transport, are not part of the CLI a user runs), and options for a short-lived process: one GC
 * thread, the client compiler only, and the application classes from a class-data-sharing archive
 * (AppCDS) of those jars, made once per build by a {@code serve} that this class starts and stops.
 * The archive changes how fast classes load, never which classes or what they do: a JVM that
 * cannot use it (a jar rebuilt since) loads them from the jars. {@code -Dpistore.it.cds=false}
 * starts the processes without it.
 */
public final class CliJvm {
    private static final String MAIN = "io.pistore.app.cli.Main";
    private static final List<String> OPTIONS = List.of("-Xss1m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "--add-exports", "java.base/sun.nio.ch=ALL-UNNAMED");
    private static Path archive;
    private static boolean archiveTried;

    private CliJvm() {
    }

    /** The {@code java} of this JVM. */
    private static String java() {
        return System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    }

    /**
     * This JVM's class path without its test classes: the jars of the build (or, in a reactor run
     * that stops before {@code package}, the modules' {@code classes} directories) and their libraries.
     */
    private static String jars() {
        List<String> kept = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path p = e.isEmpty() ? null : Path.of(e);
            if (p != null && (Files.isRegularFile(p)
                    || Files.isDirectory(p) && p.getFileName().toString().equals("classes"))) {
                kept.add(e);
            }
        }
        return String.join(File.pathSeparator, kept);
    }

    /**
     * The JVM options of a child process whose class path starts with {@link #jars()}: the
     * short-lived-process options and, where one could be made, the class-data-sharing archive.
     */
    private static List<String> options() {
        List<String> o = new ArrayList<>(OPTIONS);
        Path a = archive();
        if (a != null) {
            o.add("-XX:SharedArchiveFile=" + a);
            o.add("-Xlog:cds=off,cds+dynamic=off"); // a stale archive is skipped without a warning line
        }
        return o;
    }

    /** {@code java OPTIONS -cp JARS io.pistore.app.cli.Main}, to which the command's arguments are added. */
    public static List<String> command(List<String> jvmOptions) {
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        cmd.addAll(options());
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(jars());
        cmd.add(MAIN);
        return cmd;
    }

    /**
     * The archive of this build's jars (made on first use, under {@code target/cli-cds}, named by
     * the jars' paths, sizes and times), or null when it is switched off or could not be made.
     */
    static synchronized Path archive() {
        if (archiveTried) {
            return archive;
        }
        archiveTried = true;
        if (!Boolean.parseBoolean(System.getProperty("pistore.it.cds", "true"))) {
            return null;
        }
        try {
            Path dir = Path.of("target", "cli-cds").toAbsolutePath();
            Files.createDirectories(dir);
            Path a = dir.resolve("cli-" + key() + ".jsa");
            // one test JVM makes it, another (forkCount > 1) waits for it
            try (FileChannel lock = FileChannel.open(dir.resolve("lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE)) {
                FileLock held = lock.lock();
                try {
                    if (!Files.exists(a)) {
                        make(a, dir);
                    }
                } finally {
                    held.release();
                }
            }
            archive = Files.exists(a) ? a : null;
        } catch (IOException | InterruptedException | RuntimeException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            System.out.println("[cli-jvm] no class-data archive, child JVMs load classes from the jars: " + e);
        }
        return archive;
    }

    private static String key() throws IOException {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            d.update(java().getBytes(StandardCharsets.UTF_8));
            for (String e : jars().split(File.pathSeparator)) {
                Path p = Path.of(e);
                d.update((e + "|" + Files.size(p) + "|" + Files.getLastModifiedTime(p).toMillis() + "\n")
                        .getBytes(StandardCharsets.UTF_8));
            }
            return HexFormat.of().formatHex(d.digest(), 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs the training: {@code serve} with a replicated volume on tcp and NBD (the classes that the
     * tests' processes load the most of) until it listens, then SIGTERM; the JVM writes the archive
     * as it exits.
     */
    private static void make(Path a, Path dir) throws IOException, InterruptedException {
        Path data = Files.createTempDirectory(dir, "training");
        int replicaPort = FreePorts.next();
        StringWriter out = new StringWriter();
        try (PrintWriter w = new PrintWriter(out, true)) {
            int code = Main.run(w, w, "volume", "create", "--data", data.toString(), "rv", "--size", "1MiB",
                    "--format", "4096+8", "--replica-id", "n1", "--replicas", "n1=127.0.0.1:" + replicaPort);
            if (code != 0) {
                throw new IOException("training volume: " + out);
            }
        }
        Path partial = dir.resolve(a.getFileName() + ".part");
        Path log = data.resolve("serve.out");
        List<String> cmd = new ArrayList<>(List.of(java()));
        cmd.addAll(OPTIONS);
        cmd.addAll(List.of("-XX:ArchiveClassesAtExit=" + partial, "-cp", jars(), MAIN, "serve", "--data",
                data.toString(), "--transport", "tcp", "--listen", "127.0.0.1:0", "--nbd", "127.0.0.1:0",
                "--replica-id", "n1", "--replica-listen", "127.0.0.1:" + replicaPort));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!Files.readString(log).contains(" on tcp ")) {
                if (!p.isAlive() || System.nanoTime() > end) {
                    throw new IOException("training serve did not listen: " + Files.readString(log));
                }
                p.waitFor(50, TimeUnit.MILLISECONDS); // ends early if the process exits
            }
        } finally {
            p.destroy(); // SIGTERM: serve stops, the JVM writes the archive as it exits
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        // 143: SIGTERM came before serve took over the stop signals; the JVM still writes the archive
        if ((p.exitValue() != 0 && p.exitValue() != 143) || !Files.exists(partial)) {
            throw new IOException("training serve exited " + p.exitValue() + " without an archive: "
                    + Files.readString(log));
        }
        Files.move(partial, a, StandardCopyOption.ATOMIC_MOVE);
        TestFiles.deleteTree(data); // the training's data, no longer needed
    }
}
