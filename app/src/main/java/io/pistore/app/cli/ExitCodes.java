package io.pistore.app.cli;

/** Process exit codes of every {@code pistore} command. */
public final class ExitCodes {
    /** Done; for checks: every block passed. */
    public static final int OK = 0;
    /** A PI check found at least one bad block. */
    public static final int BAD_BLOCKS = 1;
    /** Bad arguments: unknown option or value, impossible format, missing or unusable file. */
    public static final int USAGE = 2;
    /** The command could not complete: an I/O error while it ran, or an internal failure. */
    public static final int FAILURE = 3;

    private ExitCodes() {
    }
}
