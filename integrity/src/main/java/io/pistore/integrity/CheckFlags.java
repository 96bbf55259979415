package io.pistore.integrity;

import java.util.Locale;

/** Which PI fields a verify checks: guard, application tag, reference tag. Immutable. */
public final class CheckFlags {
    private static final int GUARD_BIT = 1;
    private static final int APP_BIT = 2;
    private static final int REF_BIT = 4;
    private static final CheckFlags[] ALL_VALUES = new CheckFlags[8];

    static {
        for (int i = 0; i < 8; i++) {
            ALL_VALUES[i] = new CheckFlags(i);
        }
    }

    public static final CheckFlags NONE = ALL_VALUES[0];
    public static final CheckFlags ALL = ALL_VALUES[7];
    public static final CheckFlags GUARD = ALL_VALUES[GUARD_BIT];
    public static final CheckFlags APP = ALL_VALUES[APP_BIT];
    public static final CheckFlags REF = ALL_VALUES[REF_BIT];

    private final int bits;

    private CheckFlags(int bits) {
        this.bits = bits;
    }

    public static CheckFlags of(boolean guard, boolean app, boolean ref) {
        return ALL_VALUES[(guard ? GUARD_BIT : 0) | (app ? APP_BIT : 0) | (ref ? REF_BIT : 0)];
    }

    /** From bits: 1 guard, 2 app, 4 ref. */
    public static CheckFlags fromBits(int bits) {
        if ((bits & ~7) != 0) {
            throw new IllegalArgumentException("check flags must be a combination of 1 (guard), 2 (app), 4 (ref), not " + bits);
        }
        return ALL_VALUES[bits];
    }

    /** Parses a comma-separated list of guard, app, ref; also "all" and "none". */
    public static CheckFlags parse(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        if (t.equals("all")) {
            return ALL;
        }
        if (t.equals("none") || t.isEmpty()) {
            return NONE;
        }
        int bits = 0;
        for (String part : t.split(",")) {
            switch (part.trim()) {
                case "guard": bits |= GUARD_BIT; break;
                case "app": bits |= APP_BIT; break;
                case "ref": bits |= REF_BIT; break;
                default:
                    throw new IllegalArgumentException("unknown check '" + part.trim() + "' (expected guard, app, ref, all or none)");
            }
        }
        return ALL_VALUES[bits];
    }

    public boolean guard() {
        return (bits & GUARD_BIT) != 0;
    }

    public boolean app() {
        return (bits & APP_BIT) != 0;
    }

    public boolean ref() {
        return (bits & REF_BIT) != 0;
    }

    public int bits() {
        return bits;
    }

    public boolean isNone() {
        return bits == 0;
    }

    @Override
    public String toString() {
        if (bits == 0) {
            return "none";
        }
        StringBuilder sb = new StringBuilder();
        if (guard()) sb.append("guard,");
        if (app()) sb.append("app,");
        if (ref()) sb.append("ref,");
        return sb.substring(0, sb.length() - 1);
    }
}
