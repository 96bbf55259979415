package io.pistore.integrity;

import java.util.Objects;

/**
 * Everything an operation needs to generate or check PI for one I/O: the block format, the check
 * flags, the initial reference tag, the application tag and its mask, and the guard seed.
 * Immutable and cheap; build one per request (as SPDK's {@code spdk_dif_ctx}).
 *
 * <p>Reference tag of block {@code i}: Types 1 and 2, {@code (initialRefTag + i)} at the format's
 * width (it rolls over from all-ones to 0); Type 3, {@code initialRefTag} for every block.
 */
public final class PiContext {
    private final BlockFormat format;
    private final CheckFlags checks;
    private final long initialRefTag;
    private final int appTag;
    private final int appMask;
    private final long guardSeed;
    private final GuardPath.Use guardPath;

    private PiContext(Builder b) {
        this(b.format, b.checks, b.initialRefTag, b.appTag, b.appMask, b.guardSeed, b.guardPath);
    }

    private PiContext(BlockFormat format, CheckFlags checks, long initialRefTag, int appTag, int appMask,
                      long guardSeed, GuardPath.Use guardPath) {
        this.format = Objects.requireNonNull(format, "format");
        this.checks = Objects.requireNonNull(checks, "checks");
        this.initialRefTag = initialRefTag;
        this.appTag = appTag;
        this.appMask = appMask;
        this.guardSeed = guardSeed;
        this.guardPath = Objects.requireNonNull(guardPath, "guardPath");
        if (guardPath == GuardPath.Use.NATIVE && format.hasPi() && !format.guard().hasNativePath()) {
            throw new IllegalArgumentException("no native path for guard " + format.guard().cliName() + " ("
                    + GuardPath.describe() + ")");
        }
        if (appTag < 0 || appTag > 0xFFFF) {
            throw new IllegalArgumentException("app tag must be 0 to 0xFFFF, not 0x" + Integer.toHexString(appTag));
        }
        if (appMask < 0 || appMask > 0xFFFF) {
            throw new IllegalArgumentException("app mask must be 0 to 0xFFFF, not 0x" + Integer.toHexString(appMask));
        }
        long refMask = format.guard().refTagMask();
        if ((initialRefTag & ~refMask) != 0) {
            throw new IllegalArgumentException("initial ref tag 0x" + Long.toHexString(initialRefTag)
                    + " does not fit the " + format.guard().refTagSize() * 8 + "-bit reference tag of guard "
                    + format.guard().cliName());
        }
        if ((guardSeed & ~format.guard().guardMask()) != 0) {
            throw new IllegalArgumentException("guard seed 0x" + Long.toHexString(guardSeed) + " does not fit the "
                    + format.guard().guardSize() * 8 + "-bit guard of " + format.guard().cliName());
        }
    }

    /**
     * The context of one request, in one allocation and without a builder (what a target or a
     * transport builds per request): the given checks and tag fields, seed 0, the default guard
     * path. Validated like {@link Builder#build()}.
     */
    public static PiContext of(BlockFormat format, CheckFlags checks, long initialRefTag, int appTag, int appMask) {
        return new PiContext(format, checks, initialRefTag, appTag, appMask, 0, GuardPath.Use.DEFAULT);
    }

    public static Builder builder(BlockFormat format) {
        return new Builder(format);
    }

    /** A context with all checks, ref tag 0, app tag 0, app mask 0xFFFF, seed 0. */
    public static PiContext of(BlockFormat format) {
        return builder(format).build();
    }

    public Builder toBuilder() {
        return new Builder(format).checks(checks).initialRefTag(initialRefTag).appTag(appTag).appMask(appMask)
                .guardSeed(guardSeed).guardPath(guardPath);
    }

    public BlockFormat format() {
        return format;
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

    public long guardSeed() {
        return guardSeed;
    }

    /** Which guard implementation operations with this context use (default: {@link GuardPath.Use#DEFAULT}). */
    public GuardPath.Use guardPath() {
        return guardPath;
    }

    /** The reference tag that block {@code index} of this I/O carries. */
    public long refTag(long index) {
        if (format.type() == PiType.TYPE_3) {
            return initialRefTag;
        }
        return (initialRefTag + index) & format.guard().refTagMask();
    }

    /**
     * The context for the part of this I/O that starts {@code blocks} blocks later: same fields, with
     * the initial reference tag advanced for Types 1 and 2 (Type 3 keeps its constant tag).
     */
    public PiContext advancedBy(long blocks) {
        if (blocks == 0 || format.type() == PiType.TYPE_3) {
            return this;
        }
        return toBuilder().initialRefTag(refTag(blocks)).build();
    }

    @Override
    public String toString() {
        return "PiContext{" + format + ", checks=" + checks + ", ref=0x" + Long.toHexString(initialRefTag)
                + ", app=0x" + Integer.toHexString(appTag) + "/0x" + Integer.toHexString(appMask)
                + ", seed=0x" + Long.toHexString(guardSeed)
                + (guardPath == GuardPath.Use.DEFAULT ? "" : ", path=" + guardPath) + "}";
    }

    /** Builder; defaults: all checks, ref tag 0, app tag 0, app mask 0xFFFF, seed 0. */
    public static final class Builder {
        private final BlockFormat format;
        private CheckFlags checks = CheckFlags.ALL;
        private long initialRefTag;
        private int appTag;
        private int appMask = 0xFFFF;
        private long guardSeed;
        private GuardPath.Use guardPath = GuardPath.Use.DEFAULT;

        private Builder(BlockFormat format) {
            this.format = Objects.requireNonNull(format, "format");
        }

        public Builder checks(CheckFlags c) {
            this.checks = c;
            return this;
        }

        public Builder initialRefTag(long r) {
            this.initialRefTag = r;
            return this;
        }

        public Builder appTag(int a) {
            this.appTag = a;
            return this;
        }

        public Builder appMask(int m) {
            this.appMask = m;
            return this;
        }

        public Builder guardSeed(long s) {
            this.guardSeed = s;
            return this;
        }

        /**
         * Which guard implementation to use for this context's operations (benchmarks, cross-checks,
         * {@code pistore pi speed}); NATIVE where the guard has none is an IllegalArgumentException.
         */
        public Builder guardPath(GuardPath.Use use) {
            this.guardPath = use;
            return this;
        }

        public PiContext build() {
            return new PiContext(this);
        }
    }
}
