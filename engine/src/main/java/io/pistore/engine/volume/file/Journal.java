package io.pistore.engine.volume.file;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.zip.CRC32C;

/**
 * A file volume's write-ahead journal, {@code NAME.journal} (layout in docs/FORMAT.md): a header in
 * two alternating 512-byte slots, then a ring of equal segments of records from
 * {@link #RECORDS_START}. Records go to the active segment, each appended with one positional write
 * (or, where the storage maps, one copy into the segment's mapping);
 * when it is full the next segment becomes active and the full one is checkpointed (applied to the
 * home files) while the others fill. A record is one whole request (a write's data and metadata, or a
 * zeroing), so a crash keeps or loses it as a whole.
 *
 * <p>Recovery starts at the head the header names and takes records in sequence-number order,
 * looking for each right after the previous one or else at the start of the next segment, and stops at
 * the first that is torn, missing or of another epoch: what survives is always a prefix of the
 * requests. The epoch changes at every reset, so records left over from before a crash can never be
 * taken for new ones.
 *
 * <p>Appends are serialized (one lock, one write each), which keeps records in sequence order with no
 * gaps; syncs are grouped: concurrent callers of {@link #syncUpTo} share one fsync.
 */
final class Journal {
    static final int SLOT_SIZE = 512;
    static final int RECORDS_START = 4096;
    static final int RECORD_HEADER = 40;
    static final byte WRITE = 1;
    static final byte ZEROES = 2;
    /**
     * A write in a journal in memory ({@link #durableWhenWritten}): its payload is not covered by
     * the CRC, which covers the header alone, and the header is written after the payload. A
     * process crash (all that such a journal outlives) keeps the stores made before it, so a header
     * that is there and whole vouches for the payload before it; the payload's CRC, the largest
     * part of an append's CPU for large writes, is not computed.
     */
    static final byte WRITE_IN_MEMORY = 3;
    /**
     * Written into every header: version 3 records the ring's segment count, which depends on the
     * volume's size. Versions 1 (no {@link #WRITE_IN_MEMORY} records) and 2 (a ring of
     * {@link #LEGACY_SEGMENTS} segments, not recorded) are still read.
     */
    static final int VERSION = 3;
    /** The ring of a version-1 or version-2 journal, whose header does not say. */
    static final int LEGACY_SEGMENTS = 8;
    /** The most segments a header may name: a bound on what a damaged header can make us allocate. */
    static final int MOST_SEGMENTS = 1024;
    static final int RECORD_MAGIC = 0x50494A52; // "PIJR"

    private final StorageFile file;
    /** Reads records back from a head, for recovery and checkpoints. */
    private final JournalScanner scanner;
    private final String fileName;
    private final int dataSize;
    private final int metaSize;
    private final long segmentSize;
    /**
     * Segments of the ring of the current epoch's records: as the header says when opened (for the
     * replay), then {@link #wantedSegments} from the first reset on. Guarded by this; set only
     * with no append or checkpoint running.
     */
    private int segments;
    /** Segments of the ring that every reset starts (a new epoch may have another ring size). */
    private final int wantedSegments;
    private final Object syncLock = new Object();
    private final CRC32C crc = new CRC32C();
    private ByteBuffer buf = ByteBuffer.allocateDirect(RECORD_HEADER + (1 << 16)).order(ByteOrder.BIG_ENDIAN);
    /**
     * Each segment as a shared read-write mapping, made when its first record is appended (which
     * grows the file over the whole segment), or null. Records are copied into these and read out of
     * them, so a record costs a copy and no system call (a positional write per record would be most
     * of the writer's CPU, as positional reads would of a checkpoint's; docs/history.md#crash-atomic-file-volumes).
     * Where the storage has no mappings (the tests' simulated
     * disk), records are written and read with positional writes and reads instead. Set under this
     * lock; read without it by {@link #mapped}.
     */
    private volatile MappedByteBuffer[] maps;
    /** Segments written through their mapping since the last sync; guarded by this. */
    private boolean[] dirty;
    /** False once the storage had no mapping to give; guarded by this. */
    private boolean mappable = true;
    /**
     * Where records are written with positional writes (a disk): a read-only shared mapping of each
     * segment the writer has left, as far as the file reaches, for the readers of its records (a
     * checkpoint, a read of a block whose newest version is in the journal), which would otherwise
     * copy every record out of the page cache once more. Read-only: stores into a shared mapping of
     * a file on a disk fault into its file system (docs/history.md#crash-atomic-file-volumes). Set
     * by the writer as it moves on ({@link #swap}); read without the lock.
     */
    private volatile AtomicReferenceArray<ByteBuffer> readMaps;
    /** False once the storage had no read-only mapping to give; guarded by this. */
    private boolean readMappable = true;
    /**
     * Set for a journal in memory ({@link StorageFile#inMemory}): a record is as durable as it will
     * ever be once it is written, so it counts as durable at once and nothing is forced. Measured on
     * tmpfs: the {@code msync} per write-through request, and writers waiting on each other's, was
     * most of what a write cost over the layout without a journal.
     */
    private volatile boolean durableWhenWritten;

    /** The head as last written; written by one thread at a time (a checkpoint, or a holder of every block lock). */
    private volatile Header head;
    // Guarded by this.
    private int active;
    /**
     * How many segments, from the first, the writer cycles through: all of them, or two for a volume
     * that writes through ({@link #useTwoSegments}).
     */
    private int ring;
    private long tail = RECORDS_START;
    private long nextSeq;
    /** The last sequence number whose record is written (not yet necessarily durable). */
    private volatile long appendedSeq;
    /** The last sequence number whose record is durable. */
    private volatile long durableSeq;
    /** Records and their bytes appended since this journal was opened; guarded by this. */
    private long recordsAppended;
    private long bytesAppended;

    /**
     * The header's fields: {@code slotSeq} picks the newer slot; records of {@code epoch} from
     * {@code startSeq} at {@code startPos} are not yet all in the home files (unless {@code clean}).
     */
    record Header(long slotSeq, long epoch, long startSeq, long startPos, boolean clean, int segments) {
    }

    /** Where an appended record went. */
    record Appended(long pos, long seq) {
    }

    /** One record met by a scan. {@code payload} holds data then metadata (empty for zeroes). */
    interface Visitor {
        /** {@code pos}: the record's position in the file; its payload starts {@link #RECORD_HEADER} after. */
        void record(long seq, byte type, long lba, int blocks, long pos) throws IOException;
    }

    /**
     * A journal of segments of {@code segmentSize} bytes of records each: as many as its header
     * says until the first reset, {@code segments} from then on.
     */
    Journal(StorageFile file, String fileName, BlockFormat format, long segmentSize, int segments) {
        if (segments < 2 || segments > MOST_SEGMENTS) {
            throw new IllegalArgumentException("a journal ring of " + segments + " segments");
        }
        this.file = file;
        this.fileName = fileName;
        this.dataSize = format.dataSize();
        this.metaSize = format.metadataSize();
        this.segmentSize = segmentSize;
        this.wantedSegments = segments;
        this.segments = segments;
        this.maps = new MappedByteBuffer[segments];
        this.readMaps = new AtomicReferenceArray<>(segments);
        this.dirty = new boolean[segments];
        this.ring = segments;
        this.scanner = new JournalScanner(this, file, dataSize, metaSize, segmentSize);
    }

    /** Segments of the ring that the current epoch's records cycle through. */
    synchronized int ringSegments() {
        return ring;
    }

    /** Makes {@code n} the ring's segment count; only with no record of the current epoch mapped yet. */
    private void useSegments(int n) {
        segments = n;
        ring = n;
        if (maps.length < n) {
            maps = java.util.Arrays.copyOf(maps, n);
            dirty = java.util.Arrays.copyOf(dirty, n);
        }
        if (readMaps.length() < n) {
            AtomicReferenceArray<ByteBuffer> r = new AtomicReferenceArray<>(n);
            for (int i = 0; i < readMaps.length(); i++) {
                r.set(i, readMaps.get(i));
            }
            readMaps = r;
        }
    }

    /**
     * From now on the writer cycles through the first two segments only. For a volume that writes
     * its blocks home as requests come: each move to the next segment moves the head there (the
     * one left behind is already home), before any record goes to it, so recovery never looks past
     * the head's segment for a record and the layout stays what it reads. The other segments are
     * never touched: a quarter of the memory on tmpfs, and a quarter of the first-lap page faults.
     */
    synchronized void useTwoSegments() {
        if (segments >= 2 && active < 2) {
            ring = 2;
        }
    }

    /**
     * From now on a record counts as durable as soon as it is written, and {@link #syncUpTo} forces
     * nothing: only for a journal whose storage is in memory ({@link StorageFile#inMemory}), where a
     * written record already survives the process's crash and nothing survives the machine's.
     */
    synchronized void durableWhenWritten() {
        durableWhenWritten = true;
        durableSeq = nextSeq - 1;
    }

    /**
     * Maps the segments the writer cycles through and puts their pages in place now ({@link #prefault}),
     * with no record in them yet (just after a reset), rather than when the first record of this open
     * goes to each, which would stall that one write for as long as it takes
     * (docs/history.md#crash-atomic-file-volumes). Nothing where the storage does not map.
     */
    synchronized void mapRing() throws IOException {
        for (int seg = 0; seg < ring && mappable; seg++) {
            map(seg);
        }
    }

    /** Writes the header of an empty, clean journal into a new file and forces it. */
    static void initialize(StorageFile file, BlockFormat format) throws IOException {
        file.truncate(0);
        file.write(ByteBuffer.allocate(RECORDS_START), 0);
        Header h = new Header(1, 1, 1, RECORDS_START, true, LEGACY_SEGMENTS);
        file.write(JournalHeaderSlots.encode(h, format.dataSize(), format.metadataSize()),
                JournalHeaderSlots.slotOffset(h.slotSeq()));
        file.sync();
    }

    private long segmentStart(int segment) {
        return RECORDS_START + segment * segmentSize;
    }

    /**
     * Reads the header: the valid slot of the higher slot sequence ({@link JournalHeaderSlots}).
     *
     * @throws IOException naming the file when neither slot is valid or the format differs
     */
    Header readHeader() throws IOException {
        return JournalHeaderSlots.read(file, fileName, dataSize, metaSize);
    }

    /**
     * Calls {@code v} for each record from the head {@code h}, in order, while records are intact,
     * of {@code h}'s epoch and carry the next sequence number, up to sequence {@code lastSeq};
     * returns how many ({@link JournalScanner}).
     */
    long scan(Header h, long blockCount, long lastSeq, Visitor v) throws IOException {
        return scanner.scan(h, blockCount, lastSeq, true, v);
    }

    /** As above; {@code verifyPayload} false skips the payload's CRC (for a checkpoint, never recovery). */
    long scan(Header h, long blockCount, long lastSeq, boolean verifyPayload, Visitor v) throws IOException {
        return scanner.scan(h, blockCount, lastSeq, verifyPayload, v);
    }

    /** Takes over the head read at open, with {@code nextSeq} the sequence number after the last record kept. */
    synchronized void start(Header h, long nextSeq) {
        useSegments(h.segments());
        head = h;
        this.nextSeq = nextSeq;
        appendedSeq = nextSeq - 1;
        durableSeq = nextSeq - 1;
    }

    /** The head as last written. */
    Header head() {
        return head;
    }

    /**
     * Empties the journal once every record is in the home files (and forced there): a new epoch,
     * the head at the start of the first half. The header is forced before any new record can
     * overwrite the old ones. Only with no append or checkpoint running.
     */
    synchronized void resetEmpty(boolean clean) throws IOException {
        if (segments != wantedSegments) {
            // No record of the new epoch is mapped yet: the new ring takes over with it.
            useSegments(wantedSegments);
        }
        Header h = new Header(head.slotSeq() + 1, head.epoch() + 1, nextSeq, RECORDS_START, clean, segments);
        writeHeader(h);
        active = 0;
        tail = RECORDS_START;
        durableSeq = nextSeq - 1;
    }

    /**
     * Moves the head past the records a checkpoint applied (and forced to the home files): to
     * {@code startSeq}, which is or will be the first record of the other half at {@code startPos}.
     */
    void advanceHead(long startSeq, long startPos) throws IOException {
        Header h = head;
        writeHeader(new Header(h.slotSeq() + 1, h.epoch(), startSeq, startPos, false, h.segments()));
    }

    private void writeHeader(Header h) throws IOException {
        file.write(JournalHeaderSlots.encode(h, dataSize, metaSize), JournalHeaderSlots.slotOffset(h.slotSeq()));
        file.sync();
        head = h;
    }

    /** Whether every record appended is before the head (applied to the home files). */
    synchronized boolean isEmpty() {
        return nextSeq == head.startSeq();
    }

    /** Whether the active segment holds records. */
    synchronized boolean activeHasRecords() {
        return tail > segmentStart(active);
    }

    /** Whether a record of {@code size} bytes does not fit in the active segment. */
    synchronized boolean needsSwap(long size) {
        return tail + size > segmentStart(active) + segmentSize;
    }

    /**
     * Makes the next segment active; returns the sequence number of the last record in the segment
     * left behind and the position where the next record goes.
     */
    synchronized Appended swap() {
        mapForReads(active);
        active = (active + 1) % ring;
        tail = segmentStart(active);
        return new Appended(tail, nextSeq - 1);
    }

    /**
     * Maps segment {@code seg}, which the writer is leaving, read-only for its readers where records
     * are not written through mappings: as far as the file reaches (never beyond: a read-only
     * mapping past the end would grow the file), again when a later lap reaches further. Called
     * with this journal's lock held; without a mapping, readers read the file.
     */
    private void mapForReads(int seg) {
        if (mappable || !readMappable) {
            return;
        }
        long start = segmentStart(seg);
        try {
            long len = Math.min(segmentSize, file.size() - start);
            ByteBuffer have = readMaps.get(seg);
            if (len <= 0 || (have != null && have.capacity() >= len)) {
                return;
            }
            ByteBuffer b = file.mapReadOnly(start, len);
            if (b == null) {
                readMappable = false;
            } else {
                readMaps.set(seg, b);
            }
        } catch (IOException | RuntimeException e) {
            readMappable = false; // its readers read the file, as without mappings
        }
    }

    static long recordSize(byte type, int blocks, int dataSize, int metaSize) {
        return RECORD_HEADER + (type == WRITE ? (long) blocks * (dataSize + metaSize) : 0);
    }

    /**
     * Appends one record with one write: a write's data and metadata ({@code data}, {@code meta}:
     * {@code blocks} blocks' worth each; {@code meta} null without metadata), or a zeroing (both null).
     * Returns where it went, or null when it does not fit in the active segment: the caller moves on
     * and tries again.
     */
    synchronized Appended append(byte type, long lba, int blocks, ScatterList data, ScatterList meta) throws IOException {
        long size = recordSize(type, blocks, dataSize, metaSize);
        if (size > segmentSize) {
            throw new IllegalArgumentException("request of " + blocks + " blocks is too large for the journal of "
                    + fileName);
        }
        if (tail + size > segmentStart(active) + segmentSize) {
            return null;
        }
        MappedByteBuffer m = map(active);
        ByteBuffer b;
        int at;
        if (m != null) {
            b = m; // the record is built in place
            at = (int) (tail - segmentStart(active));
        } else {
            if (buf.capacity() < size) {
                buf = ByteBuffer.allocateDirect((int) size).order(ByteOrder.BIG_ENDIAN);
            }
            b = buf;
            b.clear();
            at = 0;
        }
        int payload = (int) size - RECORD_HEADER;
        if (type == WRITE) {
            int dlen = blocks * dataSize;
            data.read(0, b, at + RECORD_HEADER, dlen);
            if (metaSize > 0) {
                meta.read(0, b, at + RECORD_HEADER + dlen, blocks * metaSize);
            }
        }
        long seq = nextSeq;
        long pos = tail;
        // In memory, a write's header goes in after its payload and vouches for it (no payload CRC).
        boolean headerLast = durableWhenWritten && type == WRITE;
        if (headerLast) {
            if (m == null) {
                file.write(b.duplicate().limit(RECORD_HEADER + payload).position(RECORD_HEADER), pos + RECORD_HEADER);
            }
            VarHandle.releaseFence(); // the payload's stores before the header's
        }
        b.putInt(at, RECORD_MAGIC).put(at + 4, headerLast ? WRITE_IN_MEMORY : type).put(at + 5, (byte) 0)
                .putShort(at + 6, (short) 0).putLong(at + 8, head.epoch()).putLong(at + 16, seq).putLong(at + 24, lba)
                .putInt(at + 32, blocks);
        // CRC-32C of the payload (none for WRITE_IN_MEMORY), then of the header's first 36 bytes.
        crc.reset();
        if (!headerLast) {
            crc.update(b.duplicate().limit(at + RECORD_HEADER + payload).position(at + RECORD_HEADER));
        }
        crc.update(b.duplicate().limit(at + RECORD_HEADER - 4).position(at));
        b.putInt(at + RECORD_HEADER - 4, (int) crc.getValue());
        if (m != null) {
            dirty[active] = !durableWhenWritten;
        } else if (headerLast) {
            file.write(b.duplicate().limit(RECORD_HEADER).position(0), pos);
        } else {
            b.limit(RECORD_HEADER + payload).position(0);
            file.write(b, pos);
        }
        if (headerLast) {
            VarHandle.releaseFence(); // the header's stores before the writer's home writes
        }
        tail = pos + size;
        nextSeq = seq + 1;
        appendedSeq = seq;
        if (durableWhenWritten) {
            durableSeq = seq;
        }
        recordsAppended++;
        bytesAppended += size;
        return new Appended(pos, seq);
    }

    /** Records appended since open. */
    synchronized long recordsAppended() {
        return recordsAppended;
    }

    /** Bytes of the records appended since open. */
    synchronized long bytesAppended() {
        return bytesAppended;
    }

    /**
     * Bytes of the ring from the head (the oldest record not yet forced to the home files) to the tail, the
     * unused ends of segments between them included: how close writers are to waiting for a
     * checkpoint. The head is never more than a lap behind: a full ring waits for its checkpoint.
     */
    synchronized long fillBytes() {
        if (nextSeq == head.startSeq()) {
            return 0;
        }
        long start = head.startPos();
        int headSegment = (int) Math.min(segments - 1, (start - RECORDS_START) / segmentSize);
        long ahead = ((active - headSegment + ring) % ring) * segmentSize;
        return Math.max(0, ahead + (tail - segmentStart(active)) - (start - segmentStart(headSegment)));
    }

    /** The ring's size in bytes. */
    synchronized long capacityBytes() {
        return ring * segmentSize;
    }

    /**
     * Segment {@code seg}'s mapping, made on first use; null where the storage cannot map. Its pages
     * are in the mapping before the first record is copied in ({@link #prefault}). Called with this
     * journal's lock held, when the first record of this open goes to the segment or before
     * ({@link #mapRing}): it holds no record of the current epoch yet, so what it held may be
     * overwritten.
     */
    private MappedByteBuffer map(int seg) throws IOException {
        MappedByteBuffer m = maps[seg];
        if (m == null && mappable) {
            long sizeBefore = file.size();
            ByteBuffer b = file.mapReadWrite(segmentStart(seg), segmentSize);
            if (b instanceof MappedByteBuffer mb) {
                prefault(mb, seg, sizeBefore);
                maps[seg] = m = mb;
            } else {
                mappable = false;
            }
        }
        return m;
    }

    /**
     * Puts a new mapping's pages in place before records are copied into it. Copied into as they
     * came, every 4 KiB page of a 32 MiB segment took a fault of its own on its first store, and on
     * tmpfs a fault into a hole allocates and zeroes the page as well, a large share of a write's CPU
     * on a fresh volume (docs/history.md#crash-atomic-file-volumes). Here the part of the segment past the file's old
     * end (a hole: the mapping grew the file) is written with zeros first, which allocates its pages
     * without faults; then {@link MappedByteBuffer#load} touches the pages, and the kernel maps the
     * cached neighbours of each page it faults in along with it (fault-around), so a segment takes
     * a few hundred faults, not thousands.
     */
    private void prefault(MappedByteBuffer mb, int seg, long sizeBefore) throws IOException {
        long start = segmentStart(seg);
        long end = start + segmentSize;
        long pos = Math.max(start, sizeBefore);
        if (pos < end) {
            ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(1 << 20, end - pos));
            while (pos < end) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), end - pos));
                int n = zeros.remaining();
                file.write(zeros, pos);
                pos += n;
            }
        }
        // One read per page; the kernel's fault-around maps the neighbours of each one it faults in.
        int sum = 0;
        for (int at = 0; at < mb.capacity(); at += 4096) {
            sum += mb.get(at);
        }
        touched += sum; // kept, so the reads are not optimized away
    }

    /** Written only so that the reads of {@link #prefault} have an effect. */
    private long touched;

    /**
     * The mapping that holds {@code [pos, pos + len)} of the file, or null: read it from the file.
     * Without this journal's lock, so that readers do not wait for an append: a reader of a record
     * learnt of it through the index or a checkpoint's hand-over, both after the record's mapping
     * was made; a mapping not seen yet only sends the read to the file, whose page cache the
     * mapping shares.
     */
    ByteBuffer mapped(long pos, long len) {
        if (pos < RECORDS_START) {
            return null;
        }
        int seg = (int) ((pos - RECORDS_START) / segmentSize);
        if (seg >= segments || pos + len > segmentStart(seg) + segmentSize) {
            return null;
        }
        int at = (int) (pos - segmentStart(seg));
        MappedByteBuffer m = maps[seg];
        if (m != null) {
            return m.duplicate().limit(at + (int) len).position(at);
        }
        AtomicReferenceArray<ByteBuffer> r = readMaps;
        ByteBuffer v = seg < r.length() ? r.get(seg) : null;
        if (v == null || at + len > v.capacity()) {
            return null;
        }
        return v.duplicate().limit(at + (int) len).position(at);
    }

    long appendedSeq() {
        return appendedSeq;
    }

    long durableSeq() {
        return durableSeq;
    }

    /**
     * Makes every record up to {@code seq} durable. Group commit: a caller whose records were covered
     * by an fsync that began after they were written returns without one of its own.
     */
    void syncUpTo(long seq) throws IOException {
        if (durableSeq >= seq) {
            return;
        }
        synchronized (syncLock) {
            if (durableSeq >= seq) {
                return;
            }
            long upto;
            MappedByteBuffer[] toForce = new MappedByteBuffer[segments];
            boolean viaFile;
            synchronized (this) {
                // Every record up to upto was appended before this: in a segment marked here, or
                // written with a positional write.
                upto = appendedSeq;
                for (int i = 0; i < segments; i++) {
                    if (dirty[i]) {
                        toForce[i] = maps[i];
                        dirty[i] = false;
                    }
                }
                viaFile = !mappable || maps[active] == null;
            }
            try {
                for (MappedByteBuffer m : toForce) {
                    if (m != null) {
                        m.force();
                    }
                }
            } catch (java.io.UncheckedIOException e) {
                throw e.getCause();
            }
            if (viaFile) {
                file.sync();
            }
            if (upto > durableSeq) {
                durableSeq = upto;
            }
        }
    }

    /**
     * The {@code len} payload bytes of the record appended at {@code a}, as a view of its segment's
     * mapping, or null where the journal is not mapped. Valid until the head moves past the record,
     * which takes every block lock, so a writer holding its blocks' locks may use it.
     */
    ByteBuffer payloadView(Appended a, int len) {
        ByteBuffer m = mapped(a.pos() + RECORD_HEADER, len);
        return m == null ? null : m.slice();
    }

    /**
     * {@code [pos, pos + len)} of the file as a view of its segment's mapping, or null where that is
     * not mapped: read it with {@link #read}. For a checkpoint, whose records stay put until the head
     * moves past them.
     */
    ByteBuffer view(long pos, int len) {
        ByteBuffer m = mapped(pos, len);
        return m == null ? null : m.slice();
    }

    /** How many segments are mapped read-only for their readers (none where records go through mappings). */
    int segmentsMappedForReads() {
        AtomicReferenceArray<ByteBuffer> r = readMaps;
        int n = 0;
        for (int i = 0; i < r.length(); i++) {
            n += r.get(i) == null ? 0 : 1;
        }
        return n;
    }

    /** Reads {@code dst.remaining()} bytes of a record's payload at file position {@code pos}. */
    void read(ByteBuffer dst, long pos) throws IOException {
        ByteBuffer m = mapped(pos, dst.remaining());
        if (m != null) {
            dst.put(m);
        } else {
            file.readFully(dst, pos);
        }
    }

    void close() throws IOException {
        file.close();
    }
}
