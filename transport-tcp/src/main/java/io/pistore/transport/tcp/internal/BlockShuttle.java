package io.pistore.transport.tcp.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;

/**
 * Moves blocks between the separate data and metadata lists of memory (DIX) and the interleaved
 * layout of the wire (each block's data, then its metadata: an extended LBA), a chunk at a time, in
 * order. Without a metadata list, metadata is written as zeroes (to be filled by a PI generator) and
 * dropped when read (strip). Not thread-safe: one shuttle belongs to one transfer.
 */
final class BlockShuttle {
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(BlockFormat.MAX_METADATA_SIZE);

    private final int ds;
    private final int bs;
    private final ListCursor data;
    private final ListCursor meta;
    private int pos;

    BlockShuttle(BlockFormat f, ScatterList data, ScatterList metadata) {
        this.ds = f.dataSize();
        this.bs = f.blockSize();
        this.data = new ListCursor(data);
        this.meta = metadata == null || f.metadataSize() == 0 ? null : new ListCursor(metadata);
    }

    /** Over two whole buffers at position 0 (the target's own request buffers): no list views made. */
    BlockShuttle(BlockFormat f, ByteBuffer data, ByteBuffer metadata) {
        this.ds = f.dataSize();
        this.bs = f.blockSize();
        this.data = new ListCursor(data);
        this.meta = metadata == null || f.metadataSize() == 0 ? null : new ListCursor(metadata);
    }

    /** Writes the next {@code n} wire bytes into {@code dst} at its position (advancing it). */
    void toWire(ByteBuffer dst, int n) {
        while (n > 0) {
            int k;
            if (pos < ds) {
                k = Math.min(n, ds - pos);
                data.copyTo(dst, k);
            } else {
                k = Math.min(n, bs - pos);
                if (meta != null) {
                    meta.copyTo(dst, k);
                } else {
                    int p = dst.position();
                    dst.put(p, ZEROS, 0, k);
                    dst.position(p + k);
                }
            }
            n -= k;
            pos += k;
            if (pos == bs) {
                pos = 0;
            }
        }
    }

    /** Consumes the remaining bytes of {@code src} (the next wire bytes) into the lists. */
    void fromWire(ByteBuffer src) {
        int n = src.remaining();
        while (n > 0) {
            int k;
            if (pos < ds) {
                k = Math.min(n, ds - pos);
                data.copyFrom(src, k);
            } else {
                k = Math.min(n, bs - pos);
                if (meta != null) {
                    meta.copyFrom(src, k);
                } else {
                    src.position(src.position() + k);
                }
            }
            n -= k;
            pos += k;
            if (pos == bs) {
                pos = 0;
            }
        }
    }
}
