package io.pistore.app.cli;

import java.io.PrintWriter;
import java.time.Clock;
import java.util.function.Consumer;
import java.util.logging.Handler;
import java.util.logging.Logger;

/**
 * The log of a running command (serve): one {@link LogLine} per event on its writer, lines below
 * the chosen level dropped. {@link #applyToTransports} sets the same level for the records the
 * transports write through System.Logger (java.util.logging).
 */
public final class ServerLog {
    private final PrintWriter out;
    private final LogLevel level;
    private final Clock clock;

    public ServerLog(PrintWriter out, LogLevel level) {
        this(out, level, Clock.systemDefaultZone());
    }

    ServerLog(PrintWriter out, LogLevel level, Clock clock) {
        this.out = out;
        this.level = level;
        this.clock = clock;
    }

    boolean enabled(LogLevel l) {
        return l.compareTo(level) <= 0;
    }

    void log(LogLevel l, String message) {
        if (!enabled(l)) {
            return;
        }
        String line = LogLine.format(clock.instant(), l, message);
        synchronized (out) {
            out.println(line);
            out.flush();
        }
    }

    public Consumer<String> at(LogLevel l) {
        return enabled(l) ? m -> log(l, m) : m -> { };
    }

    /**
     * pistore's loggers ({@code io.pistore.*}: the transports' records); held here because
     * java.util.logging forgets the level of a logger nobody references.
     */
    private static final Logger PISTORE = Logger.getLogger("io.pistore");

    /**
     * The level for the transports' records too: pistore's loggers get it, and the console handler
     * lets it through; the JDK's own loggers keep theirs (debug is pistore's, not the HTTP client's).
     */
    public void applyToTransports() {
        PISTORE.setLevel(level.jul);
        for (Handler h : Logger.getLogger("").getHandlers()) {
            if (h.getLevel().intValue() > level.jul.intValue()) {
                h.setLevel(level.jul);
            }
        }
    }

    /**
     * Gives the records of java.util.logging's console handler the shape of {@link LogLine}
     * (the launcher's JVM; tests that run the CLI in their own JVM keep theirs).
     */
    static void installLineFormat() {
        for (Handler h : Logger.getLogger("").getHandlers()) {
            h.setFormatter(new LogLine());
        }
    }
}
