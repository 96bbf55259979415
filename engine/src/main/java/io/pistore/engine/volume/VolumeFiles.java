package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/** Changes the length of a closed file volume's home files (a resize, or the rollback of one). */
final class VolumeFiles {
    private VolumeFiles() {
    }

    /**
     * Extends the data file (sparse: the new blocks read as zero) and the metadata file (the new
     * blocks get the unwritten metadata) from {@code from} to {@code to} blocks, and forces both.
     * Blocks below {@code from} are not touched.
     */
    static void grow(Path data, Path meta, BlockFormat format, long from, long to) throws IOException {
        try (StorageFile d = ChannelStorageFile.open(data)) {
            if (d.size() < to * format.dataSize()) {
                d.write(ByteBuffer.allocate(1), to * format.dataSize() - 1);
            }
            d.sync();
        }
        if (meta != null) {
            try (StorageFile m = ChannelStorageFile.open(meta)) {
                FileVolume.fillUnwrittenMetadata(m, format, UnwrittenBlock.metadata(format), from, to - from);
                m.sync();
            }
        }
    }

    /** Cuts the home files back to {@code blocks} blocks and forces them. */
    static void truncate(Path data, Path meta, BlockFormat format, long blocks) throws IOException {
        try (StorageFile d = ChannelStorageFile.open(data)) {
            d.truncate(blocks * format.dataSize());
            d.sync();
        }
        if (meta != null) {
            try (StorageFile m = ChannelStorageFile.open(meta)) {
                m.truncate(blocks * format.metadataSize());
                m.sync();
            }
        }
    }
}
