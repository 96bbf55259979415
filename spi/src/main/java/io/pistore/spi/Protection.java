package io.pistore.spi;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.PiContext;

/**
 * The protection fields of one request, as NVMe carries them: PRACT, the check flags, the initial
 * reference tag, the application tag and its mask.
 *
 * <p>PRACT=1 (<b>insert / strip</b>): the host has no PI in memory; the next hop generates it on a
 * write and checks-and-removes it on a read. PRACT=0 (<b>pass</b>): PI travels with the data and is
 * checked at each hop as the check flags say.
 */
public final class Protection {
    /** No PI work: for volumes without PI, or when the caller opts out. */
    public static final Protection NONE = new Protection(false, CheckFlags.NONE, 0, 0, 0);

    private final boolean pract;
    private final CheckFlags checks;
    private final long initialRefTag;
    private final int appTag;
    private final int appMask;

    public Protection(boolean pract, CheckFlags checks, long initialRefTag, int appTag, int appMask) {
        if (appTag < 0 || appTag > 0xFFFF || appMask < 0 || appMask > 0xFFFF) {
            throw new IllegalArgumentException("app tag and mask must be 0 to 0xFFFF");
        }
        this.pract = pract;
        this.checks = checks;
        this.initialRefTag = initialRefTag;
        this.appTag = appTag;
        this.appMask = appMask;
    }

    /** PRACT=1, all checks, the given initial reference tag, app tag 0 with mask 0 (app not compared). */
    public static Protection insertStrip(long initialRefTag) {
        return new Protection(true, CheckFlags.ALL, initialRefTag, 0, 0);
    }

    /** PRACT=0 with the given checks. */
    public static Protection pass(CheckFlags checks, long initialRefTag, int appTag, int appMask) {
        return new Protection(false, checks, initialRefTag, appTag, appMask);
    }

    /**
     * PRACT=1 with all checks for the request that starts at {@code lba} of a volume in format
     * {@code f}: what a host that has no PI in memory sends. {@link #NONE} for a format without PI.
     */
    public static Protection insertStrip(BlockFormat f, long lba) {
        return f.hasPi() ? insertStrip(f.refTagOf(lba)) : NONE;
    }

    /**
     * The PI context that checks or generates these fields over blocks of format {@code f}: the one
     * place request protection becomes a {@link PiContext}, for every hop.
     */
    public PiContext context(BlockFormat f) {
        return PiContext.of(f, checks, initialRefTag, appTag, appMask);
    }

    public boolean pract() {
        return pract;
    }

    public CheckFlags checks() {
        return checks;
    }

    public long initialRefTag() {
        return initialRefTag;
    }

    public int appTag() {
        return appTag;
    }

    public int appMask() {
        return appMask;
    }

    @Override
    public String toString() {
        return (pract ? "insert/strip" : "pass") + " checks=" + checks + " ref=0x" + Long.toHexString(initialRefTag)
                + " app=0x" + Integer.toHexString(appTag) + "/0x" + Integer.toHexString(appMask);
    }
}
