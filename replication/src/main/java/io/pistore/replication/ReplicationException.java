package io.pistore.replication;

import java.io.IOException;

/**
 * A replicated volume's operation failed as a group: no quorum answered in time, a replica refused
 * the data, or the group failed it. The message is one line, meant for the user.
 */
public final class ReplicationException extends IOException {
    private static final long serialVersionUID = 1L;

    public ReplicationException(String message) {
        super(message);
    }

    /** The innermost message of a failure, first line only. */
    public static String oneLine(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        String m = c.getMessage() == null ? c.getClass().getSimpleName() : c.getMessage();
        int nl = m.indexOf('\n');
        m = nl < 0 ? m : m.substring(0, nl);
        // Ratis puts whole log entries (their data included) in some messages: a line stays readable
        return m.length() <= LONGEST ? m : m.substring(0, LONGEST) + "... (" + (m.length() - LONGEST) + " characters more)";
    }

    /** The most characters of a cause {@link #oneLine} keeps. */
    private static final int LONGEST = 300;

    /** What failed, without the {@link java.util.concurrent.CompletionException} a future's stage wraps it in. */
    public static Throwable unwrap(Throwable t) {
        return t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
    }
}
