package io.pistore.app.cli.serve;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import picocli.CommandLine.Option;

/**
 * How {@code serve} says it is ready, in the ways scripts and service managers use: {@code --pid-file}
 * (written once every listener is up, removed on a clean stop), {@code --daemon} (the command returns
 * once the server it started in the background is ready; see {@link ServeDaemon}) and, when
 * {@code NOTIFY_SOCKET} is set, systemd's {@code READY=1}. Java has no Unix datagram socket, so the
 * notification is sent by {@code systemd-notify}, which systemd accepts with {@code NotifyAccess=all}.
 * {@link #ready} is called once, after the last listener of the server is up.
 */
public final class ServeReadiness {
    /** The file a {@code --daemon} parent waits on: its child writes its pid into it once ready. */
    static final String READY_FILE_ENV = "PISTORE_SERVE_READY_FILE";

    @Option(names = "--pid-file", paramLabel = "FILE",
            description = "Write the server's pid to FILE once it is ready: every listener (transport, NBD, "
                    + "metrics, replica, control socket) is up; removed on a clean stop (config key: pid-file).")
    Path pidFile;

    @Option(names = "--daemon",
            description = "Start the server in the background and return once it is ready, printing its pid and "
                    + "log file; when it fails to start, print its error and exit with its code (config key: daemon).")
    boolean daemon;

    @Option(names = "--log-file", paramLabel = "FILE",
            description = "With --daemon: the file the server's output is appended to (default: serve.log in "
                    + "--data; in the current directory with --memory-volume or --target).")
    Path logFile;

    private boolean pidWritten;

    /** Whether this process is to start the server as a child and wait for it (not the child itself). */
    boolean launchesDaemon() {
        return daemon && System.getenv(READY_FILE_ENV) == null;
    }

    /** The server is up: the pid file, the waiting {@code --daemon} parent, systemd. */
    void ready(PrintWriter out, Consumer<String> log) {
        out.flush();
        long pid = ProcessHandle.current().pid();
        if (pidFile != null) {
            try {
                writeAtomically(pidFile, pid + "\n");
                pidWritten = true;
            } catch (IOException e) {
                log.accept("cannot write --pid-file " + pidFile + ": " + describe(e));
            }
        }
        String readyFile = System.getenv(READY_FILE_ENV);
        if (readyFile != null) {
            try {
                writeAtomically(Path.of(readyFile), pid + "\n");
            } catch (IOException e) {
                log.accept("cannot tell the starting command that this server is ready: " + describe(e));
            }
        }
        String notifySocket = System.getenv("NOTIFY_SOCKET");
        if (notifySocket != null && !notifySocket.isEmpty()) {
            notifySystemd(pid, log);
        }
    }

    /** A clean stop: the pid file goes, if it still names this process. */
    void stopped() {
        if (!pidWritten) {
            return;
        }
        pidWritten = false;
        try {
            if (Files.readString(pidFile).strip().equals(Long.toString(ProcessHandle.current().pid()))) {
                Files.delete(pidFile);
            }
        } catch (IOException e) {
            // gone already, or replaced by another server's: nothing of ours to remove
        }
    }

    /** {@code systemd-notify --ready --pid=PID}: READY=1 and MAINPID, sent from a child process. */
    private static void notifySystemd(long pid, Consumer<String> log) {
        try {
            Process p = new ProcessBuilder("systemd-notify", "--ready", "--pid=" + pid)
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                log.accept("NOTIFY_SOCKET is set, but systemd-notify did not return within 10 s");
            } else if (p.exitValue() != 0) {
                log.accept("NOTIFY_SOCKET is set, but systemd-notify --ready failed (exit " + p.exitValue() + ")");
            }
        } catch (IOException e) {
            log.accept("NOTIFY_SOCKET is set, but systemd-notify is not installed: systemd is not told READY=1 "
                    + "(use Type=forking with --daemon --pid-file, see docs/OPERATIONS.md)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void writeAtomically(Path file, String text) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Path tmp = Files.createTempFile(dir, "." + file.getFileName(), ".tmp");
        try {
            Files.writeString(tmp, text);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private static String describe(IOException e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }

    /**
     * SIGINT and SIGTERM stop the server cleanly, and it exits 0: handled here, they do not start the
     * JVM's shutdown (which would end the process with 130 or 143). Returns what puts the previous
     * handlers back.
     */
    @SuppressWarnings("restriction")
    public static Runnable onStopSignals(Runnable stop) {
        sun.misc.SignalHandler h = s -> stop.run();
        sun.misc.SignalHandler prevInt = handle("INT", h);
        sun.misc.SignalHandler prevTerm = handle("TERM", h);
        return () -> {
            if (prevInt != null) {
                handle("INT", prevInt);
            }
            if (prevTerm != null) {
                handle("TERM", prevTerm);
            }
        };
    }

    @SuppressWarnings("restriction")
    private static sun.misc.SignalHandler handle(String name, sun.misc.SignalHandler h) {
        try {
            return sun.misc.Signal.handle(new sun.misc.Signal(name), h);
        } catch (IllegalArgumentException e) {
            return null; // the JVM was started with -Xrs, or the signal is in use: the shutdown hook stops it
        }
    }
}
