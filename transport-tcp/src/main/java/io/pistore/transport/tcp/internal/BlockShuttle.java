package io.pistore.transport.tcp.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;

/**
 * Moves blocks between the separate data and metadata lists of memory (DIX) and the interleaved
 * layout of the wire (each block's data, then its metadata: an extended LBA), a chunk at a time, in
 * order. Without a metadata list, metadata is written as zeroes (to be filled by a PI generator) and
 * dropped when read (strip). Not thread-safe: a connection keeps one shuttle per direction and
 * re-aims it with {@code reset} for each transfer (its frames' payloads pass one at a time).
 */
final class BlockShuttle {
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(BlockFormat.MAX_METADATA_SIZE);

    private final ListCursor data = new ListCursor();
    private final ListCursor metaCursor = new ListCursor();
    private ListCursor meta;
    private int ds;
    private int bs;
    private int pos;

    /** Aims the shuttle at the start of a transfer between the wire and two lists. */
    BlockShuttle reset(BlockFormat f, ScatterList data, ScatterList metadata) {
        begin(f);
        this.data.reset(data);
        meta = metadata == null || f.metadataSize() == 0 ? null : metaCursor.reset(metadata);
        return this;
    }

    /** The same over two whole buffers at index 0 (the target's own request buffers): no list views. */
    BlockShuttle reset(BlockFormat f, ByteBuffer data, ByteBuffer metadata) {
        begin(f);
        this.data.reset(data);
        meta = metadata == null || f.metadataSize() == 0 ? null : metaCursor.reset(metadata);
        return this;
    }

    private void begin(BlockFormat f) {
        ds = f.dataSize();
        bs = f.blockSize();
        pos = 0;
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
                    ScatterList.copy(ZEROS, 0, dst, p, k);
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
