package io.pistore.app.cli;

/**
 * A failure the command reports as one line on stderr, with an exit code; never a stack trace.
 */
public final class CliException extends RuntimeException {
    private final int exitCode;

    CliException(int exitCode, String message) {
        super(message, null, false, false);
        this.exitCode = exitCode;
    }

    /** Bad arguments or unusable files: exit 2. */
    public static CliException usage(String message) {
        return new CliException(ExitCodes.USAGE, message);
    }

    /** Something failed that the arguments did not cause: exit 1. */
    public static CliException failure(String message) {
        return new CliException(ExitCodes.FAILURE, message);
    }

    int exitCode() {
        return exitCode;
    }
}
