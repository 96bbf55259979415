package io.pistore.engine.volume;

import io.pistore.integrity.UnwrittenBlock;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A volume in heap memory, for tests and benchmarks. Blocks live in chunks of 256 blocks that are
 * allocated on first write, so a large, mostly unwritten volume costs little. Not durable.
 *
 * <p>Within a chunk each block's metadata follows its data (interleaved, as an extended LBA): a
 * read or write of a block with its PI touches one contiguous range, so the metadata comes with
 * the data's cache lines instead of costing a miss of its own, as it would with all metadata at the
 * end of the chunk. Copies go straight between the chunk and
 * the caller's lists, without allocating.
 */
public final class MemoryVolume implements Volume {
    private static final int CHUNK_BLOCKS = 256;
    private static final byte[] ZEROS = new byte[4096];

    private final String name;
    private final BlockFormat format;
    private final long blockCount;
    private final byte[] unwrittenMeta;
    private final BlockLocks locks = new BlockLocks();
    /** Each chunk: CHUNK_BLOCKS blocks of DATA bytes then META bytes. */
    private final AtomicReferenceArray<byte[]> chunks;

    public MemoryVolume(String name, BlockFormat format, long blockCount) {
        if (blockCount <= 0) {
            throw new IllegalArgumentException("a volume needs at least one block");
        }
        long nchunks = (blockCount + CHUNK_BLOCKS - 1) / CHUNK_BLOCKS;
        if (nchunks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("memory volume too large: " + blockCount + " blocks");
        }
        this.name = name;
        this.format = format;
        this.blockCount = blockCount;
        this.unwrittenMeta = UnwrittenBlock.metadata(format);
        this.chunks = new AtomicReferenceArray<>((int) nchunks);
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

    private byte[] chunk(int index, boolean create) {
        byte[] c = chunks.get(index);
        if (c == null && create) {
            int ds = format.dataSize();
            int ms = format.metadataSize();
            int bs = ds + ms;
            c = new byte[CHUNK_BLOCKS * bs];
            for (int b = 0; b < CHUNK_BLOCKS; b++) {
                System.arraycopy(unwrittenMeta, 0, c, b * bs + ds, ms);
            }
            if (!chunks.compareAndSet(index, null, c)) {
                c = chunks.get(index);
            }
        }
        return c;
    }

    @Override
    public void read(long lba, int blocks, ScatterList data, ScatterList metadata) {
        long token = locks.lock(lba, blocks, false);
        try {
            readUnlocked(lba, blocks, data, metadata);
        } finally {
            locks.unlock(token, false);
        }
    }

    /** The metadata alone, with no data copied. */
    @Override
    public void readMetadata(long lba, int blocks, ScatterList metadata) {
        long token = locks.lock(lba, blocks, false);
        try {
            readUnlocked(lba, blocks, null, metadata);
        } finally {
            locks.unlock(token, false);
        }
    }

    /** {@code data} null: the metadata alone. */
    private void readUnlocked(long lba, int blocks, ScatterList data, ScatterList metadata) {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        int bs = ds + ms;
        boolean withMeta = metadata != null && ms > 0;
        for (int i = 0; i < blocks; i++) {
            long b = lba + i;
            byte[] c = chunk((int) (b / CHUNK_BLOCKS), false);
            int at = (int) (b % CHUNK_BLOCKS) * bs;
            if (c == null) {
                if (data != null) {
                    zero(data, (long) i * ds, ds);
                }
                if (withMeta) {
                    metadata.write((long) i * ms, unwrittenMeta, 0, ms);
                }
            } else {
                if (data != null) {
                    data.write((long) i * ds, c, at, ds);
                }
                if (withMeta) {
                    metadata.write((long) i * ms, c, at + ds, ms);
                }
            }
        }
    }

    private static void zero(ScatterList list, long offset, int len) {
        while (len > 0) {
            int n = Math.min(len, ZEROS.length);
            list.write(offset, ZEROS, 0, n);
            offset += n;
            len -= n;
        }
    }

    @Override
    public void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua) {
        long token = locks.lock(lba, blocks, true);
        try {
            writeUnlocked(lba, blocks, data, metadata, fua);
        } finally {
            locks.unlock(token, true);
        }
    }

    private void writeUnlocked(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua) {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        int bs = ds + ms;
        for (int i = 0; i < blocks; i++) {
            long b = lba + i;
            byte[] c = chunk((int) (b / CHUNK_BLOCKS), true);
            int at = (int) (b % CHUNK_BLOCKS) * bs;
            data.read((long) i * ds, c, at, ds);
            if (ms > 0) {
                if (metadata != null) {
                    metadata.read((long) i * ms, c, at + ds, ms);
                } else {
                    java.util.Arrays.fill(c, at + ds, at + bs, (byte) 0);
                }
            }
        }
    }

    @Override
    public void writeZeroes(long lba, int blocks, boolean fua) {
        long token = locks.lock(lba, blocks, true);
        try {
            writeZeroesUnlocked(lba, blocks, fua);
        } finally {
            locks.unlock(token, true);
        }
    }

    private void writeZeroesUnlocked(long lba, int blocks, boolean fua) {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        for (int i = 0; i < blocks; i++) {
            long b = lba + i;
            byte[] c = chunk((int) (b / CHUNK_BLOCKS), false);
            if (c == null) {
                continue;
            }
            int at = (int) (b % CHUNK_BLOCKS) * (ds + ms);
            java.util.Arrays.fill(c, at, at + ds, (byte) 0);
            System.arraycopy(unwrittenMeta, 0, c, at + ds, ms);
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
    }

    /** Sequential copy to or from a scatter list (used by {@link CachingVolume}). */
    static final class Cursor {
        private static final byte[] ZEROS = new byte[4096];
        private final ScatterList list;
        private int seg;
        private ByteBuffer view;
        private int pos;

        Cursor(ScatterList list) {
            this.list = list;
            this.view = list.segmentCount() > 0 ? list.segment(0) : null;
        }

        private void next() {
            seg++;
            view = list.segment(seg);
            pos = 0;
        }

        /** Copies {@code len} bytes of {@code src} into the list. */
        void put(byte[] src, int off, int len) {
            while (len > 0) {
                if (pos == view.limit()) {
                    next();
                }
                int n = Math.min(len, view.limit() - pos);
                view.put(pos, src, off, n);
                pos += n;
                off += n;
                len -= n;
            }
        }

        /** Copies {@code len} bytes from the list into {@code dst}. */
        void get(byte[] dst, int off, int len) {
            while (len > 0) {
                if (pos == view.limit()) {
                    next();
                }
                int n = Math.min(len, view.limit() - pos);
                view.get(pos, dst, off, n);
                pos += n;
                off += n;
                len -= n;
            }
        }

        void zero(int len) {
            while (len > 0) {
                if (pos == view.limit()) {
                    next();
                }
                int n = Math.min(Math.min(len, view.limit() - pos), ZEROS.length);
                view.put(pos, ZEROS, 0, n);
                pos += n;
                len -= n;
            }
        }
    }
}
