package io.pistore.engine.scrub;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiError;
import java.io.PrintWriter;
import java.util.List;

/**
 * Prints one line per bad block, up to a limit, and counts them all:
 * {@code lba=N error=guard|app|ref expected=0x… actual=0x…} with values at the field's width;
 * expected is what the data and the options give, actual is what the stored PI holds.
 */
public final class BadBlockReport {
    private final PrintWriter out;
    private final long maxLines;
    private final BlockFormat format;
    private final CheckFlags checks;
    private long bad;
    private long printed;

    public BadBlockReport(PrintWriter out, long maxLines, BlockFormat format, CheckFlags checks) {
        this.out = out;
        this.maxLines = maxLines;
        this.format = format;
        this.checks = checks;
    }

    /** Errors of one chunk whose first block is block {@code firstLba} of the file. */
    public void add(long firstLba, List<PiError> errors) {
        for (PiError e : errors) {
            bad++;
            if (printed < maxLines) {
                out.println(line(format.guard(), e.offsetBy(firstLba)));
                printed++;
            }
        }
    }

    public long bad() {
        return bad;
    }

    /** {@code checked N blocks (FORMAT): B bad}, plus how many lines --max-errors held back. */
    public String summary(long blocks) {
        StringBuilder sb = new StringBuilder("checked ").append(blocks).append(blocks == 1 ? " block (" : " blocks (")
                .append(format);
        if (checks.bits() != CheckFlags.ALL.bits()) {
            sb.append(", checks ").append(checks);
        }
        sb.append("): ").append(bad).append(" bad");
        if (printed < bad) {
            sb.append(" (").append(bad - printed).append(" not shown, --max-errors ").append(maxLines).append(')');
        }
        return sb.toString();
    }

    static String line(GuardType g, PiError e) {
        int digits;
        switch (e.kind()) {
            case GUARD: digits = g.guardSize() * 2; break;
            case APP_TAG: digits = 4; break;
            default: digits = g.refTagSize() * 2; break;
        }
        return "lba=" + e.blockIndex() + " error=" + e.kind().shortName() + " expected=" + hex(e.expected(), digits)
                + " actual=" + hex(e.actual(), digits);
    }

    /** {@code 0x} and lower-case hex, zero-padded to {@code digits}. */
    public static String hex(long v, int digits) {
        String h = Long.toHexString(v);
        StringBuilder sb = new StringBuilder(2 + Math.max(digits, h.length())).append("0x");
        for (int i = h.length(); i < digits; i++) {
            sb.append('0');
        }
        return sb.append(h).toString();
    }
}
