package io.pistore.app.cli.serve;

import io.pistore.app.cli.CliException;
import io.pistore.app.cli.Numbers;
import io.pistore.server.PistoreServer;
import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * serve's background scrub (docs/OPERATIONS.md): how often a pass over the volumes starts, and how
 * fast it may read.
 */
final class ServeScrubOptions {
    @Option(names = "--scrub-every", paramLabel = "TIME",
            description = "Scrub the served volumes in the background: a pass TIME after the last one ended "
                    + "(30s, 15m, 12h, 7d), checking every block's stored PI as 'pistore scrub' does; bad blocks and "
                    + "a summary per volume go to the log and the metrics; a replicated volume is scrubbed by the "
                    + "peer that leads it, bad copies rewritten from good ones (default: no background scrub; "
                    + "config key: scrub-every).")
    String every;

    @Option(names = "--scrub-rate", paramLabel = "BYTES", defaultValue = "64MiB",
            description = "With --scrub-every: the most data the background scrub reads per second "
                    + "(default: ${DEFAULT-VALUE}; config key: scrub-rate).")
    String rate;

    /** Sets the builder's background scrub, if asked for; a usage error for a bad value. */
    void apply(PistoreServer.Builder b) {
        if (every == null) {
            return;
        }
        long bytes;
        try {
            bytes = Numbers.parseSize(rate);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--scrub-rate: " + e.getMessage());
        }
        if (bytes <= 0) {
            throw CliException.usage("--scrub-rate must be positive, not " + rate);
        }
        b.scrub(duration(every), bytes);
    }

    /** The start-up line of a background scrub, if one runs. */
    void describe(java.io.PrintWriter out) {
        if (every != null) {
            out.println("pistore serve: background scrub every " + every + " at most " + rate + "/s");
        }
    }

    /** {@code N} seconds, or N with a unit: s, m, h, d; positive. */
    static Duration duration(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        long unit = t.endsWith("d") ? 86400 : t.endsWith("h") ? 3600 : t.endsWith("m") ? 60 : 1;
        String n = Character.isLetter(t.isEmpty() ? '0' : t.charAt(t.length() - 1)) ? t.substring(0, t.length() - 1) : t;
        boolean unitKnown = n.length() == t.length() || "smhd".indexOf(t.charAt(t.length() - 1)) >= 0;
        try {
            long v = Long.parseLong(n);
            if (!unitKnown || v <= 0) {
                throw new NumberFormatException();
            }
            return Duration.ofSeconds(Math.multiplyExact(v, unit));
        } catch (NumberFormatException | ArithmeticException e) {
            throw CliException.usage("--scrub-every takes a positive duration such as 30s, 15m, 12h or 7d, not '" + s + "'");
        }
    }
}
