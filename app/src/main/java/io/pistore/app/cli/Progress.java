package io.pistore.app.cli;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * A one-line progress display on stderr, shown only on a terminal and only once the work has taken
 * more than a second; the line is erased when the work ends.
 */
final class Progress implements AutoCloseable {
    private static final long SHOW_AFTER_NS = 1_000_000_000L;
    private static final long REFRESH_NS = 250_000_000L;

    private final PrintWriter err;
    private final String what;
    private final long total;
    private final boolean enabled;
    private final long startNs = System.nanoTime();
    private long lastNs;
    private long done;
    private int shownWidth;

    /** {@code total} bytes, or -1 when unknown. */
    Progress(PrintWriter err, String what, long total) {
        this(err, what, total, System.console() != null);
    }

    Progress(PrintWriter err, String what, long total, boolean enabled) {
        this.err = err;
        this.what = what;
        this.total = total;
        this.enabled = enabled;
    }

    void advance(long bytes) {
        done += bytes;
        if (!enabled) {
            return;
        }
        long now = System.nanoTime();
        if (now - startNs < SHOW_AFTER_NS || now - lastNs < REFRESH_NS) {
            return;
        }
        lastNs = now;
        double secs = (now - startNs) / 1e9;
        String line = total > 0
                ? String.format(Locale.ROOT, "%s: %3d%% %s of %s, %s/s", what, (int) (done * 100 / total),
                        bytes(done), bytes(total), bytes((long) (done / secs)))
                : String.format(Locale.ROOT, "%s: %s, %s/s", what, bytes(done), bytes((long) (done / secs)));
        StringBuilder sb = new StringBuilder("\r").append(line);
        for (int i = line.length(); i < shownWidth; i++) {
            sb.append(' ');
        }
        shownWidth = Math.max(shownWidth, line.length());
        err.print(sb);
        err.flush();
    }

    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = n;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    @Override
    public void close() {
        if (shownWidth > 0) {
            err.print("\r" + " ".repeat(shownWidth) + "\r");
            err.flush();
        }
    }
}
