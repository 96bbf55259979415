package io.pistore.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Ctrl-C for a child process the tests started: SIGINT, or SIGTERM when the child ignores SIGINT. A
 * build started as a background job runs with SIGINT ignored, every process under it inherits that,
 * and a JVM that starts with SIGINT ignored never sees it; the CLI ends a run the same way on either
 * signal.
 */
public final class CtrlC {
    private CtrlC() {
    }

    /** Sends the signal to process {@code pid}; throws when {@code kill} fails (the process is gone). */
    public static void send(long pid) throws IOException, InterruptedException {
        String signal = ignoresSigint(pid) ? "-TERM" : "-INT";
        int code = new ProcessBuilder("kill", signal, Long.toString(pid)).inheritIO().start().waitFor();
        if (code != 0) {
            throw new IOException("kill " + signal + " " + pid + " exited " + code);
        }
    }

    /** Whether process {@code pid} ignores SIGINT (signal 2: bit 1 of the SigIgn mask of its status). */
    static boolean ignoresSigint(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("SigIgn:")) {
                return (Long.parseUnsignedLong(line.substring("SigIgn:".length()).trim(), 16) & 2L) != 0;
            }
        }
        return false;
    }
}
