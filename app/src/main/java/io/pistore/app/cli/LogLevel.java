package io.pistore.app.cli;

import java.util.Locale;

/** The levels of a server's log lines, most severe first; a line is printed when its level is at most the chosen one. */
public enum LogLevel {
    ERROR(java.util.logging.Level.SEVERE),
    WARN(java.util.logging.Level.WARNING),
    INFO(java.util.logging.Level.INFO),
    DEBUG(java.util.logging.Level.FINE);

    /** The java.util.logging level the transports' records (System.Logger) map to. */
    final java.util.logging.Level jul;

    LogLevel(java.util.logging.Level jul) {
        this.jul = jul;
    }

    static LogLevel parse(String s) {
        try {
            return valueOf(s.strip().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--log-level must be error, warn, info or debug, not '" + s + "'");
        }
    }

    /** The level of a java.util.logging record: SEVERE is ERROR, WARNING is WARN, below INFO is DEBUG. */
    static LogLevel of(java.util.logging.Level l) {
        int v = l.intValue();
        if (v >= java.util.logging.Level.SEVERE.intValue()) {
            return ERROR;
        }
        if (v >= java.util.logging.Level.WARNING.intValue()) {
            return WARN;
        }
        return v >= java.util.logging.Level.INFO.intValue() ? INFO : DEBUG;
    }
}
