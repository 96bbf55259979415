package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiType;
import io.pistore.integrity.ScatterList;

/** The metadata an unwritten block reads back with (see {@link Volume}). */
public final class UnwrittenBlock {
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
}
