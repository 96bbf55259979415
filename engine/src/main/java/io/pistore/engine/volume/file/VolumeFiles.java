package io.pistore.engine.volume.file;

import io.pistore.engine.volume.PrivateFiles;
import io.pistore.integrity.UnwrittenBlock;
import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * Changes the length of a closed file volume's home files (a resize, or the rollback of one), and
 * copies them (a replica's snapshot, or its restore from one).
 */
public final class VolumeFiles {
    private VolumeFiles() {
    }

    /**
     * Extends the data file (sparse: the new blocks read as zero) and the metadata file (the new
     * blocks get the unwritten metadata) from {@code from} to {@code to} blocks, and forces both.
     * Blocks below {@code from} are not touched.
     */
    public static void grow(Path data, Path meta, BlockFormat format, long from, long to) throws IOException {
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
    public static void truncate(Path data, Path meta, BlockFormat format, long blocks) throws IOException {
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

    /** The unit of {@link #copySparse}: a run of this many zero bytes is left a hole. */
    private static final int COPY_CHUNK = 1 << 20;

    /**
     * Copies {@code from} to a new file {@code to}, {@code 0600} (replacing one left there), and forces it. Every
     * 1 MiB of zeros is skipped rather than written, so the copy of a sparse data file (blocks never
     * written) stays sparse on file systems with holes.
     */
    public static void copySparse(Path from, Path to) throws IOException {
        java.nio.file.Files.deleteIfExists(to);
        try (java.nio.channels.FileChannel in = java.nio.channels.FileChannel.open(from,
                java.nio.file.StandardOpenOption.READ);
                java.nio.channels.FileChannel out = PrivateFiles.open(to,
                        java.nio.file.StandardOpenOption.WRITE, java.nio.file.StandardOpenOption.CREATE_NEW)) {
            long size = in.size();
            ByteBuffer b = ByteBuffer.allocateDirect(COPY_CHUNK);
            for (long pos = 0; pos < size; ) {
                b.clear();
                int n = in.read(b, pos);
                if (n < 0) {
                    throw new IOException(from + " ended at byte " + pos + " while copying " + size + " bytes");
                }
                b.flip();
                if (!allZero(b)) {
                    while (b.hasRemaining()) {
                        out.write(b, pos + b.position());
                    }
                }
                pos += n;
            }
            if (out.size() < size) { // a hole at the end: the length alone says the zeros are there
                out.write(ByteBuffer.allocate(1), size - 1);
            }
            out.force(true);
        }
    }

    private static boolean allZero(ByteBuffer b) {
        int i = b.position();
        int end = b.limit();
        for (; i + 8 <= end; i += 8) {
            if (b.getLong(i) != 0) {
                return false;
            }
        }
        for (; i < end; i++) {
            if (b.get(i) != 0) {
                return false;
            }
        }
        return true;
    }
}
