package io.pistore.engine.volume;

import java.util.Locale;

/** A byte count as people read it: {@code 512 B}, {@code 1.5 MiB}, {@code 2.0 TiB} (binary units, one decimal). */
public final class ByteCount {
    private ByteCount() {
    }

    public static String format(long n) {
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
}
