package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.PiError;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/** The metadata an unwritten block reads back with (see {@link Volume}). */
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
     * zeros. Used by the target on every read and by {@code scrub}.
     */
    public static int checkData(BlockFormat f, ScatterList data, ScatterList meta, int blocks, Consumer<PiError> bad) {
        if (!f.hasPi()) {
            return 0;
        }
        byte[] pattern = PATTERNS.computeIfAbsent(f, UnwrittenBlock::metadata);
        byte[] m = meta.toArray();
        int ms = f.metadataSize();
        int ds = f.dataSize();
        int clean = 0;
        for (int i = 0; i < blocks; i++) {
            if (!isUnwritten(f, pattern, m, i * ms)) {
                continue;
            }
            ScatterList block = data.slice((long) i * ds, ds);
            PiError e = allZero(block) ? null : unescapedGuardError(f, block, Arrays.copyOfRange(m, i * ms, (i + 1) * ms));
            if (e == null) {
                clean++;
            } else {
                bad.accept(e.offsetBy(i));
            }
        }
        return clean;
    }

    private static boolean allZero(ScatterList block) {
        for (int s = 0; s < block.segmentCount(); s++) {
            ByteBuffer b = block.segment(s);
            for (int k = b.position(); k < b.limit(); k++) {
                if (b.get(k) != 0) {
                    return false;
                }
            }
        }
        return true;
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
