package io.pistore.spi;

/**
 * How well a peer serves a volume to a host, as NVMe's Asymmetric Namespace Access states say it
 * of a path: the peer that leads a replicated volume's group is {@link #OPTIMIZED}, one that forwards
 * to the leader {@link #NON_OPTIMIZED}, one that cannot serve it now (no quorum, no leader known, no
 * such volume) {@link #INACCESSIBLE}. A volume that is not replicated is optimized wherever it is
 * served. The wire code is fixed, never the enum's order.
 */
public enum PathState {
    OPTIMIZED(0),
    NON_OPTIMIZED(1),
    INACCESSIBLE(2);

    private final int code;

    PathState(int code) {
        this.code = code;
    }

    /** The state's number on the wire. */
    public int code() {
        return code;
    }

    /** The state of wire code {@code code}, or null for an unknown code. */
    public static PathState of(int code) {
        for (PathState s : values()) {
            if (s.code == code) {
                return s;
            }
        }
        return null;
    }

    /** The state's name in log lines and docs ({@code optimized}, {@code non-optimized}, {@code inaccessible}). */
    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
}
