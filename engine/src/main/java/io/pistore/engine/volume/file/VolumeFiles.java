package io.pistore.engine.volume.file;

import io.pistore.engine.volume.PrivateFiles;
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
     * blocks get the unwritten metadata, as a volume of manifest version 3 if {@code xorMetadata},
     * else 2, holds it: {@link FileVolume#fillUnwrittenMetadata}) from {@code from} to {@code to}
     * blocks, and forces both. Blocks below {@code from} are not touched.
     */
    public static void grow(Path data, Path meta, BlockFormat format, long from, long to, boolean xorMetadata)
            throws IOException {
        try (StorageFile d = ChannelStorageFile.open(data)) {
            if (d.size() < to * format.dataSize()) {
                d.write(ByteBuffer.allocate(1), to * format.dataSize() - 1);
            }
            d.sync();
        }
        if (meta != null) {
            try (StorageFile m = ChannelStorageFile.open(meta)) {
                if (m.size() < to * format.metadataSize()) {
                    m.write(ByteBuffer.allocate(1), to * format.metadataSize() - 1); // the length; a hole or filled below
                }
                FileVolume.fillUnwrittenMetadata(m, format, xorMetadata, from, to - from);
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
    /** The source is looked at through read-only mappings of at most this many bytes. */
    private static final long COPY_WINDOW = 1L << 30;

    /** A chunk of zeros to compare with, made at the first copy (not by every process that loads this class). */
    private static final class Zeros {
        static final ByteBuffer CHUNK = ByteBuffer.allocateDirect(COPY_CHUNK).asReadOnlyBuffer();
    }

    /**
     * Copies {@code from} to a new file {@code to}, {@code 0600} (replacing one left there), and forces it. Every
     * 1 MiB of zeros is skipped rather than written, so the copy of a sparse data file (blocks never
     * written) stays sparse on file systems with holes. The source is checked for zeros through a
     * read-only mapping and copied by the kernel ({@code transferTo}): no copy passes through this
     * process.
     */
    public static void copySparse(Path from, Path to) throws IOException {
        copy(from, to, (in, out, size) -> {
            for (long base = 0; base < size; base += COPY_WINDOW) {
                long windowLen = Math.min(COPY_WINDOW, size - base);
                ByteBuffer window = in.map(java.nio.channels.FileChannel.MapMode.READ_ONLY, base, windowLen);
                for (int at = 0; at < windowLen; at += COPY_CHUNK) {
                    int n = (int) Math.min(COPY_CHUNK, windowLen - at);
                    ByteBuffer chunk = window.duplicate().limit(at + n).position(at);
                    if (chunk.mismatch(Zeros.CHUNK.duplicate().limit(n)) != -1) {
                        transferFully(in, base + at, n, out);
                    }
                }
            }
        });
    }

    /** What a copy does between its two open files, of {@code size} bytes to copy. */
    private interface Body {
        void copy(java.nio.channels.FileChannel in, java.nio.channels.FileChannel out, long size) throws IOException;
    }

    /**
     * Opens {@code from} and a new file {@code to} ({@code 0600}, replacing one left there), runs
     * {@code body}, gives {@code to} the source's length where it ends in a hole, and forces it.
     */
    private static void copy(Path from, Path to, Body body) throws IOException {
        java.nio.file.Files.deleteIfExists(to);
        try (java.nio.channels.FileChannel in = java.nio.channels.FileChannel.open(from,
                java.nio.file.StandardOpenOption.READ);
                java.nio.channels.FileChannel out = PrivateFiles.open(to,
                        java.nio.file.StandardOpenOption.WRITE, java.nio.file.StandardOpenOption.CREATE_NEW)) {
            long size = in.size();
            body.copy(in, out, size);
            if (out.size() < size) { // a hole at the end: the length alone says the zeros are there
                out.write(ByteBuffer.allocate(1), size - 1);
            }
            out.force(true);
        }
    }

    /**
     * Copies metadata file {@code from} of a volume of {@code format} to a new file {@code to}
     * ({@code 0600}, replacing one left there, forced), turning metadata held XOR an unwritten block's
     * (a version-3 volume, {@link MetadataCoding}) into metadata as it is, or back: one operation does
     * both (none where the two ways are the same: no PI in the format). A 1 MiB chunk that comes out
     * all zeros is left a hole, but in memory (tmpfs), where a metadata file is kept whole: its
     * mappings must never meet a hole ({@link FileVolume#fillUnwrittenMetadata}).
     */
    public static void copyRecoded(Path from, Path to, BlockFormat format) throws IOException {
        MetadataCoding coding = MetadataCoding.of(format, true);
        boolean holes = !FileVolume.inMemory(to.toAbsolutePath().getParent());
        copy(from, to, (in, out, size) -> {
            ByteBuffer chunk = ByteBuffer.allocateDirect(COPY_CHUNK);
            for (long pos = 0; pos < size; pos += COPY_CHUNK) {
                int n = (int) Math.min(COPY_CHUNK, size - pos);
                chunk.clear().limit(n);
                while (chunk.hasRemaining()) {
                    if (in.read(chunk, pos + chunk.position()) < 0) {
                        throw new IOException("copying ended at byte " + (pos + chunk.position()) + " of " + size);
                    }
                }
                if (coding != null) {
                    coding.apply(chunk, 0, n, pos);
                }
                chunk.flip();
                if (!holes || chunk.mismatch(Zeros.CHUNK.duplicate().limit(n)) != -1) {
                    while (chunk.hasRemaining()) {
                        out.write(chunk, pos + chunk.position());
                    }
                }
            }
        });
    }

    /** Copies {@code [pos, pos + n)} of {@code in} to the same place of {@code out}. */
    private static void transferFully(java.nio.channels.FileChannel in, long pos, long n,
            java.nio.channels.FileChannel out) throws IOException {
        out.position(pos);
        for (long done = 0; done < n; ) {
            long m = in.transferTo(pos + done, n - done, out);
            if (m <= 0) {
                throw new IOException("copying ended at byte " + (pos + done) + " of " + in.size());
            }
            done += m;
        }
    }
}
