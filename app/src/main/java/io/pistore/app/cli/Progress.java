package io.pistore.app.cli;

import java.io.PrintWriter;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * A one-line progress display on stderr with the rate and, when the total is known, the time left;
 * shown only when enabled (on a terminal, without --quiet: see {@link QuietOption}) and only once
 * the work has taken more than a second. The line is rewritten in place and erased when the work ends.
 */
public final class Progress implements AutoCloseable {
    private static final long SHOW_AFTER_NS = 1_000_000_000L;
    private static final long REFRESH_NS = 250_000_000L;

    private final PrintWriter err;
    private final String what;
    private final long total;
    private final boolean enabled;
    private final LongSupplier clock;
    private final long startNs;
    private long lastNs;
    private long done;
    private int shownWidth;

    /** {@code total} bytes, or -1 when unknown. */
    Progress(PrintWriter err, String what, long total, boolean enabled) {
        this(err, what, total, enabled, System::nanoTime);
    }

    Progress(PrintWriter err, String what, long total, boolean enabled, LongSupplier clock) {
        this.err = err;
        this.what = what;
        this.total = total;
        this.enabled = enabled;
        this.clock = clock;
        this.startNs = clock.getAsLong();
    }

    public void advance(long bytes) {
        done += bytes;
        if (!enabled) {
            return;
        }
        long now = clock.getAsLong();
        if (now - startNs < SHOW_AFTER_NS || now - lastNs < REFRESH_NS) {
            return;
        }
        lastNs = now;
        double secs = (now - startNs) / 1e9;
        double rate = done / secs;
        String line = total > 0
                ? String.format(Locale.ROOT, "%s: %3d%% %s of %s, %s/s, %s left", what, (int) (done * 100 / total),
                        bytes(done), bytes(total), bytes((long) rate), duration(rate > 0 ? (total - done) / rate : -1))
                : String.format(Locale.ROOT, "%s: %s, %s/s", what, bytes(done), bytes((long) rate));
        StringBuilder sb = new StringBuilder("\r").append(line);
        for (int i = line.length(); i < shownWidth; i++) {
            sb.append(' ');
        }
        shownWidth = Math.max(shownWidth, line.length());
        err.print(sb);
        err.flush();
    }

    /** 42 s, 3m05s, 2h07m; "?" when unknown. */
    static String duration(double seconds) {
        if (seconds < 0 || Double.isNaN(seconds) || Double.isInfinite(seconds)) {
            return "?";
        }
        long s = Math.round(Math.max(0, seconds));
        if (s < 60) {
            return s + " s";
        }
        if (s < 3600) {
            return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
        }
        return String.format(Locale.ROOT, "%dh%02dm", s / 3600, s % 3600 / 60);
    }

    public static String bytes(long n) {
        return io.pistore.engine.volume.ByteCount.format(n);
    }

    @Override
    public void close() {
        if (shownWidth > 0) {
            err.print("\r" + " ".repeat(shownWidth) + "\r");
            err.flush();
        }
    }
}
