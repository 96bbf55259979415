package io.pistore.engine.volume;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A durable volume: {@code NAME.data} holds the data blocks back to back, {@code NAME.meta} the
 * metadata blocks back to back (block {@code i}'s metadata at {@code i * META}). Both are plain files
 * read and written with positional I/O; {@code flush} and FUA force both to the disk. The layout is
 * documented in docs/FORMAT.md.
 */
public final class FileVolume implements Volume {
    private static final int ZERO_CHUNK = 1 << 20;

    private final String name;
    private final BlockFormat format;
    private final long blockCount;
    private final FileChannel data;
    private final FileChannel meta;
    private final byte[] unwrittenMeta;
    private final BlockLocks locks = new BlockLocks();
    /**
     * Read-only shared mappings of the metadata file, {@code metaSegment} bytes each (a whole number
     * of blocks' metadata, so no block's straddles two), or null without metadata. Reads copy PI from
     * here instead of making a second {@code pread} per request (measured: that syscall cost PI
     * reads about 1 µs each, more than the rest of PI). Writes still go through the channel, so what
     * reaches the disk, and in which order, is unchanged; Linux keeps a shared mapping and
     * {@code pwrite} of one file coherent through the page cache.
     */
    private final ByteBuffer[] metaMaps;
    private final long metaSegment;

    private FileVolume(String name, BlockFormat format, long blockCount, FileChannel data, FileChannel meta,
                       long mapSegment) throws IOException {
        this.name = name;
        this.format = format;
        this.blockCount = blockCount;
        this.data = data;
        this.meta = meta;
        this.unwrittenMeta = UnwrittenBlock.metadata(format);
        if (meta == null) {
            metaMaps = null;
            metaSegment = 0;
        } else {
            int ms = format.metadataSize();
            metaSegment = Math.max(1, mapSegment / ms) * ms;
            long size = blockCount * ms;
            metaMaps = new ByteBuffer[(int) ((size + metaSegment - 1) / metaSegment)];
            for (int i = 0; i < metaMaps.length; i++) {
                long at = i * metaSegment;
                metaMaps[i] = meta.map(FileChannel.MapMode.READ_ONLY, at, Math.min(metaSegment, size - at));
            }
        }
    }

    private static final long MAP_SEGMENT = 1L << 30;

    /** Creates the files of a new volume: sparse zero data, metadata of unwritten blocks; forced to disk. */
    static FileVolume create(Path dataFile, Path metaFile, String name, BlockFormat format, long blockCount)
            throws IOException {
        FileChannel d = FileChannel.open(dataFile, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        FileChannel m = null;
        try {
            d.truncate(0);
            if (blockCount > 0) {
                // A sparse file: writing the last byte sets the length without writing the rest.
                d.write(ByteBuffer.allocate(1), blockCount * format.dataSize() - 1);
            }
            if (format.metadataSize() > 0) {
                m = FileChannel.open(metaFile, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE);
                if (blockCount > 0) { // its full length before it is mapped; filled just below
                    m.write(ByteBuffer.allocate(1), blockCount * format.metadataSize() - 1);
                }
            }
            FileVolume v = new FileVolume(name, format, blockCount, d, m, MAP_SEGMENT);
            if (m != null) {
                v.fillUnwrittenMetadata(0, blockCount);
                m.force(true);
            }
            d.force(true);
            return v;
        } catch (IOException | RuntimeException e) {
            d.close();
            if (m != null) {
                m.close();
            }
            throw e;
        }
    }

    /** Opens the files of an existing volume, checking their sizes against the manifest. */
    static FileVolume open(Path dataFile, Path metaFile, String name, BlockFormat format, long blockCount)
            throws IOException {
        return open(dataFile, metaFile, name, format, blockCount, MAP_SEGMENT);
    }

    /** As above, mapping the metadata in pieces of about {@code mapSegment} bytes (tests cut them small). */
    static FileVolume open(Path dataFile, Path metaFile, String name, BlockFormat format, long blockCount,
                           long mapSegment) throws IOException {
        FileChannel d = FileChannel.open(dataFile, StandardOpenOption.READ, StandardOpenOption.WRITE);
        FileChannel m = null;
        try {
            long wantData = blockCount * format.dataSize();
            if (d.size() != wantData) {
                throw new IOException("volume " + name + ": " + dataFile + " has " + d.size() + " bytes, the manifest says "
                        + wantData);
            }
            if (format.metadataSize() > 0) {
                m = FileChannel.open(metaFile, StandardOpenOption.READ, StandardOpenOption.WRITE);
                long wantMeta = blockCount * format.metadataSize();
                if (m.size() != wantMeta) {
                    throw new IOException("volume " + name + ": " + metaFile + " has " + m.size()
                            + " bytes, the manifest says " + wantMeta);
                }
            }
            return new FileVolume(name, format, blockCount, d, m, mapSegment);
        } catch (IOException | RuntimeException e) {
            d.close();
            if (m != null) {
                m.close();
            }
            throw e;
        }
    }

    private void fillUnwrittenMetadata(long lba, long blocks) throws IOException {
        int ms = format.metadataSize();
        int perChunk = Math.max(1, ZERO_CHUNK / ms);
        byte[] pattern = new byte[(int) Math.min(blocks, perChunk) * ms];
        for (int i = 0; i < pattern.length / ms; i++) {
            System.arraycopy(unwrittenMeta, 0, pattern, i * ms, ms);
        }
        long done = 0;
        while (done < blocks) {
            int n = (int) Math.min(blocks - done, pattern.length / ms);
            writeFully(meta, ByteBuffer.wrap(pattern, 0, n * ms), (lba + done) * ms);
            done += n;
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public BlockFormat format() {
        return format;
    }

    @Override
    public long blockCount() {
        return blockCount;
    }

    @Override
    public void read(long lba, int blocks, ScatterList dataOut, ScatterList metaOut) throws IOException {
        long token = locks.lock(lba, blocks, false);
        try {
            readUnlocked(lba, blocks, dataOut, metaOut);
        } finally {
            locks.unlock(token, false);
        }
    }

    private void readUnlocked(long lba, int blocks, ScatterList dataOut, ScatterList metaOut) throws IOException {
        readInto(data, dataOut, lba * format.dataSize(), (long) blocks * format.dataSize());
        if (metaOut != null && format.metadataSize() > 0) {
            readMeta(metaOut, lba * format.metadataSize(), (long) blocks * format.metadataSize());
        }
    }

    /** Copies {@code len} bytes of metadata at file offset {@code pos} out of the mappings. */
    private void readMeta(ScatterList out, long pos, long len) throws IOException {
        // No closed check of its own: the data read before it fails on a closed volume's channel.
        try {
            long done = 0;
            while (done < len) {
                long at = pos + done;
                int seg = (int) (at / metaSegment);
                int index = (int) (at % metaSegment);
                int n = (int) Math.min(len - done, metaSegment - index);
                out.write(done, metaMaps[seg], index, n);
                done += n;
            }
        } catch (InternalError e) {
            // The JVM reports a fault in mapped memory (the file shrank under us) this way.
            throw new IOException("volume " + name + ": metadata file unreadable at " + pos + ": " + e.getMessage(), e);
        }
    }

    @Override
    public void write(long lba, int blocks, ScatterList dataIn, ScatterList metaIn, boolean fua) throws IOException {
        long token = locks.lock(lba, blocks, true);
        try {
            writeUnlocked(lba, blocks, dataIn, metaIn, false);
        } finally {
            locks.unlock(token, true);
        }
        if (fua) {
            flush(); // outside the lock: readers of these blocks need not wait for the disk
        }
    }

    private void writeUnlocked(long lba, int blocks, ScatterList dataIn, ScatterList metaIn, boolean fua) throws IOException {
        // Metadata first, then data: if the process dies between the two, the new PI sits over the
        // old data and a read fails its guard check. The other order could leave new data under the
        // unwritten pattern, whose escape tuple would let it read back unchecked.
        if (format.metadataSize() > 0) {
            if (metaIn == null) {
                throw new IllegalArgumentException("format " + format.sizes() + " needs metadata for a write");
            }
            writeFrom(meta, metaIn, lba * format.metadataSize(), (long) blocks * format.metadataSize());
        }
        writeFrom(data, dataIn, lba * format.dataSize(), (long) blocks * format.dataSize());
        if (fua) {
            flush();
        }
    }

    @Override
    public void writeZeroes(long lba, int blocks, boolean fua) throws IOException {
        long token = locks.lock(lba, blocks, true);
        try {
            writeZeroesUnlocked(lba, blocks, false);
        } finally {
            locks.unlock(token, true);
        }
        if (fua) {
            flush(); // outside the lock: readers of these blocks need not wait for the disk
        }
    }

    private void writeZeroesUnlocked(long lba, int blocks, boolean fua) throws IOException {
        // Data first, then the unwritten metadata (the reverse of write): a death in between leaves
        // zero data under the old PI, which fails its check, never old data under an escape tuple.
        long pos = lba * format.dataSize();
        long len = (long) blocks * format.dataSize();
        ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(len, ZERO_CHUNK));
        while (len > 0) {
            zeros.clear().limit((int) Math.min(len, zeros.capacity()));
            int n = zeros.remaining();
            writeFully(data, zeros, pos);
            pos += n;
            len -= n;
        }
        if (format.metadataSize() > 0) {
            fillUnwrittenMetadata(lba, blocks);
        }
        if (fua) {
            flush();
        }
    }

    @Override
    public void flush() throws IOException {
        data.force(false);
        if (meta != null) {
            meta.force(false);
        }
    }

    @Override
    public void close() throws IOException {
        try {
            data.close();
        } finally {
            if (meta != null) {
                meta.close();
            }
        }
    }

    private static void readInto(FileChannel ch, ScatterList out, long pos, long len) throws IOException {
        for (int i = 0; i < out.segmentCount() && len > 0; i++) {
            ByteBuffer s = out.segment(i);
            if (s.remaining() > len) {
                s.limit((int) len);
            }
            int n = s.remaining();
            while (s.hasRemaining()) {
                int r = ch.read(s, pos + (n - s.remaining()));
                if (r < 0) {
                    throw new IOException("unexpected end of file at " + (pos + n - s.remaining()));
                }
            }
            pos += n;
            len -= n;
        }
    }

    private static void writeFrom(FileChannel ch, ScatterList in, long pos, long len) throws IOException {
        for (int i = 0; i < in.segmentCount() && len > 0; i++) {
            ByteBuffer s = in.segment(i);
            if (s.remaining() > len) {
                s.limit((int) len);
            }
            int n = s.remaining();
            writeFully(ch, s, pos);
            pos += n;
            len -= n;
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            pos += ch.write(b, pos);
        }
    }
}
