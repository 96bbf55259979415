package io.pistore.app.cli.serve;

import io.pistore.app.cli.CliException;
import io.pistore.app.cli.ExitCodes;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code pistore stop --pid-file FILE}: SIGTERM to the serve whose pid the file holds, then waits
 * until it has stopped (its volumes flushed, its data directory free), so that the next command
 * can use the directory at once. {@code kill $(cat FILE)} sends the same signal without waiting.
 */
@Command(name = "stop", description = {
    "Stops the serve whose pid --pid-file holds (SIGTERM, a clean stop) and waits until it has exited.",
    "Already stopped: says so, exit 0."})
public final class StopCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--pid-file", paramLabel = "FILE", required = true,
            description = "The file serve --pid-file wrote.")
    Path pidFile;

    @Option(names = "--timeout", paramLabel = "SECONDS", defaultValue = "30",
            description = "How long to wait for it to stop (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Override
    public Integer call() throws InterruptedException {
        PrintWriter out = spec.commandLine().getOut();
        if (timeoutSeconds < 1) {
            throw CliException.usage("--timeout must be at least 1 second, not " + timeoutSeconds);
        }
        long pid = readPid();
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        if (p.isEmpty() || !p.get().isAlive()) {
            out.println("pistore stop: no process " + pid + " runs: already stopped");
            return ExitCodes.OK;
        }
        Optional<String[]> args = p.get().info().arguments();
        if (args.isPresent() && !Arrays.asList(args.get()).contains("serve")) {
            throw CliException.usage("process " + pid + " of " + pidFile + " is no pistore serve: not stopped");
        }
        p.get().destroy();
        java.util.concurrent.CompletableFuture<ProcessHandle> exit = p.get().onExit();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
        try {
            // A daemon's parent is init: once it exits it stays a zombie until init reaps it, which
            // onExit waits for. Its volumes are flushed and its locks gone already: it has stopped.
            while (!exit.isDone() && !exited(pid)) {
                if (System.nanoTime() > deadline) {
                    throw CliException.failure("process " + pid + " still runs " + timeoutSeconds + " s after SIGTERM");
                }
                try {
                    exit.get(10, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    // look again
                }
            }
        } catch (ExecutionException e) {
            throw CliException.failure("cannot wait for process " + pid + ": " + e.getCause());
        }
        out.println("pistore stop: stopped pid " + pid);
        return ExitCodes.OK;
    }

    /**
     * Whether process {@code pid} has exited, waiting to be reaped or gone (Linux: its state in
     * {@code /proc/PID/stat} is Z or X, or the file is gone); false where that cannot be told.
     */
    static boolean exited(long pid) {
        String stat;
        try {
            stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        } catch (NoSuchFileException e) {
            return true;
        } catch (IOException e) {
            return false;
        }
        int end = stat.lastIndexOf(')'); // the name in parentheses may hold spaces and parentheses
        if (end < 0 || end + 2 >= stat.length()) {
            return false;
        }
        char state = stat.charAt(end + 2);
        return state == 'Z' || state == 'X';
    }

    private long readPid() {
        String text;
        try {
            text = Files.readString(pidFile).strip();
        } catch (NoSuchFileException e) {
            throw CliException.usage("--pid-file " + pidFile + ": no such file (is the server running?)");
        } catch (IOException e) {
            throw CliException.usage("cannot read --pid-file " + pidFile + ": " + e.getMessage());
        }
        try {
            long pid = Long.parseLong(text);
            if (pid > 0) {
                return pid;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw CliException.usage("--pid-file " + pidFile + " holds no pid: '" + text + "'");
    }
}
