package io.pistore.integrity;

import io.pistore.integrity.internal.GuardAlgorithm;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Random;

/**
 * The PI operations: stateless, each taking a {@link PiContext} and scatter lists (the shape of
 * SPDK's {@code dif.h}). Two layouts:
 * <ul>
 *   <li><b>interleaved</b> (DIF, extended LBA): one list, each block {@code DATA} bytes then
 *       {@code META} bytes;
 *   <li><b>separate</b> (DIX): a data list of {@code DATA} bytes per block and a metadata list of
 *       {@code META} bytes per block.
 * </ul>
 *
 * <p><b>Generate</b> writes the complete tuple (guard, the context's app tag, the block's reference
 * tag) whatever the check flags say, and leaves the other metadata bytes as they are; the check flags
 * govern verification only. <b>Verify</b> skips escaped blocks, then checks guard, app tag and
 * reference tag in that order as the flags ask; Type 3 never checks the reference tag. A format
 * without PI (Type 0) makes every operation a no-op that finds nothing.
 *
 * <p>Lists must hold at least {@code nblocks} blocks; a shorter list is an
 * {@link IllegalArgumentException} before anything is read or written.
 */
public final class Pi {
    private Pi() {
    }

    // ---------------------------------------------------------------- generate / verify

    /** Generates the PI of {@code nblocks} interleaved blocks in place. */
    public static void generate(PiContext ctx, ScatterList blocks, long nblocks) {
        if (ctx.format().hasPi()) {
            BlockWalker.interleaved(ctx.format(), blocks, nblocks, new GenerateOp(ctx, nblocks));
        } else {
            BlockWalker.checkLength("the interleaved list", blocks, nblocks * ctx.format().blockSize());
        }
    }

    /** Generates the PI of {@code nblocks} blocks into the separate metadata list (also: insert for DIX). */
    public static void generate(PiContext ctx, ScatterList data, ScatterList metadata, long nblocks) {
        if (ctx.format().hasPi()) {
            BlockWalker.separate(ctx.format(), data, metadata, nblocks, new GenerateOp(ctx, nblocks));
        } else {
            BlockWalker.checkLength("the data list", data, nblocks * ctx.format().dataSize());
            BlockWalker.checkLength("the metadata list", metadata, nblocks * ctx.format().metadataSize());
        }
    }

    /** Verifies {@code nblocks} interleaved blocks; the first error, or null when all pass. */
    public static PiError verify(PiContext ctx, ScatterList blocks, long nblocks) {
        if (!ctx.format().hasPi() || ctx.checks().isNone()) {
            BlockWalker.checkLength("the interleaved list", blocks, nblocks * ctx.format().blockSize());
            return null;
        }
        VerifyOp op = new VerifyOp(ctx, 1, nblocks);
        BlockWalker.interleaved(ctx.format(), blocks, nblocks, op);
        return op.first;
    }

    /** Verifies separate data and metadata; the first error, or null when all pass. */
    public static PiError verify(PiContext ctx, ScatterList data, ScatterList metadata, long nblocks) {
        if (!ctx.format().hasPi() || ctx.checks().isNone()) {
            BlockWalker.checkLength("the data list", data, nblocks * ctx.format().dataSize());
            BlockWalker.checkLength("the metadata list", metadata, nblocks * ctx.format().metadataSize());
            return null;
        }
        VerifyOp op = new VerifyOp(ctx, 1, nblocks);
        BlockWalker.separate(ctx.format(), data, metadata, nblocks, op);
        return op.first;
    }

    /** Verifies interleaved blocks; up to {@code maxErrors} errors (one per bad block), in block order. */
    public static List<PiError> verifyAll(PiContext ctx, ScatterList blocks, long nblocks, int maxErrors) {
        requirePositive(maxErrors);
        if (!ctx.format().hasPi() || ctx.checks().isNone()) {
            BlockWalker.checkLength("the interleaved list", blocks, nblocks * ctx.format().blockSize());
            return Collections.emptyList();
        }
        VerifyOp op = new VerifyOp(ctx, maxErrors, nblocks);
        BlockWalker.interleaved(ctx.format(), blocks, nblocks, op);
        return op.errors();
    }

    /** Verifies separate data and metadata; up to {@code maxErrors} errors, in block order. */
    public static List<PiError> verifyAll(PiContext ctx, ScatterList data, ScatterList metadata, long nblocks,
                                          int maxErrors) {
        requirePositive(maxErrors);
        if (!ctx.format().hasPi() || ctx.checks().isNone()) {
            BlockWalker.checkLength("the data list", data, nblocks * ctx.format().dataSize());
            BlockWalker.checkLength("the metadata list", metadata, nblocks * ctx.format().metadataSize());
            return Collections.emptyList();
        }
        VerifyOp op = new VerifyOp(ctx, maxErrors, nblocks);
        BlockWalker.separate(ctx.format(), data, metadata, nblocks, op);
        return op.errors();
    }

    // ---------------------------------------------------------------- insert / strip

    /**
     * Insert: copies {@code nblocks} data-only blocks into the interleaved list {@code out}, with
     * metadata that is zero apart from the generated PI tuple.
     */
    public static void insert(PiContext ctx, ScatterList data, ScatterList out, long nblocks) {
        BlockFormat f = ctx.format();
        BlockWalker.checkLength("the data list", data, nblocks * f.dataSize());
        BlockWalker.checkLength("the interleaved list", out, nblocks * f.blockSize());
        Copier.spread(data, out, f.dataSize(), f.metadataSize(), nblocks);
        generate(ctx, out, nblocks);
    }

    /**
     * Strip: verifies {@code nblocks} interleaved blocks and, only when all pass, copies their data
     * into the data-only list {@code out}. Returns the first error (and then {@code out} is
     * untouched), or null.
     */
    public static PiError strip(PiContext ctx, ScatterList blocks, ScatterList out, long nblocks) {
        BlockFormat f = ctx.format();
        BlockWalker.checkLength("the data list", out, nblocks * f.dataSize());
        PiError e = verify(ctx, blocks, nblocks);
        if (e != null) {
            return e;
        }
        Copier.gather(blocks, out, f.dataSize(), f.metadataSize(), nblocks);
        return null;
    }

    /**
     * The PRACT=1 write path (the side without PI in memory hands data to the next hop, which adds
     * it). When the metadata is exactly the tuple, {@code src} is data only and this is
     * {@link #insert}. When the metadata is larger, {@code src} is interleaved and carries the
     * application's own metadata: it is copied to {@code dst} and only the PI tuple is overwritten,
     * unchecked (NVM Command Set, PRACT with metadata larger than the PI).
     */
    public static void practInsert(PiContext ctx, ScatterList src, ScatterList dst, long nblocks) {
        BlockFormat f = ctx.format();
        if (f.metadataSize() == f.tupleSize()) {
            insert(ctx, src, dst, nblocks);
            return;
        }
        long len = nblocks * f.blockSize();
        BlockWalker.checkLength("the source list", src, len);
        BlockWalker.checkLength("the destination list", dst, len);
        Copier.copy(src, 0, dst, 0, len);
        generate(ctx, dst, nblocks);
    }

    /**
     * The PRACT=1 read path. When the metadata is exactly the tuple this is {@link #strip}; when it
     * is larger, the blocks are verified and copied whole (the PI passes through to the reader).
     * Returns the first error (then {@code dst} is untouched), or null.
     */
    public static PiError practStrip(PiContext ctx, ScatterList src, ScatterList dst, long nblocks) {
        BlockFormat f = ctx.format();
        if (f.metadataSize() == f.tupleSize()) {
            return strip(ctx, src, dst, nblocks);
        }
        long len = nblocks * f.blockSize();
        BlockWalker.checkLength("the destination list", dst, len);
        PiError e = verify(ctx, src, nblocks);
        if (e != null) {
            return e;
        }
        Copier.copy(src, 0, dst, 0, len);
        return null;
    }

    // ---------------------------------------------------------------- remap

    /**
     * Rewrites the reference tags of interleaved blocks to start at {@code newInitialRefTag} (Types 1
     * and 2: plus the block index; Type 3: constant). Escaped blocks are left untouched. With
     * {@code checkOld}, each old tag must equal the context's expected tag (Types 1 and 2): the walk
     * stops at the first mismatch and returns it, with the blocks before it already remapped.
     */
    public static PiError remapRefTag(PiContext ctx, ScatterList blocks, long nblocks, long newInitialRefTag,
                                      boolean checkOld) {
        if (!ctx.format().hasPi()) {
            BlockWalker.checkLength("the interleaved list", blocks, nblocks * ctx.format().blockSize());
            return null;
        }
        RemapOp op = new RemapOp(ctx, newInitialRefTag, checkOld);
        BlockWalker.interleaved(ctx.format(), blocks, nblocks, op);
        return op.error;
    }

    /** {@link #remapRefTag} on a separate metadata list (the data is not needed). */
    public static PiError remapRefTagSeparate(PiContext ctx, ScatterList metadata, long nblocks,
                                              long newInitialRefTag, boolean checkOld) {
        BlockFormat f = ctx.format();
        if (!f.hasPi()) {
            BlockWalker.checkLength("the metadata list", metadata, nblocks * f.metadataSize());
            return null;
        }
        RemapOp op = new RemapOp(ctx, newInitialRefTag, checkOld);
        BlockWalker.metadataOnly(f, metadata, nblocks, op);
        return op.error;
    }

    // ---------------------------------------------------------------- guard conversion

    /**
     * Converts the guard of interleaved blocks between the IP checksum and CRC-16 (what an HCA does
     * between a DIX memory domain and a T10-DIF wire domain). {@code ctx.format().guard()} is the guard
     * the blocks carry now; with the guard check on, each old guard is verified first and the walk
     * stops at the first mismatch. Escaped blocks are converted too (their guard is still data).
     */
    public static PiError convertGuard(PiContext ctx, ScatterList blocks, long nblocks, GuardType to) {
        checkConvertible(ctx, to);
        ConvertOp op = new ConvertOp(ctx, to);
        BlockWalker.interleaved(ctx.format(), blocks, nblocks, op);
        return op.error;
    }

    /** {@link #convertGuard(PiContext, ScatterList, long, GuardType)} for separate lists. */
    public static PiError convertGuard(PiContext ctx, ScatterList data, ScatterList metadata, long nblocks,
                                       GuardType to) {
        checkConvertible(ctx, to);
        ConvertOp op = new ConvertOp(ctx, to);
        BlockWalker.separate(ctx.format(), data, metadata, nblocks, op);
        return op.error;
    }

    private static void checkConvertible(PiContext ctx, GuardType to) {
        GuardType from = ctx.format().guard();
        if (!ctx.format().hasPi() || !from.isEightByteTuple() || !to.isEightByteTuple()) {
            throw new IllegalArgumentException("guard conversion works between 8-byte tuples (crc16, ip) with PI, not "
                    + from.cliName() + " -> " + to.cliName() + " on " + ctx.format());
        }
    }

    // ---------------------------------------------------------------- error injection

    /** Flips one random bit of {@code target} in one random block of an interleaved list. */
    public static Injection injectError(PiContext ctx, ScatterList blocks, long nblocks, InjectTarget target,
                                        Random random) {
        BlockFormat f = ctx.format();
        requireInjectable(f, nblocks);
        BlockWalker.checkLength("the interleaved list", blocks, nblocks * f.blockSize());
        long block = (long) (random.nextDouble() * nblocks);
        long base = block * f.blockSize();
        long offset = base + byteInBlock(f, target, random, true);
        int bit = random.nextInt(8);
        flip(blocks, offset, bit);
        return new Injection(target, block, offset, bit);
    }

    /** Flips one random bit of {@code target} in one random block of separate lists. */
    public static Injection injectError(PiContext ctx, ScatterList data, ScatterList metadata, long nblocks,
                                        InjectTarget target, Random random) {
        BlockFormat f = ctx.format();
        requireInjectable(f, nblocks);
        BlockWalker.checkLength("the data list", data, nblocks * f.dataSize());
        BlockWalker.checkLength("the metadata list", metadata, nblocks * f.metadataSize());
        long block = (long) (random.nextDouble() * nblocks);
        int bit = random.nextInt(8);
        long offset;
        if (target == InjectTarget.DATA) {
            offset = block * f.dataSize() + random.nextInt(f.dataSize());
            flip(data, offset, bit);
        } else {
            offset = block * f.metadataSize() + byteInBlock(f, target, random, false);
            flip(metadata, offset, bit);
        }
        return new Injection(target, block, offset, bit);
    }

    private static void requireInjectable(BlockFormat f, long nblocks) {
        if (!f.hasPi()) {
            throw new IllegalArgumentException("cannot inject a PI error into a format without PI: " + f);
        }
        if (nblocks <= 0) {
            throw new IllegalArgumentException("need at least one block to inject an error into");
        }
    }

    /** Offset of a random byte of the target field inside one block (interleaved) or its metadata. */
    private static int byteInBlock(BlockFormat f, InjectTarget t, Random r, boolean interleaved) {
        GuardType g = f.guard();
        int tuple = (interleaved ? f.dataSize() : 0) + f.tupleOffsetInMetadata();
        switch (t) {
            case DATA: return r.nextInt(f.dataSize());
            case GUARD: return tuple + r.nextInt(g.guardSize());
            case APP_TAG: return tuple + g.appTagOffset() + r.nextInt(2);
            default: return tuple + g.refTagOffset() + r.nextInt(g.refTagSize());
        }
    }

    private static void flip(ScatterList list, long offset, int bit) {
        byte[] one = new byte[1];
        list.read(offset, one, 0, 1);
        one[0] ^= (byte) (1 << bit);
        list.write(offset, one, 0, 1);
    }

    private static void requirePositive(int maxErrors) {
        if (maxErrors < 1) {
            throw new IllegalArgumentException("maxErrors must be at least 1, not " + maxErrors);
        }
    }

    // ---------------------------------------------------------------- the operations

    /** Guards of a run of blocks, finished; shared by every op that computes them. */
    static void guards(GuardAlgorithm alg, BlockFormat f, long seed, ByteBuffer d, int dOff, int dStride,
                       ByteBuffer m, int mOff, int mStride, int count, long[] out) {
        int ds = f.dataSize();
        int prefix = f.guardedMetadataPrefix();
        if (prefix > 0 && d == m && mOff == dOff + ds) {
            alg.updateBlocks(d, dOff, dStride, ds + prefix, count, seed, out);
        } else {
            alg.updateBlocks(d, dOff, dStride, ds, count, seed, out);
            if (prefix > 0) {
                for (int k = 0; k < count; k++) {
                    out[k] = alg.update(out[k], m, mOff + k * mStride, prefix);
                }
            }
        }
        for (int k = 0; k < count; k++) {
            out[k] = alg.finish(out[k]);
        }
    }

    /** The guard algorithm of a context's format on the context's {@link GuardPath.Use}. */
    static GuardAlgorithm algorithm(PiContext ctx, GuardType g) {
        return g.algorithm(ctx.guardPath());
    }

    /** Length of an op's per-run scratch for a walk of {@code nblocks}: runs never exceed either. */
    static int scratchLength(long nblocks) {
        return (int) Math.max(1, Math.min(BlockWalker.MAX_RUN, nblocks));
    }

    /** Runs of at least this many whole blocks go to the algorithm's run-level hook first. */
    static final int RUN_HOOK_MIN_BLOCKS = 2;

    private static final class GenerateOp extends BlockWalker.RunOp {
        private final PiContext ctx;
        private final BlockFormat f;
        private final GuardType g;
        private final GuardAlgorithm alg;
        private final long[] guards;

        GenerateOp(PiContext ctx, long nblocks) {
            super(true);
            this.guards = new long[scratchLength(nblocks)];
            this.ctx = ctx;
            this.f = ctx.format();
            this.g = f.guard();
            this.alg = algorithm(ctx, g);
        }

        @Override
        boolean run(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count, long index) {
            int tupleOff = f.tupleOffsetInMetadata();
            if (count >= RUN_HOOK_MIN_BLOCKS && alg.generateRun(d, dOff, dStride, m, mOff, mStride, count,
                    f.dataSize(), f.guardedMetadataPrefix(), tupleOff, ctx.guardSeed(), ctx.appTag(),
                    ctx.refTag(index), g.refTagMask(), f.type() == PiType.TYPE_3)) {
                return true;
            }
            guards(alg, f, ctx.guardSeed(), d, dOff, dStride, m, mOff, mStride, count, guards);
            int app = ctx.appTag();
            for (int k = 0; k < count; k++) {
                Tuples.put(g, m, mOff + k * mStride + tupleOff, guards[k], app, ctx.refTag(index + k));
            }
            return true;
        }
    }

    private static final class VerifyOp extends BlockWalker.RunOp {
        private final PiContext ctx;
        private final BlockFormat f;
        private final GuardType g;
        private final GuardAlgorithm alg;
        private final int max;
        private final int runChecks;
        private final long[] guards;
        private long[] bad;
        /** The first error, and (only once a second is kept) all of them in block order. */
        PiError first;
        private List<PiError> more;
        private int kept;

        VerifyOp(PiContext ctx, int max, long nblocks) {
            super(false);
            this.guards = new long[scratchLength(nblocks)];
            this.ctx = ctx;
            this.f = ctx.format();
            this.g = f.guard();
            this.alg = algorithm(ctx, g);
            this.max = max;
            CheckFlags c = ctx.checks();
            this.runChecks = (c.guard() ? GuardAlgorithm.CHECK_GUARD : 0) | (c.app() ? GuardAlgorithm.CHECK_APP : 0)
                    | (c.ref() && f.type() != PiType.TYPE_3 ? GuardAlgorithm.CHECK_REF : 0);
        }

        @Override
        boolean run(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count, long index) {
            int from = 0;
            if (count >= RUN_HOOK_MIN_BLOCKS) {
                if (bad == null) {
                    bad = new long[3];
                }
                // The hook answers the first bad block of what is left; continue after it until done
                // or enough errors (one per bad block, in order, as the Java loop below).
                while (from < count) {
                    int n = count - from;
                    int r = alg.verifyRun(d, dOff + from * dStride, dStride, m, mOff + from * mStride, mStride, n,
                            f.dataSize(), f.guardedMetadataPrefix(), f.tupleOffsetInMetadata(), ctx.guardSeed(),
                            runChecks, ctx.appTag(), ctx.appMask(), ctx.refTag(index + from), g.refTagMask(),
                            f.type() == PiType.TYPE_3, bad);
                    if (r == GuardAlgorithm.NOT_HANDLED) {
                        break;
                    }
                    if (r >= n) {
                        return true;
                    }
                    if (add(new PiError(kind((int) bad[0]), index + from + r, bad[1], bad[2]))) {
                        return false;
                    }
                    from += r + 1;
                }
                if (from >= count) {
                    return true;
                }
            }
            return javaRun(d, dOff + from * dStride, dStride, m, mOff + from * mStride, mStride, count - from,
                    index + from);
        }

        private boolean javaRun(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count,
                                long index) {
            CheckFlags c = ctx.checks();
            if (c.guard()) {
                guards(alg, f, ctx.guardSeed(), d, dOff, dStride, m, mOff, mStride, count, guards);
            }
            int tupleOff = f.tupleOffsetInMetadata();
            for (int k = 0; k < count; k++) {
                int at = mOff + k * mStride + tupleOff;
                PiError e = check(ctx, m, at, index + k, guards[k]);
                if (e != null) {
                    if (add(e)) {
                        return false;
                    }
                }
            }
            return true;
        }

        /** Keeps an error; true when enough were kept. */
        private boolean add(PiError e) {
            if (first == null) {
                first = e;
            } else {
                if (more == null) {
                    more = new ArrayList<>();
                    more.add(first);
                }
                more.add(e);
            }
            return ++kept >= max;
        }

        List<PiError> errors() {
            if (more != null) {
                return more;
            }
            List<PiError> l = new ArrayList<>(1);
            if (first != null) {
                l.add(first);
            }
            return l;
        }

        private static PiErrorKind kind(int k) {
            switch (k) {
                case GuardAlgorithm.KIND_GUARD: return PiErrorKind.GUARD;
                case GuardAlgorithm.KIND_APP: return PiErrorKind.APP_TAG;
                case GuardAlgorithm.KIND_REF: return PiErrorKind.REF_TAG;
                default: throw new IllegalStateException("unknown run-level error kind " + k);
            }
        }
    }

    /** Checks one stored tuple; {@code computedGuard} is used only when the guard check is on. */
    static PiError check(PiContext ctx, ByteBuffer m, int at, long index, long computedGuard) {
        BlockFormat f = ctx.format();
        GuardType g = f.guard();
        int app = Tuples.app(g, m, at);
        long ref = Tuples.ref(g, m, at);
        if (Tuples.escaped(f, app, ref)) {
            return null;
        }
        CheckFlags c = ctx.checks();
        if (c.guard()) {
            long stored = Tuples.guard(g, m, at);
            if (stored != computedGuard) {
                return new PiError(PiErrorKind.GUARD, index, computedGuard, stored);
            }
        }
        if (c.app()) {
            int mask = ctx.appMask();
            if ((app & mask) != (ctx.appTag() & mask)) {
                return new PiError(PiErrorKind.APP_TAG, index, ctx.appTag() & mask, app & mask);
            }
        }
        if (c.ref() && f.type() != PiType.TYPE_3) {
            long want = ctx.refTag(index);
            if (ref != want) {
                return new PiError(PiErrorKind.REF_TAG, index, want, ref);
            }
        }
        return null;
    }

    private static final class RemapOp extends BlockWalker.RunOp {
        private final PiContext ctx;
        private final PiContext remapped;
        private final boolean checkOld;
        PiError error;

        RemapOp(PiContext ctx, long newInitialRefTag, boolean checkOld) {
            super(true);
            this.ctx = ctx;
            this.remapped = ctx.toBuilder().initialRefTag(newInitialRefTag).build();
            this.checkOld = checkOld;
        }

        @Override
        boolean run(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count, long index) {
            BlockFormat f = ctx.format();
            GuardType g = f.guard();
            int tupleOff = f.tupleOffsetInMetadata();
            for (int k = 0; k < count; k++) {
                int at = mOff + k * mStride + tupleOff;
                int app = Tuples.app(g, m, at);
                long ref = Tuples.ref(g, m, at);
                if (Tuples.escaped(f, app, ref)) {
                    continue;
                }
                long idx = index + k;
                if (checkOld && f.type() != PiType.TYPE_3 && ref != ctx.refTag(idx)) {
                    error = new PiError(PiErrorKind.REF_TAG, idx, ctx.refTag(idx), ref);
                    return false;
                }
                Tuples.putRef(g, m, at, remapped.refTag(idx));
            }
            return true;
        }
    }

    private static final class ConvertOp extends BlockWalker.RunOp {
        private final PiContext ctx;
        private final GuardType to;
        private final BlockFormat toFormat;
        private final long[] oldGuards = new long[BlockWalker.MAX_RUN];
        private final long[] newGuards = new long[BlockWalker.MAX_RUN];
        PiError error;

        ConvertOp(PiContext ctx, GuardType to) {
            super(true);
            this.ctx = ctx;
            this.to = to;
            this.toFormat = ctx.format().withGuard(to);
        }

        @Override
        boolean run(ByteBuffer d, int dOff, int dStride, ByteBuffer m, int mOff, int mStride, int count, long index) {
            BlockFormat f = ctx.format();
            GuardType from = f.guard();
            boolean checkOld = ctx.checks().guard();
            if (checkOld) {
                guards(algorithm(ctx, from), f, ctx.guardSeed(), d, dOff, dStride, m, mOff, mStride, count, oldGuards);
            }
            guards(algorithm(ctx, to), toFormat, ctx.guardSeed(), d, dOff, dStride, m, mOff, mStride, count, newGuards);
            int tupleOff = f.tupleOffsetInMetadata();
            for (int k = 0; k < count; k++) {
                int at = mOff + k * mStride + tupleOff;
                if (checkOld) {
                    long stored = Tuples.guard(from, m, at);
                    boolean esc = Tuples.escaped(f, Tuples.app(from, m, at), Tuples.ref(from, m, at));
                    if (!esc && stored != oldGuards[k]) {
                        error = new PiError(PiErrorKind.GUARD, index + k, oldGuards[k], stored);
                        return false;
                    }
                }
                Tuples.putGuard(to, m, at, newGuards[k]);
            }
            return true;
        }
    }

    /** The result of an error injection: which block, which logical byte of which list, which bit. */
    public static final class Injection {
        private final InjectTarget target;
        private final long blockIndex;
        private final long byteOffset;
        private final int bit;

        Injection(InjectTarget target, long blockIndex, long byteOffset, int bit) {
            this.target = Objects.requireNonNull(target);
            this.blockIndex = blockIndex;
            this.byteOffset = byteOffset;
            this.bit = bit;
        }

        public InjectTarget target() {
            return target;
        }

        public long blockIndex() {
            return blockIndex;
        }

        /** Logical offset of the flipped byte in the list it was flipped in. */
        public long byteOffset() {
            return byteOffset;
        }

        public int bit() {
            return bit;
        }

        @Override
        public String toString() {
            return "Injection{" + target + " block=" + blockIndex + " offset=" + byteOffset + " bit=" + bit + "}";
        }
    }
}
