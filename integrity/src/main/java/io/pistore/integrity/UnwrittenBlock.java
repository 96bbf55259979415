package io.pistore.integrity;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The escape rule of unwritten blocks, for every hop that meets stored blocks (target, replicas,
 * scrub, hosts): a block that was never written, written with zeroes or deallocated reads back as
 * zero data with the <b>unwritten metadata</b>, zero bytes except the PI tuple, whose guard is the
 * guard of the zero data, whose app tag is 0xFFFF and whose ref tag is all-ones. That tuple is an
 * escape in every PI type, so any reader's checks pass; this class says what it stands for (zeros)
 * and checks that it does.
 */
public final class UnwrittenBlock {
    /** The pattern of each format seen, computed once. */
    private static final Map<BlockFormat, byte[]> PATTERNS = new ConcurrentHashMap<>();
    private UnwrittenBlock() {
    }

    /**
     * Metadata of an unwritten block: zeros, and for formats with PI a tuple with the guard of a zero
     * data block, app tag 0xFFFF and an all-ones ref tag (an escape in Types 1, 2 and 3).
     */
    public static byte[] metadata(BlockFormat f) {
        byte[] meta = new byte[f.metadataSize()];
        if (!f.hasPi()) {
            return meta;
        }
        // A Type 3 tuple with an all-ones ref tag and app tag 0xFFFF over a zero block: the guard
        // comes out right and both tags are the escape values.
        BlockFormat t3 = f.withType(PiType.TYPE_3);
        PiContext ctx = PiContext.builder(t3).initialRefTag(f.guard().refTagMask()).appTag(0xFFFF).build();
        Pi.generate(ctx, ScatterList.wrap(new byte[f.dataSize()]), ScatterList.wrap(meta), 1);
        return meta;
    }

    /** Whether {@code meta} (one block's metadata) is the unwritten pattern of the format. */
    public static boolean isUnwritten(BlockFormat f, byte[] pattern, byte[] meta, int off) {
        for (int i = 0; i < pattern.length; i++) {
            if (meta[off + i] != pattern[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * The unwritten tuple is an escape that no PI check looks behind, so this checks what it
     * promises: zero data (its guard is the guard of zeros). For each of {@code blocks} blocks whose
     * metadata is the pattern, data found there (a bit flipped at rest, data that reached the media
     * without its metadata) goes to {@code bad} as a guard error, computed as if the tuple were not
     * an escape, with the block index relative to the lists. Returns how many pattern blocks hold
     * zeros. Used by {@code scrub}; the target asks {@link #firstDataError} on every read.
     */
    public static int checkData(BlockFormat f, ScatterList data, ScatterList meta, int blocks, Consumer<PiError> bad) {
        if (!f.hasPi()) {
            return 0;
        }
        byte[] pattern = pattern(f);
        int clean = 0;
        for (int i = 0; i < blocks; i++) {
            if (isUnwritten(f, pattern, meta, i)) {
                PiError e = dataError(f, pattern, data, i);
                if (e == null) {
                    clean++;
                } else {
                    bad.accept(e);
                }
            }
        }
        return clean;
    }

    /**
     * {@link #checkData}'s first error, or null: what the target asks on every read. Allocates
     * nothing unless a block is bad (written blocks differ from the pattern in their guard or tags,
     * which is seen in the first bytes compared).
     */
    public static PiError firstDataError(BlockFormat f, ScatterList data, ScatterList meta, int blocks) {
        if (!f.hasPi()) {
            return null;
        }
        byte[] pattern = pattern(f);
        if (pattern.length == Long.BYTES && meta.segmentCount() == 1) {
            // One 8-byte tuple per block in one buffer (nearly every read): one long compare per block.
            ByteBuffer m = meta.segment(0);
            long p = ByteBuffer.wrap(pattern).getLong();
            for (int i = 0; i < blocks; i++) {
                if (m.getLong(i * Long.BYTES) == p) {
                    PiError e = dataError(f, pattern, data, i);
                    if (e != null) {
                        return e;
                    }
                }
            }
            return null;
        }
        for (int i = 0; i < blocks; i++) {
            if (isUnwritten(f, pattern, meta, i)) {
                PiError e = dataError(f, pattern, data, i);
                if (e != null) {
                    return e;
                }
            }
        }
        return null;
    }

    private static boolean isUnwritten(BlockFormat f, byte[] pattern, ScatterList meta, int block) {
        return meta.contentEquals((long) block * f.metadataSize(), pattern, 0, pattern.length);
    }

    /** Block {@code i} carries the pattern: null when its data is zero, else its guard error. */
    private static PiError dataError(BlockFormat f, byte[] pattern, ScatterList data, int i) {
        int ds = f.dataSize();
        if (data.isZero((long) i * ds, ds)) {
            return null;
        }
        // Non-zero data under the guard of zeros: a guard error unless the CRC collides, and then the
        // block is indistinguishable from a written one and passes as a written one would.
        PiError e = unescapedGuardError(f, data.slice((long) i * ds, ds), pattern.clone());
        return e == null ? null : e.offsetBy(i);
    }

    /** The unwritten pattern of {@code f}, computed once per format (the format's hash is cached): do not modify it. */
    static byte[] pattern(BlockFormat f) {
        byte[] p = PATTERNS.get(f);
        return p != null ? p : PATTERNS.computeIfAbsent(f, UnwrittenBlock::metadata);
    }

    /** One block's guard checked as if its tuple were not an escape (app tag cleared, Type 3, guard only). */
    private static PiError unescapedGuardError(BlockFormat f, ScatterList block, byte[] meta) {
        int app = f.tupleOffsetInMetadata() + f.guard().appTagOffset();
        meta[app] = 0;
        meta[app + 1] = 0;
        PiContext ctx = PiContext.builder(f.withType(PiType.TYPE_3)).checks(CheckFlags.GUARD).build();
        return Pi.verify(ctx, block, ScatterList.wrap(meta), 1);
    }
}
