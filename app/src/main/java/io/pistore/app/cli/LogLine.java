package io.pistore.app.cli;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.logging.Formatter;
import java.util.logging.LogRecord;

/**
 * The shape of every log line: ISO-8601 date and time with milliseconds and the zone offset, the
 * level, the message: {@code 2026-03-01T14:05:09.123+01:00 INFO connection from 127.0.0.1:50312}.
 * As a java.util.logging {@link Formatter} it gives the transports' records (System.Logger) the same
 * shape, with the logger's name before the message.
 */
final class LogLine extends Formatter {
    /** ISO-8601 with milliseconds always written (lines of one width) and Z for UTC. */
    private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSXXX");

    static String format(Instant at, LogLevel level, String message) {
        return OffsetDateTime.ofInstant(at, ZoneId.systemDefault()).format(ISO) + " " + level + " " + message;
    }

    @Override
    public String format(LogRecord r) {
        StringBuilder sb = new StringBuilder(format(r.getInstant(), LogLevel.of(r.getLevel()),
                (r.getLoggerName() == null ? "" : r.getLoggerName() + ": ") + formatMessage(r)));
        if (r.getThrown() != null) {
            sb.append(": ").append(r.getThrown());
        }
        return sb.append(System.lineSeparator()).toString();
    }
}
