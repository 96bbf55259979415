package io.pistore.engine.volume.file;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.integrity.UnwrittenBlock;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The read path of a {@link FileVolume}: each block's newest version, from the journal where the
 * index has it, else from the home files, with the metadata copied out of read-only mappings where
 * the storage maps, and the data too where the storage is memory (tmpfs, ramfs). Invariant: the
 * index is looked up before the home files are read, and a checkpoint removes a block's entry only
 * after it wrote the block home, so a block the index misses is already home; the caller holds the
 * blocks' read locks, so a read copies each block whole from one version, whether by a positional
 * read or out of a mapping.
 */
final class VolumeReader {
    private static final ThreadLocal<ByteBuffer> SCRATCH = new ThreadLocal<>();
    /** The most bytes of journal one read of a run of blocks takes (and a thread's scratch buffer holds). */
    private static final int RUN_BYTES = 1 << 20;

    private final String name;
    private final BlockFormat format;
    private final StorageFile data;
    private final StorageFile meta;
    /** How the metadata file holds metadata (null: as it is); decoded as it is read. */
    private final MetadataCoding coding;
    private final Journal journal;
    private final JournalIndex index;
    private final byte[] unwrittenMeta;
    /** One block of zeros, for blocks the journal holds as written zeroes; never written into. */
    private final byte[] zeros;
    /**
     * Read-only shared mappings of the metadata file, {@code metaSegment} bytes each (a whole number
     * of blocks' metadata, so no block's straddles two), or null without metadata or where the storage
     * cannot map. Reads copy PI from here instead of making a second {@code pread} per request (that
     * system call would cost a PI read more than the rest of its PI work; docs/FORMAT.md#writes-flush-and-fua). Writes still
     * go through positional writes; Linux keeps a shared mapping and {@code pwrite} of one file
     * coherent through the page cache.
     */
    private final ByteBuffer[] metaMaps;
    private final long metaSegment;
    /**
     * Read-only shared mappings of the data file, like {@link #metaMaps}, or null: only where the
     * storage is memory ({@link StorageFile#inMemory}), and unless {@code -Dpistore.volume.mappedReads=false}.
     * A copy out of a mapping spares each read its system call and the page cache lookup of every
     * page. On a disk the positional read stays: a fault on a page not cached reads around it, which
     * random reads would pay for with bytes they never asked for (a mapping takes no advice here).
     */
    private final ByteBuffer[] dataMaps;
    private final long dataSegment;
    /** With {@link #dataMaps} and no metadata: the data pages known to hold data, the only ones read out of the mappings. */
    private final DataPagesSeen dataSeen;
    /** Set by {@link #close} (under every block's lock): a read after it fails instead of reading the mappings. */
    private volatile boolean closed;
    /** Whether data files in memory are read out of mappings (for measuring against positional reads). */
    static final boolean MAPPED_READS = !"false".equals(System.getProperty("pistore.volume.mappedReads"));

    /** Reads of a volume of {@code blockCount} blocks, mapping its metadata in pieces of about {@code mapSegment} bytes. */
    VolumeReader(String name, BlockFormat format, long blockCount, StorageFile data, StorageFile meta, Journal journal,
                 JournalIndex index, long mapSegment, MetadataCoding coding) throws IOException {
        this.coding = coding;
        this.name = name;
        this.format = format;
        this.data = data;
        this.meta = meta;
        this.journal = journal;
        this.index = index;
        this.unwrittenMeta = UnwrittenBlock.metadata(format);
        this.zeros = new byte[format.dataSize()];
        int ms = format.metadataSize();
        this.metaSegment = meta == null ? 0 : Math.max(1, mapSegment / ms) * ms;
        this.metaMaps = meta == null ? null : mapAll(meta, blockCount * ms, metaSegment);
        int ds = format.dataSize();
        this.dataSegment = Math.max(1, mapSegment / ds) * ds;
        this.dataMaps = MAPPED_READS && data.inMemory() ? mapAll(data, blockCount * ds, dataSegment) : null;
        this.dataSeen = dataMaps != null && ms == 0 ? new DataPagesSeen(blockCount * ds) : null;
    }

    /** Read-only mappings of {@code size} bytes of {@code f} in pieces of {@code segment}, or null where it cannot map. */
    private static ByteBuffer[] mapAll(StorageFile f, long size, long segment) throws IOException {
        ByteBuffer[] maps = new ByteBuffer[(int) ((size + segment - 1) / segment)];
        for (int i = 0; i < maps.length; i++) {
            long at = i * segment;
            maps[i] = f.mapReadOnly(at, Math.min(segment, size - at));
            if (maps[i] == null) {
                return null;
            }
        }
        return maps;
    }

    /** Data segments read out of mappings (0: every read is positional). */
    int dataSegmentsMapped() {
        return dataMaps == null ? 0 : dataMaps.length;
    }

    /** The volume closes: later reads fail (the mappings stay until the JVM drops them, so none may be read). */
    void close() {
        closed = true;
    }

    /** Bytes of metadata per mapping: a whole number of blocks' metadata (0 without metadata). */
    long metaSegment() {
        return metaSegment;
    }

    /**
     * Reads {@code blocks} blocks from {@code lba}; the caller holds their read locks. {@code dataOut}
     * null: their metadata alone (no data is read).
     */
    void read(long lba, int blocks, ScatterList dataOut, ScatterList metaOut) throws IOException {
        if (closed) {
            throw new IOException("volume " + name + " is closed");
        }
        // The index first, the home files after: a checkpoint removes a block's entry only after it
        // wrote the block home, so a block missed here is already there.
        // Per block found: sequence number (ABSENT: not in the journal), data and metadata position.
        long[] newer = null;
        long[] entry = new long[3];
        int found = 0;
        for (int i = 0; i < blocks && !index.isEmpty(); i++) {
            if (index.lookUp(lba + i, entry) != JournalIndex.ABSENT) {
                if (newer == null) {
                    newer = new long[3 * blocks];
                    for (int k = 0; k < blocks; k++) {
                        newer[3 * k] = JournalIndex.ABSENT;
                    }
                }
                System.arraycopy(entry, 0, newer, 3 * i, 3);
                found++;
            }
        }
        boolean withMeta = metaOut != null && format.metadataSize() > 0;
        if (blocks == 1 && newer != null) {
            readFromJournal(newer[1], newer[2], 0, 1, dataOut, withMeta ? metaOut : null); // the home copy is older
            return;
        }
        if (found < blocks) { // every block in the journal: its home copies are all older
            if (withMeta) {
                long at = lba * format.metadataSize();
                long len = (long) blocks * format.metadataSize();
                readHome(metaMaps, metaSegment, meta, metaOut, 0, at, len);
                if (coding != null) {
                    coding.apply(metaOut, 0, len, at); // blocks in the journal are read over it below
                }
            }
            if (dataOut != null) {
                readHomeData(lba, blocks, dataOut, withMeta ? metaOut : null);
            }
        }
        if (newer != null) {
            for (int i = 0; i < blocks; ) {
                if (newer[3 * i] == JournalIndex.ABSENT) {
                    i++;
                } else {
                    int run = journalRun(newer, i, blocks, withMeta);
                    readFromJournal(newer[3 * i + 1], newer[3 * i + 2], i, run, dataOut, withMeta ? metaOut : null);
                    i += run;
                }
            }
        }
    }

    /**
     * How many blocks from {@code i} on lie side by side in one journal record (data after data,
     * metadata after metadata, as one write of several blocks leaves them), up to {@link #RUN_BYTES}:
     * read with one call each instead of one per block.
     */
    private int journalRun(long[] newer, int i, int blocks, boolean withMeta) {
        long dataPos = newer[3 * i + 1];
        if (dataPos < 0) {
            return 1;
        }
        int ds = format.dataSize();
        int ms = withMeta ? format.metadataSize() : 0;
        int max = Math.max(1, RUN_BYTES / (ds + ms));
        int run = 1;
        while (i + run < blocks && run < max && newer[3 * (i + run)] != JournalIndex.ABSENT
                && newer[3 * (i + run) + 1] == dataPos + (long) run * ds
                && (!withMeta || newer[3 * (i + run) + 2] == newer[3 * i + 2] + (long) run * ms)) {
            run++;
        }
        return run;
    }

    /**
     * Replaces blocks {@code i..i+run-1} of the outputs (read from the home files, or not read) with
     * their newer journal versions, which lie side by side from {@code dataPos} (data) and
     * {@code metaPos} (metadata); {@code dataPos < 0}: one zeroed block.
     */
    private void readFromJournal(long dataPos, long metaPos, int i, int run, ScatterList dataOut,
            ScatterList metaOut) throws IOException {
        if (dataPos < 0) {
            if (dataOut != null) {
                dataOut.write((long) i * zeros.length, zeros, 0, zeros.length);
            }
            if (metaOut != null) {
                metaOut.write((long) i * unwrittenMeta.length, unwrittenMeta, 0, unwrittenMeta.length);
            }
            return;
        }
        int dataLen = run * format.dataSize();
        int metaLen = metaOut != null ? run * format.metadataSize() : 0;
        if (dataOut == null) { // the metadata alone
            if (metaLen > 0) {
                ByteBuffer m = scratch(metaLen).limit(metaLen);
                journal.read(m, metaPos);
                metaOut.write((long) i * format.metadataSize(), m, 0, metaLen);
            }
            return;
        }
        ByteBuffer b = scratch(dataLen + metaLen);
        if (metaOut != null && metaPos == dataPos + dataLen) {
            b.limit(dataLen + metaLen);
            journal.read(b, dataPos); // a whole record: data and metadata in one read
        } else {
            b.limit(dataLen);
            journal.read(b, dataPos);
            if (metaOut != null) {
                b.limit(dataLen + metaLen).position(dataLen);
                journal.read(b, metaPos);
            }
        }
        dataOut.write((long) i * format.dataSize(), b, 0, dataLen);
        if (metaOut != null) {
            metaOut.write((long) i * format.metadataSize(), b, dataLen, metaLen);
        }
    }

    /** A direct buffer of this thread's, cleared, of at least {@code n} bytes: reads from the journal land here without allocating. */
    static ByteBuffer scratch(int n) {
        ByteBuffer b = SCRATCH.get();
        if (b == null || b.capacity() < n) {
            b = ByteBuffer.allocateDirect(n);
            SCRATCH.set(b);
        }
        return b.clear();
    }

    /**
     * Reads the home data of {@code blocks} blocks from {@code lba}, whose home metadata is in
     * {@code metaOut} (null: not read). Out of the mappings only blocks the metadata shows written:
     * touching a hole of a tmpfs file through a mapping allocates its page (so reading a sparse
     * volume would fill the memory with zeros) and, on a full tmpfs, faults (SIGBUS, which the JVM
     * may report later, past any handler here). Unwritten blocks, and every block where the metadata
     * is not at hand, are read with {@code pread}, which returns a hole's zeros without allocating.
     * A format without metadata has nothing that tells a hole: its pages come out of the mapping once
     * a read found data in them ({@link DataPagesSeen}), the others with {@code pread}.
     */
    private void readHomeData(long lba, int blocks, ScatterList dataOut, ScatterList metaOut) throws IOException {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        if (dataSeen != null) {
            readSeenPages(dataOut, lba * ds, (long) blocks * ds);
            return;
        }
        if (dataMaps == null || metaOut == null) {
            readInto(data, dataOut, lba * ds, (long) blocks * ds);
            return;
        }
        int i = 0;
        while (i < blocks) {
            boolean unwritten = metaOut.contentEquals((long) i * ms, unwrittenMeta, 0, ms);
            int run = 1;
            while (i + run < blocks && metaOut.contentEquals((long) (i + run) * ms, unwrittenMeta, 0, ms) == unwritten) {
                run++;
            }
            long pos = (lba + i) * ds;
            long len = (long) run * ds;
            if (!unwritten) {
                readHome(dataMaps, dataSegment, data, dataOut, (long) i * ds, pos, len);
            } else if (i == 0 && run == blocks) {
                readInto(data, dataOut, pos, len);
            } else {
                readInto(data, dataOut.slice((long) i * ds, len), pos, len);
            }
            i += run;
        }
    }

    /** Reads {@code len} data bytes at {@code pos}: runs of pages seen to hold data out of the mappings, others positionally. */
    private void readSeenPages(ScatterList out, long pos, long len) throws IOException {
        int page = DataPagesSeen.PAGE;
        long end = pos + len;
        for (long from = pos; from < end; ) {
            boolean seen = dataSeen.seen(from / page);
            long to = Math.min(end, (from / page + 1) * page);
            while (to < end && dataSeen.seen(to / page) == seen) {
                to = Math.min(end, to + page);
            }
            long off = from - pos;
            if (seen) {
                readHome(dataMaps, dataSegment, data, out, off, from, to - from);
            } else {
                readInto(data, off == 0 && to == end ? out : out.slice(off, to - from), from, to - from);
                dataSeen.markData(out, off, from, to);
            }
            from = to;
        }
    }

    /**
     * Copies {@code len} bytes of home file {@code f} at offset {@code pos} out of its mappings
     * ({@code maps}, {@code segment} bytes each) to {@code out} at {@code outOff}, or reads them where it has none.
     */
    private void readHome(ByteBuffer[] maps, long segment, StorageFile f, ScatterList out, long outOff, long pos,
                          long len) throws IOException {
        if (maps == null) {
            readInto(f, outOff == 0 ? out : out.slice(outOff, len), pos, len);
            return;
        }
        try {
            long done = 0;
            while (done < len) {
                long at = pos + done;
                int seg = (int) (at / segment);
                int index = (int) (at % segment);
                int n = (int) Math.min(len - done, segment - index);
                out.write(outOff + done, maps[seg], index, n);
                done += n;
            }
        } catch (InternalError e) {
            // The JVM reports a fault in mapped memory (the file shrank under us) this way.
            throw new IOException("volume " + name + ": " + (f == meta ? "metadata" : "data") + " file unreadable at "
                    + pos + ": " + e.getMessage(), e);
        }
    }

    private static void readInto(StorageFile f, ScatterList out, long pos, long len) throws IOException {
        for (int i = 0; i < out.segmentCount() && len > 0; i++) {
            ByteBuffer s = out.segment(i);
            if (s.remaining() > len) {
                s.limit((int) len);
            }
            int n = s.remaining();
            while (s.hasRemaining()) {
                int r = f.read(s, pos + (n - s.remaining()));
                if (r < 0) {
                    throw new IOException("unexpected end of file at " + (pos + n - s.remaining()));
                }
            }
            pos += n;
            len -= n;
        }
    }
}
