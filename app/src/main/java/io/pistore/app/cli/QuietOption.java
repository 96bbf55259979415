package io.pistore.app.cli;

import java.io.PrintWriter;
import picocli.CommandLine.Option;

/** {@code --quiet}: no progress line for long work (which shows one only on a terminal anyway). */
public final class QuietOption {
    @Option(names = "--quiet", description = "No progress line (shown only when the console is a terminal).")
    boolean quiet;

    /** A progress line for {@code total} bytes of work, shown unless quiet or not on a terminal. */
    public Progress progress(PrintWriter err, String what, long total) {
        return new Progress(err, what, total, !quiet && System.console() != null);
    }
}
