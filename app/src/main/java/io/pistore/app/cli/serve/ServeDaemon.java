package io.pistore.app.cli.serve;

import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ExitCodes;
import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code serve --daemon}. A JVM cannot fork, so this process runs its own command line again, less
 * {@code --daemon}, as a child whose output is appended to a log file, and waits until the child
 * writes its pid into a ready file ({@link ServeReadiness#READY_FILE_ENV}) or exits. Ready: one line
 * with the pid and the log, exit 0, the child left running. Failed before ready: the child's error
 * line on stderr and its exit code.
 */
public final class ServeDaemon {
    /** How long the command waits for the server to be ready before it gives up waiting (exit 3). */
    static final long READY_TIMEOUT_SECONDS = 120;

    /** Set by {@link Main#main}: only then is this process's command line a pistore command to run again. */
    private static volatile boolean fromMain;

    private ServeDaemon() {
    }

    public static void launchedFromMain() {
        fromMain = true;
    }

    static int launch(CommandSpec spec, Path log, PrintWriter out, PrintWriter err)
            throws IOException, InterruptedException {
        List<String> command = childCommand(spec);
        Path ready = Files.createTempFile("pistore-serve-", ".ready");
        try {
            long logStart = Files.exists(log) ? Files.size(log) : 0;
            ProcessBuilder pb = new ProcessBuilder(command)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .redirectErrorStream(true);
            pb.environment().put(ServeReadiness.READY_FILE_ENV, ready.toString());
            Process child;
            try {
                child = pb.start();
            } catch (IOException e) {
                throw CliException.usage("--daemon: cannot start the server: " + e.getMessage());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(READY_TIMEOUT_SECONDS);
            while (Files.size(ready) == 0) {
                if (child.waitFor(20, TimeUnit.MILLISECONDS)) {
                    if (Files.size(ready) > 0) {
                        break; // ready, then stopped at once: it was up
                    }
                    err.println(errorLine(log, logStart, child.exitValue()));
                    err.flush();
                    return child.exitValue() == 0 ? ExitCodes.FAILURE : child.exitValue();
                }
                if (System.nanoTime() > deadline) {
                    err.println("pistore serve: not ready after " + READY_TIMEOUT_SECONDS + " s; it still runs, pid "
                            + child.pid() + ", log " + log);
                    err.flush();
                    return ExitCodes.FAILURE;
                }
            }
            out.println("pistore serve: running in the background, pid " + child.pid() + ", log " + log);
            out.flush();
            return ExitCodes.OK;
        } finally {
            Files.deleteIfExists(ready);
        }
    }

    /** This process's command line less {@code --daemon}: the JVM, its options, the main class, the arguments. */
    private static List<String> childCommand(CommandSpec spec) {
        ProcessHandle.Info info = ProcessHandle.current().info();
        Optional<String> java = info.command();
        Optional<String[]> jvmArgs = procCmdline().or(info::arguments);
        List<String> args = spec.root().commandLine().getParseResult().originalArgs();
        if (!fromMain || java.isEmpty() || jvmArgs.isEmpty() || !endsWith(List.of(jvmArgs.get()), args)) {
            throw CliException.usage("--daemon: this process's command line cannot be run again here; start serve "
                    + "in the background with --pid-file instead");
        }
        List<String> all = List.of(jvmArgs.get());
        List<String> command = new ArrayList<>();
        command.add(java.get());
        command.addAll(all.subList(0, all.size() - args.size()));
        for (String a : args) {
            if (!a.equals("--daemon") && !a.equals("--daemon=true")) {
                command.add(a);
            }
        }
        return command;
    }

    /**
     * The arguments of this process from {@code /proc/self/cmdline}, less the program: where the
     * class path is long, {@code ProcessHandle.Info.arguments()} is empty.
     */
    private static Optional<String[]> procCmdline() {
        try {
            String all = new String(Files.readAllBytes(Path.of("/proc/self/cmdline")), StandardCharsets.UTF_8);
            String[] parts = all.split("\0", -1);
            int n = all.endsWith("\0") ? parts.length - 1 : parts.length;
            return n < 1 ? Optional.empty() : Optional.of(java.util.Arrays.copyOfRange(parts, 1, n));
        } catch (IOException | UnsupportedOperationException e) {
            return Optional.empty();
        }
    }

    private static boolean endsWith(List<String> all, List<String> tail) {
        return all.size() >= tail.size() && all.subList(all.size() - tail.size(), all.size()).equals(tail);
    }

    /** The child's error: the last line it wrote that names pistore, else its last line, else its exit code. */
    private static String errorLine(Path log, long from, int code) throws IOException {
        String written = "";
        if (Files.exists(log)) {
            byte[] all = Files.readAllBytes(log);
            written = new String(all, (int) Math.min(from, all.length), (int) Math.max(0, all.length - from),
                    StandardCharsets.UTF_8);
        }
        String last = null;
        String named = null;
        for (String l : written.split("\n")) {
            if (!l.isBlank()) {
                last = l.strip();
                if (last.startsWith("pistore")) {
                    named = last;
                }
            }
        }
        String line = named != null ? named : last;
        return line != null ? line : "pistore serve: the server exited with " + code + " before it was ready (log " + log + ")";
    }
}
