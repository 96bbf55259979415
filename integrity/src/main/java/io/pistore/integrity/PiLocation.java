package io.pistore.integrity;

import java.util.Locale;

/**
 * Where the PI tuple sits inside a block's metadata. With {@link #LAST} the guard also covers the
 * metadata bytes before the tuple (Linux {@code pi_offset > 0}, SPDK {@code dif_loc = false}).
 */
public enum PiLocation {
    FIRST, LAST;

    public static PiLocation parse(String s) {
        switch (s.trim().toLowerCase(Locale.ROOT)) {
            case "first": return FIRST;
            case "last": return LAST;
            default: throw new IllegalArgumentException("PI location must be first or last, not '" + s + "'");
        }
    }
}
