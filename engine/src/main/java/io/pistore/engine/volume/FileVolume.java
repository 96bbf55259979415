package io.pistore.engine.volume;

import io.pistore.integrity.UnwrittenBlock;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A durable volume: {@code NAME.data} holds the data blocks back to back, {@code NAME.meta} the
 * metadata blocks back to back (block {@code i}'s metadata at {@code i * META}): the <i>home</i>
 * files. Every write and zeroing goes first to the write-ahead journal {@code NAME.journal} as one
 * record; {@code flush} and FUA force the journal only. Records reach the home files at a
 * checkpoint (on a disk, of half the ring's segments at once, in LBA order, on a thread of its own;
 * of everything when the volume closes), and only after the journal was forced; the head moves past
 * them once the home files were forced too, so
 * a crash or power loss at any point leaves each request complete or absent, never a block whose PI
 * does not match its data. Blocks whose newest version is still only in the journal are read from
 * there (an index in memory); the others as before. Opening a volume that was not closed replays
 * the journal. Where the files are in memory (tmpfs, ramfs) a writer instead writes its blocks
 * home itself once its record is in the journal, unforced ({@link #writeThrough}). The layout and the guarantees are in
 * docs/FORMAT.md.
 */
public final class FileVolume implements Volume {
    private static final int ZERO_CHUNK = 1 << 20;
    private static final long MAP_SEGMENT = 1L << 30;
    private static final ThreadLocal<ByteBuffer> SCRATCH = new ThreadLocal<>();
    /** How often a volume with {@link #ON_A_THREAD} checkpoints looks whether it went idle. */
    private static final long IDLE_TICK_MS = 500;
    /** One daemon thread for every volume's idle tick: it only starts checkpoints, never runs them. */
    private static final ScheduledExecutorService IDLE = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "pistore-journal-idle");
        t.setDaemon(true);
        return t;
    });
    /** Each checkpoint on a daemon thread of its own: one per segment filled, so starting it costs nothing that matters. */
    static final Executor ON_A_THREAD = task -> {
        Thread t = new Thread(task, "pistore-checkpoint");
        t.setDaemon(true);
        t.start();
    };
    /**
     * The journal's ring: segments of {@code JOURNAL_SEGMENT} bytes of records, as many as the
     * volume's data and metadata fill, from {@code JOURNAL_SEGMENTS} to {@code MOST_JOURNAL_SEGMENTS}
     * (256 MiB to 1 GiB; {@link #ringSegments}). A full segment is checkpointed while the next ones
     * fill; writers wait only when the ring is full of records not yet forced to the home files.
     * The cap bounds recovery time, the index and the journal file; the largest request must fit in
     * one segment.
     */
    static final long JOURNAL_SEGMENT = 32L << 20;
    static final int JOURNAL_SEGMENTS = 8;
    static final int MOST_JOURNAL_SEGMENTS = 32;
    /**
     * Bytes written home between forcings of the home files on a disk ({@link #homeSyncEvery}): the
     * smallest piece that still shortens a flush's tail, larger than a piece whose extra forcings
     * cost writes per second and CPU (the sweep: docs/history.md#crash-atomic-file-volumes).
     */
    static final long HOME_SYNC_BYTES = 256 << 10;

    private final String name;
    private final BlockFormat format;
    private final long blockCount;
    private final StorageFile data;
    private final StorageFile meta;
    private final Journal journal;
    /** The home files as checkpoints and recovery write them ({@code homeMeta} null without metadata). */
    private final HomeFile homeData;
    private final HomeFile homeMeta;
    private final byte[] unwrittenMeta;
    private final BlockLocks locks = new BlockLocks();
    /**
     * Blocks whose newest version is only in the journal, with where. An entry is put under its
     * block's write lock; a checkpoint removes the entries it applied once the blocks are durable at
     * home, each only if no newer one replaced it meanwhile.
     */
    private final JournalIndex index = new JournalIndex();
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
    /** Set by the first close; guarded by all block locks. */
    private boolean closed;

    /**
     * Runs the checkpoint of a full journal segment: on a thread of its own ({@link #ON_A_THREAD});
     * tests run it inline or at moments they choose, deterministically.
     */
    private final Executor checkpoints;
    /**
     * Checkpoints of full segments, oldest first, until awaited; guarded by all block locks. Each
     * waits for the one before it, so they apply segments in order.
     */
    private final ArrayDeque<FutureTask<Void>> pendingCheckpoints = new ArrayDeque<>();
    /**
     * Full segments gathered per checkpoint that writes home: 1 where the files are in memory
     * (forcing costs nothing), else half the ring. On a disk each forcing of the home files writes
     * the blocks, scattered over the volume, that the gathered segments changed, and sustained
     * random writes are bound by how often that happens; the more segments per forcing, the more
     * rewrites of one block are written home once. Half, so writers still have the other half of
     * the ring while the gathered segments are written home and forced. Set at open.
     */
    private int segmentsPerHomeSync;
    /**
     * Bytes a checkpoint writes home between forcings of the home files while it writes a batch
     * home ({@link #writeGatheredHome}) and flushes are coming; unbounded where the files are in
     * memory. Forcing half a ring at once put hundreds of MiB of scattered home writes in the disk's
     * queue, and a user's flush (a forcing of the journal) waited behind them; forced in pieces, it
     * waits for one piece at most. Without flushes a batch is forced once: writers wait for ring space
     * while a batch goes home, and every piece is one more forcing
     * (docs/history.md#crash-atomic-file-volumes).
     * Set at open.
     */
    private long homeSyncEvery = Long.MAX_VALUE;
    /** Changes with every flush and FUA (a lost increment still changes it): batches compare. */
    private volatile long flushes;
    /** {@link #flushes} when the last batch started going home; under {@link #homeSync}. */
    private long flushesAtLastBatch;
    /**
     * Write-through: where every file is in memory (tmpfs, ramfs: a write survives the process's
     * crash once made, nothing survives the machine's), a writer appends its record, which is then
     * as durable as it gets (not forced), and writes its blocks home itself, from the record's
     * bytes in the journal's mapping, before it releases their locks; nothing is indexed, no
     * checkpoint copies anything, and a segment left behind is already home, so moving on only
     * forces the home files and moves the head. Measured on tmpfs: the checkpoint's scan, second copy and mapping faults were more than
     * half the CPU of a random write. On a disk a forcing per request would bind writes to the
     * disk's flush rate, so there records wait in the journal for a checkpoint as before.
     */
    private final boolean writeThrough;
    /**
     * Full segments whose records are forced in the journal but not yet written home (gathered for
     * the next checkpoint that writes home), and the last record and next position of the newest of
     * them: the head moves past them only after they were written home and the home files forced.
     * Written under {@link #homeSync}, which writing home holds throughout; the count is read
     * without it, so a writer looking for journal space does not wait for a checkpoint in progress
     * unless it must.
     */
    private volatile int gathered;
    private long gatheredLastSeq;
    private long gatheredNextPos;
    private final Object homeSync = new Object();
    /** Changes with every append (a lost increment still changes it): the idle tick compares. */
    private volatile long appends;
    private long appendsAtLastTick;
    private ScheduledFuture<?> idleTick;
    /** Checkpoints that applied records, and their time: figures for the metrics (rare, so atomics). */
    private final java.util.concurrent.atomic.AtomicLong checkpointsDone = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong checkpointNanos = new java.util.concurrent.atomic.AtomicLong();
    /** Records replayed when this volume was opened. */
    private long replayedOnOpen;
    /** Why a background checkpoint failed; later writes fail with it. */
    private volatile IOException checkpointFailure;

    private FileVolume(String name, BlockFormat format, long blockCount, StorageFile data, StorageFile meta,
                       Journal journal, boolean writeThrough, long mapSegment, Executor checkpoints) throws IOException {
        this.name = name;
        this.checkpoints = checkpoints;
        this.writeThrough = writeThrough;
        this.format = format;
        this.blockCount = blockCount;
        this.data = data;
        this.meta = meta;
        this.journal = journal;
        this.unwrittenMeta = UnwrittenBlock.metadata(format);
        ByteBuffer[] maps = null;
        long segment = 0;
        if (meta != null) {
            int ms = format.metadataSize();
            segment = Math.max(1, mapSegment / ms) * ms;
            long size = blockCount * ms;
            maps = new ByteBuffer[(int) ((size + segment - 1) / segment)];
            for (int i = 0; i < maps.length; i++) {
                long at = i * segment;
                maps[i] = meta.mapReadOnly(at, Math.min(segment, size - at));
                if (maps[i] == null) {
                    maps = null;
                    break;
                }
            }
        }
        this.metaMaps = maps;
        this.metaSegment = segment;
        int ds = format.dataSize();
        this.homeData = new HomeFile(data, name + ".data", blockCount * ds, Math.max(1, mapSegment / ds) * ds);
        this.homeMeta = meta == null ? null
                : new HomeFile(meta, name + ".meta", blockCount * format.metadataSize(), segment);
    }

    /** Creates the files of a new volume: sparse zero data, metadata of unwritten blocks, an empty journal; forced to disk. */
    static FileVolume create(Path dataFile, Path metaFile, Path journalFile, String name, BlockFormat format,
                             long blockCount) throws IOException {
        StorageFile d = ChannelStorageFile.create(dataFile);
        StorageFile m = null;
        StorageFile j = null;
        try {
            if (format.metadataSize() > 0) {
                m = ChannelStorageFile.create(metaFile);
            }
            j = ChannelStorageFile.create(journalFile);
            return create(d, m, j, name, format, blockCount, MAP_SEGMENT, JOURNAL_SEGMENT, ON_A_THREAD);
        } catch (IOException | RuntimeException e) {
            closeAll(d, m, j);
            throw e;
        }
    }

    /** Creates a volume in empty storage files ({@code meta} null without metadata). */
    static FileVolume create(StorageFile d, StorageFile m, StorageFile j, String name, BlockFormat format,
                             long blockCount, long mapSegment, long journalSegment, Executor checkpoints)
            throws IOException {
        d.truncate(0);
        if (blockCount > 0) {
            // A sparse file: writing the last byte sets the length without writing the rest.
            d.write(ByteBuffer.allocate(1), blockCount * format.dataSize() - 1);
        }
        if (m != null) {
            m.truncate(0);
            // Its full length before it is mapped; filled just below.
            m.write(ByteBuffer.allocate(1), blockCount * format.metadataSize() - 1);
            fillUnwrittenMetadata(m, format, UnwrittenBlock.metadata(format), 0, blockCount);
            m.sync();
        }
        d.sync();
        Journal.initialize(j, format);
        return open(d, m, j, name, format, blockCount, mapSegment, journalSegment, checkpoints, note -> { });
    }

    /** Writes the empty journal of an existing volume that had none (a volume of manifest version 1). */
    static void createJournal(Path journalFile, BlockFormat format) throws IOException {
        java.nio.file.Files.deleteIfExists(journalFile);
        try (StorageFile j = ChannelStorageFile.create(journalFile)) {
            Journal.initialize(j, format);
        }
    }

    /**
     * Opens the files of an existing volume, checking their sizes against the manifest, and replays
     * its journal if it was not closed; {@code notes} gets one line when it did.
     */
    static FileVolume open(Path dataFile, Path metaFile, Path journalFile, String name, BlockFormat format,
                           long blockCount, Consumer<String> notes) throws IOException {
        return open(dataFile, metaFile, journalFile, name, format, blockCount, MAP_SEGMENT, notes);
    }

    /** As above, mapping the metadata in pieces of about {@code mapSegment} bytes (tests cut them small). */
    static FileVolume open(Path dataFile, Path metaFile, Path journalFile, String name, BlockFormat format,
                           long blockCount, long mapSegment, Consumer<String> notes) throws IOException {
        StorageFile d = ChannelStorageFile.open(dataFile);
        StorageFile m = null;
        StorageFile j = null;
        try {
            long wantData = blockCount * format.dataSize();
            if (d.size() != wantData) {
                throw new IOException("volume " + name + ": " + dataFile + " has " + d.size() + " bytes, the manifest says "
                        + wantData);
            }
            if (format.metadataSize() > 0) {
                m = ChannelStorageFile.open(metaFile);
                long wantMeta = blockCount * format.metadataSize();
                if (m.size() != wantMeta) {
                    throw new IOException("volume " + name + ": " + metaFile + " has " + m.size()
                            + " bytes, the manifest says " + wantMeta);
                }
            }
            if (!java.nio.file.Files.exists(journalFile)) {
                throw new IOException("volume " + name + ": journal " + journalFile.getFileName() + " is missing");
            }
            j = ChannelStorageFile.open(journalFile);
            return open(d, m, j, name, format, blockCount, mapSegment, JOURNAL_SEGMENT, ON_A_THREAD, notes);
        } catch (IOException | RuntimeException e) {
            closeAll(d, m, j);
            throw e;
        }
    }

    /**
     * Opens a volume over its storage files: reads the journal header and, unless the volume was
     * closed cleanly, replays the journal into the home files, forces them and empties the journal.
     * Replaying again after a crash during the replay gives the same files (records hold whole
     * blocks, applied in order), and the header that empties the journal is written only after the
     * home files are forced. The journal is then marked in use (not clean) before any write.
     */
    static FileVolume open(StorageFile d, StorageFile m, StorageFile j, String name, BlockFormat format,
                           long blockCount, long mapSegment, long journalSegment, Executor checkpoints,
                           Consumer<String> notes) throws IOException {
        Journal journal = new Journal(j, name + ".journal", format, journalSegment,
                ringSegments(blockCount, format, journalSegment));
        Journal.Header h = journal.readHeader(); // its message names the journal file, so the volume
        boolean writeThrough = d.inMemory() && j.inMemory() && (m == null || m.inMemory());
        FileVolume v = new FileVolume(name, format, blockCount, d, m, journal, writeThrough, mapSegment, checkpoints);
        long n = 0;
        if (!h.clean()) {
            long t0 = System.nanoTime();
            // Forced once at the end: no request runs during recovery, so no flush waits behind it.
            n = v.applyInLbaOrder(h, Long.MAX_VALUE, true, -1, () -> Long.MAX_VALUE);
            v.syncHome();
            notes.accept(name + ": recovered " + n + " journal records in " + (System.nanoTime() - t0) / 1_000_000
                    + " ms");
        }
        v.replayedOnOpen = n;
        journal.start(h, h.startSeq() + n);
        journal.resetEmpty(false);
        if (writeThrough) {
            journal.useTwoSegments();
            journal.mapRing();
            journal.durableWhenWritten();
        }
        v.segmentsPerHomeSync = d.inMemory() ? 1 : journal.ringSegments() / 2;
        v.homeSyncEvery = d.inMemory() ? Long.MAX_VALUE : homeSyncEvery(journalSegment);
        if (checkpoints == ON_A_THREAD) {
            v.idleTick = IDLE.scheduleWithFixedDelay(v::idleTick, IDLE_TICK_MS, IDLE_TICK_MS, TimeUnit.MILLISECONDS);
        }
        return v;
    }

    /**
     * Bytes written home between forcings of the home files on a disk, for journal segments of
     * {@code segmentSize}: {@link #HOME_SYNC_BYTES}, or an eighth of a segment where segments are
     * that small (tests), so a batch still goes home in several pieces.
     */
    static long homeSyncEvery(long segmentSize) {
        return Math.max(1, Math.min(HOME_SYNC_BYTES, segmentSize / 8));
    }

    /**
     * Segments of the ring of a volume of {@code blockCount} blocks: enough to hold its data and
     * metadata once (at most {@link #MOST_RING_BLOCKS} blocks' worth), at least
     * {@link #JOURNAL_SEGMENTS}, at most {@link #MOST_JOURNAL_SEGMENTS}.
     * Like a database's write-ahead log, sized for how much may be written between checkpoints that
     * force the home files; a volume much larger than the cap gains little from more, since its
     * random writes rarely hit a block twice within one ring.
     */
    static int ringSegments(long blockCount, BlockFormat format, long segmentSize) {
        long block = format.dataSize() + format.metadataSize();
        long bytes = Math.min(blockCount, MOST_RING_BLOCKS) * block;
        long n = (bytes + segmentSize - 1) / segmentSize;
        return (int) Math.max(JOURNAL_SEGMENTS, Math.min(MOST_JOURNAL_SEGMENTS, n));
    }

    /**
     * Blocks the ring grows to hold at most: the index has an entry per block in the ring, so for
     * small blocks the ring stops growing before 1 GiB (512-byte blocks keep the ring of 8 segments,
     * about 516 000 blocks, as before).
     */
    static final long MOST_RING_BLOCKS = 1 << 18;

    private static void closeAll(StorageFile... files) throws IOException {
        for (StorageFile f : files) {
            if (f != null) {
                f.close();
            }
        }
    }

    static void fillUnwrittenMetadata(StorageFile m, BlockFormat format, byte[] unwritten, long lba, long blocks)
            throws IOException {
        fillUnwritten(m::write, format, unwritten, lba, blocks);
    }

    /** Where {@link #fillUnwritten} writes: a storage file, or a home file at a checkpoint. */
    private interface Writes {
        void write(ByteBuffer src, long pos) throws IOException;
    }

    private static void fillUnwritten(Writes m, BlockFormat format, byte[] unwritten, long lba, long blocks)
            throws IOException {
        int ms = format.metadataSize();
        int perChunk = Math.max(1, ZERO_CHUNK / ms);
        byte[] pattern = new byte[(int) Math.min(blocks, perChunk) * ms];
        for (int i = 0; i < pattern.length / ms; i++) {
            System.arraycopy(unwritten, 0, pattern, i * ms, ms);
        }
        long done = 0;
        while (done < blocks) {
            int n = (int) Math.min(blocks - done, pattern.length / ms);
            m.write(ByteBuffer.wrap(pattern, 0, n * ms), (lba + done) * ms);
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
        // The index first, the home files after: a checkpoint removes a block's entry only after it
        // wrote the block home, so a block missed here is already there.
        // Per block found: sequence number (ABSENT: not in the journal), data and metadata position.
        long[] newer = null;
        long[] entry = new long[3];
        for (int i = 0; i < blocks && !index.isEmpty(); i++) {
            if (index.lookUp(lba + i, entry) != JournalIndex.ABSENT) {
                if (newer == null) {
                    newer = new long[3 * blocks];
                    for (int k = 0; k < blocks; k++) {
                        newer[3 * k] = JournalIndex.ABSENT;
                    }
                }
                System.arraycopy(entry, 0, newer, 3 * i, 3);
            }
        }
        boolean withMeta = metaOut != null && format.metadataSize() > 0;
        if (blocks == 1 && newer != null) {
            readFromJournal(newer[1], newer[2], 0, dataOut, withMeta ? metaOut : null); // the home copy is older
            return;
        }
        readInto(data, dataOut, lba * format.dataSize(), (long) blocks * format.dataSize());
        if (withMeta) {
            readMeta(metaOut, lba * format.metadataSize(), (long) blocks * format.metadataSize());
        }
        if (newer != null) {
            for (int i = 0; i < blocks; i++) {
                if (newer[3 * i] != JournalIndex.ABSENT) {
                    readFromJournal(newer[3 * i + 1], newer[3 * i + 2], i, dataOut, withMeta ? metaOut : null);
                }
            }
        }
    }

    /**
     * Replaces block {@code i} of the outputs, read from the home files, with its newer journal
     * version at {@code dataPos} and {@code metaPos} ({@code dataPos < 0}: zeroed).
     */
    private void readFromJournal(long dataPos, long metaPos, int i, ScatterList dataOut, ScatterList metaOut)
            throws IOException {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        if (dataPos < 0) {
            ScatterList d = dataOut.slice((long) i * ds, ds);
            for (int s = 0; s < d.segmentCount(); s++) {
                ByteBuffer seg = d.segment(s);
                for (int k = 0; k < seg.limit(); k++) {
                    seg.put(k, (byte) 0);
                }
            }
            if (metaOut != null) {
                metaOut.write((long) i * ms, unwrittenMeta, 0, ms);
            }
            return;
        }
        ByteBuffer b = scratch(ds + ms);
        b.limit(metaOut != null ? ds + ms : ds);
        if (metaOut != null && metaPos == dataPos + ds) {
            journal.read(b, dataPos); // a one-block record: its data and metadata in one read
            metaOut.write((long) i * ms, b, ds, ms);
        } else {
            b.limit(ds);
            journal.read(b, dataPos);
            if (metaOut != null) {
                b.limit(ds + ms).position(ds);
                journal.read(b, metaPos);
                metaOut.write((long) i * ms, b, ds, ms);
            }
        }
        dataOut.write((long) i * ds, b, 0, ds);
    }

    /** A direct buffer of this thread's, cleared, of at least {@code n} bytes: reads from the journal land here without allocating. */
    private static ByteBuffer scratch(int n) {
        ByteBuffer b = SCRATCH.get();
        if (b == null || b.capacity() < n) {
            b = ByteBuffer.allocateDirect(n);
            SCRATCH.set(b);
        }
        return b.clear();
    }

    /** Copies {@code len} bytes of metadata at file offset {@code pos} out of the mappings, or reads them. */
    private void readMeta(ScatterList out, long pos, long len) throws IOException {
        if (metaMaps == null) {
            readInto(meta, out, pos, len);
            return;
        }
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
        if (format.metadataSize() > 0 && metaIn == null) {
            throw new IllegalArgumentException("format " + format.sizes() + " needs metadata for a write");
        }
        append(Journal.WRITE, lba, blocks, dataIn, metaIn);
        if (fua) {
            flush(); // outside the lock: readers of these blocks need not wait for the disk
        }
    }

    @Override
    public void writeZeroes(long lba, int blocks, boolean fua) throws IOException {
        append(Journal.ZEROES, lba, blocks, null, null);
        if (fua) {
            flush();
        }
    }

    /**
     * Appends one request to the journal under its blocks' write locks and indexes its blocks. When
     * the active journal segment is full the journal moves on to the next one first. A zeroing of
     * many blocks is applied at once by a full checkpoint instead of being indexed block by block (it
     * holds every block's lock anyway).
     */
    private void append(byte type, long lba, int blocks, ScatterList dataIn, ScatterList metaIn) throws IOException {
        for (;;) {
            long token = locks.lock(lba, blocks, true);
            try {
                IOException failed = checkpointFailure;
                if (failed != null) {
                    throw new IOException("volume " + name + ": " + (writeThrough ? "" : "a checkpoint failed: ")
                            + failed.getMessage(), failed);
                }
                Journal.Appended a = journal.append(type, lba, blocks, dataIn, metaIn);
                appends++;
                if (a == null && BlockLocks.coversAll(token)) {
                    fullCheckpointLocked(false);
                    a = journal.append(type, lba, blocks, dataIn, metaIn);
                }
                if (a != null) {
                    if (writeThrough) {
                        writeThrough(type, a, lba, blocks, dataIn, metaIn);
                    } else if (type == Journal.ZEROES && BlockLocks.coversAll(token)) {
                        fullCheckpointLocked(false);
                    } else {
                        indexRecord(type, a, lba, blocks);
                    }
                    return;
                }
            } finally {
                locks.unlock(token, true);
            }
            nextSegment(Journal.recordSize(type, blocks, format.dataSize(), format.metadataSize()));
        }
    }

    /**
     * Write-through: writes the blocks of the record just appended home, under their locks. The
     * files are in memory, so the record is already as durable as it gets (it survives the
     * process's crash; nothing survives the machine's) and is not forced: home files are still
     * written only with records already durable, so a crash between the data and the metadata write
     * is repaired by replaying the record. A failed home write is indexed (reads take the journal's
     * version) and fails every later write; reopening replays the journal.
     */
    private void writeThrough(byte type, Journal.Appended a, long lba, int blocks, ScatterList dataIn,
                              ScatterList metaIn) throws IOException {
        try {
            journal.syncUpTo(a.seq());
            int ds = format.dataSize();
            int ms = format.metadataSize();
            if (type == Journal.ZEROES) {
                writeZeroData(homeData::writePositional, lba, blocks);
                if (homeMeta != null) {
                    fillUnwritten(homeMeta::writeShared, format, unwrittenMeta, lba, blocks);
                }
                return;
            }
            int dlen = blocks * ds;
            int mlen = blocks * ms;
            ByteBuffer p = journal.payloadView(a, dlen + mlen);
            if (p != null) {
                homeData.writePositional(p.duplicate().limit(dlen), lba * ds);
                if (homeMeta != null) {
                    homeMeta.writeShared(p.duplicate().limit(dlen + mlen).position(dlen), lba * ms);
                }
            } else {
                writeFrom(homeData, dataIn, dlen, lba * ds, false);
                if (homeMeta != null) {
                    writeFrom(homeMeta, metaIn, mlen, lba * ms, true);
                }
            }
        } catch (IOException | RuntimeException e) {
            indexRecord(type, a, lba, blocks);
            checkpointFailure = new IOException("writing home failed: " + e.getMessage(), e);
            throw new IOException("volume " + name + ": " + checkpointFailure.getMessage(), e);
        }
    }

    /** Writes {@code len} bytes of {@code src} at {@code pos} through this thread's direct scratch buffer. */
    private static void writeFrom(HomeFile home, ScatterList src, int len, long pos, boolean shared)
            throws IOException {
        int done = 0;
        while (done < len) {
            int n = Math.min(len - done, ZERO_CHUNK);
            ByteBuffer b = scratch(n);
            src.read(done, b, 0, n);
            if (shared) {
                home.writeShared(b.limit(n).position(0), pos + done);
            } else {
                home.writePositional(b.limit(n).position(0), pos + done);
            }
            done += n;
        }
    }

    private void indexRecord(byte type, Journal.Appended a, long lba, int blocks) {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        long dataAt = a.pos() + Journal.RECORD_HEADER;
        long metaAt = dataAt + (long) blocks * ds;
        for (int i = 0; i < blocks; i++) {
            if (type == Journal.ZEROES) {
                index.put(lba + i, a.seq(), -1, -1);
            } else {
                index.put(lba + i, a.seq(), dataAt + (long) i * ds, metaAt + (long) i * ms);
            }
        }
    }

    /**
     * Moves the journal on to its next segment (unless another thread did) and starts the checkpoint
     * of the full one. Holding every block lock keeps readers of the segment about to be reused out:
     * its checkpoint, awaited here when the ring is full, finished before.
     */
    private void nextSegment(long need) throws IOException {
        moveOn(false, need);
    }

    /**
     * When no request came since the last tick and the active segment holds records, moves on to the
     * next segment, which checkpoints this one: an idle volume's journal drains, and its blocks read
     * from the home files again.
     */
    private void idleTick() {
        long a = appends;
        if (a == appendsAtLastTick) {
            try {
                writeGatheredHome(); // what the tick before gathered: an idle journal drains
                checkpointActiveSegment();
            } catch (IOException | RuntimeException e) {
                // Kept in checkpointFailure when a checkpoint failed; the next write reports it.
            }
        }
        appendsAtLastTick = a;
    }

    /** Moves on to the next segment if the active one holds records, checkpointing it meanwhile. */
    void checkpointActiveSegment() throws IOException {
        moveOn(true, 0);
    }

    private void moveOn(boolean whenAnyRecords, long need) throws IOException {
        long token = locks.lockAll(true);
        try {
            if (closed || !(whenAnyRecords ? journal.activeHasRecords() : journal.needsSwap(need))) {
                return;
            }
            if (writeThrough) {
                moveOnWrittenThrough();
                return;
            }
            while (!pendingCheckpoints.isEmpty() && pendingCheckpoints.peekFirst().isDone()) {
                await(pendingCheckpoints.pollFirst());
            }
            // Every segment but the active one holds records not yet forced home (waiting for their
            // checkpoint, or gathered and waiting to go home): the next one is free only after
            // the oldest is. An overcount (a checkpoint done but still queued) only forces sooner.
            while (pendingCheckpoints.size() + gathered() >= journal.ringSegments() - 1) {
                if (gathered() > 0) {
                    writeGatheredHome();
                } else {
                    await(pendingCheckpoints.pollFirst());
                }
            }
            Journal.Appended next = journal.swap();
            FutureTask<Void> before = pendingCheckpoints.peekLast();
            FutureTask<Void> task = new FutureTask<>(() -> {
                if (before != null) {
                    await(before);
                }
                checkpointSegment(next.seq(), next.pos());
                return null;
            });
            pendingCheckpoints.addLast(task);
            checkpoints.execute(task);
        } finally {
            locks.unlock(token, true);
        }
    }

    /**
     * Write-through, with every block lock held: every record of the active segment is home (its
     * writer wrote it before releasing its locks), so the home files are forced and the head moves to
     * the next segment, where the next record goes. Nothing is applied, no thread is started.
     */
    private void moveOnWrittenThrough() throws IOException {
        IOException failed = checkpointFailure;
        if (failed != null) {
            throw new IOException("volume " + name + ": " + failed.getMessage(), failed);
        }
        long t0 = System.nanoTime();
        try {
            syncHome();
            Journal.Appended next = journal.swap();
            journal.advanceHead(next.seq() + 1, next.pos());
        } catch (IOException | RuntimeException e) {
            // The journal may have moved on with the head left behind: no record may follow.
            checkpointFailure = new IOException("moving the journal on failed: " + e.getMessage(), e);
            throw e;
        }
        checkpointed(t0);
    }

    /** Waits for every checkpoint started, oldest first; with every block lock held. */
    private void awaitCheckpoints() throws IOException {
        while (!pendingCheckpoints.isEmpty()) {
            await(pendingCheckpoints.pollFirst());
        }
        IOException failed = checkpointFailure;
        if (failed != null) {
            throw new IOException("volume " + name + ": " + (writeThrough ? "" : "a checkpoint failed: ")
                    + failed.getMessage(), failed);
        }
    }

    /** Waits for one checkpoint, running it here if it has not started; a failure is kept for later writes. */
    private void await(FutureTask<Void> t) throws IOException {
        t.run(); // nothing if it ran or runs elsewhere
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    t.get();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    checkpointFailure = c instanceof IOException io ? io : new IOException(c);
                    throw checkpointFailure;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Checkpoints the records up to {@code lastSeq} (the segment left behind) while writers fill the
     * next ones: forces them in the journal (so the disk writes each segment soon after it fills,
     * not all at once when they go home) and gathers the segment; every {@link #segmentsPerHomeSync}
     * segments it writes the gathered ones home, forces the home files, moves the head to
     * {@code nextPos} where record {@code lastSeq + 1} goes and drops the index entries applied
     * ({@link #writeGatheredHome}). Home files change only there and in recovery, and only with records
     * already durable.
     */
    private void checkpointSegment(long lastSeq, long nextPos) throws IOException {
        long t0 = System.nanoTime();
        journal.syncUpTo(lastSeq);
        synchronized (homeSync) {
            gathered++;
            gatheredLastSeq = lastSeq;
            gatheredNextPos = nextPos;
            if (gathered >= segmentsPerHomeSync) {
                writeGatheredHome();
            }
        }
        checkpointed(t0);
    }

    private int gathered() {
        return gathered;
    }

    /**
     * Writes every gathered segment home (in LBA order), forces the home files and moves the head
     * past them, then drops their index entries (reads of those blocks go home again).
     */
    private void writeGatheredHome() throws IOException {
        synchronized (homeSync) {
            if (gathered == 0) {
                return;
            }
            long durable = journal.durableSeq(); // each gathered segment was forced when gathered
            // In pieces once a flush came since the last batch started, even if in the middle of this one.
            long since = flushesAtLastBatch;
            flushesAtLastBatch = flushes;
            long n = applyInLbaOrder(journal.head(), gatheredLastSeq, false, durable,
                    () -> flushes != since ? homeSyncEvery : Long.MAX_VALUE);
            expectApplied(n, gatheredLastSeq - journal.head().startSeq() + 1);
            syncHome();
            journal.advanceHead(gatheredLastSeq + 1, gatheredNextPos);
            index.removeUpTo(gatheredLastSeq);
            gathered = 0;
        }
    }

    private void checkpointed(long t0) {
        checkpointNanos.addAndGet(System.nanoTime() - t0);
        checkpointsDone.incrementAndGet();
    }

    /** What the journal did since this volume was opened, and how full it is. */
    public JournalFigures journalFigures() {
        return new JournalFigures(journal.recordsAppended(), journal.bytesAppended(), checkpointsDone.get(),
                checkpointNanos.get(), replayedOnOpen, journal.fillBytes(), journal.capacityBytes());
    }

    /**
     * A checkpoint that found fewer records than it wrote (the journal changed under it) must not
     * move the head past them: it fails, and the records stay for recovery.
     */
    private void expectApplied(long found, long expected) throws IOException {
        if (found != expected) {
            throw new IOException("volume " + name + ": checkpoint found " + found + " of " + expected
                    + " journal records");
        }
    }

    /**
     * With every block locked: waits for a background checkpoint, forces the journal, applies every
     * record to the home files, forces them, and empties the journal (marked clean when closing).
     */
    private void fullCheckpointLocked(boolean clean) throws IOException {
        awaitCheckpoints();
        if (writeThrough) {
            syncHome(); // every record is home already
            journal.resetEmpty(clean);
            return;
        }
        writeGatheredHome();
        if (!journal.isEmpty()) {
            long t0 = System.nanoTime();
            long last = journal.appendedSeq();
            journal.syncUpTo(last);
            long durable = journal.durableSeq();
            Journal.Header head = journal.head();
            // Forced once at the end: every block lock is held and the journal was just forced, so
            // no request or flush waits behind it.
            long n = applyInLbaOrder(head, last, false, durable, () -> Long.MAX_VALUE);
            expectApplied(n, last - head.startSeq() + 1);
            syncHome();
            index.clear();
            checkpointed(t0);
        }
        journal.resetEmpty(clean);
    }

    /** Forces what checkpoints or recovery wrote to the home files. */
    private void syncHome() throws IOException {
        homeData.sync();
        if (homeMeta != null) {
            homeMeta.sync();
        }
    }

    /**
     * Applies the records from {@code from}'s head up to {@code lastSeq} to the home files
     * ({@code verify}: checking their payload CRCs, as recovery must) and returns how many: each
     * block's newest version among them, in LBA order ({@link HomeBatch}). A block is skipped when
     * a later record rewrites it that is durable (sequence number up to {@code durable}; -1 in
     * recovery, which applies every block): recovery would replay that one too. The home files are
     * forced every {@code syncEvery} bytes written home (asked after each write: {@link #homeSyncEvery}
     * or unbounded); the caller forces them once more at the end.
     */
    private long applyInLbaOrder(Journal.Header from, long lastSeq, boolean verify, long durable,
                                 java.util.function.LongSupplier syncEvery) throws IOException {
        int ds = format.dataSize();
        int ms = format.metadataSize();
        ByteBuffer[] buffer = new ByteBuffer[1];
        HomeBatch batch = new HomeBatch(blockCount, ds, ms, new HomeBatch.Sink() {
            /** Bytes written home since the home files were last forced. */
            private long unforced;

            @Override
            public void write(long lba, int blocks, long dataPos, long metaPos) throws IOException {
                homeData.write(journalBytes(dataPos, blocks * ds, buffer), lba * ds);
                if (homeMeta != null) {
                    homeMeta.write(journalBytes(metaPos, blocks * ms, buffer), lba * ms);
                }
                written(blocks);
            }

            @Override
            public void zero(long lba, int blocks) throws IOException {
                writeZeroData(homeData::write, lba, blocks);
                if (homeMeta != null) {
                    fillUnwritten(homeMeta::write, format, unwrittenMeta, lba, blocks);
                }
                written(blocks);
            }

            /**
             * Forces the home files once {@code syncEvery} bytes went home since the last time:
             * only blocks of durable records were written, and the head does not move until the
             * caller forces the rest, so this changes nothing a crash can leave behind.
             */
            private void written(int blocks) throws IOException {
                unforced += (long) blocks * (ds + ms);
                if (unforced >= syncEvery.getAsLong()) {
                    syncHome();
                    unforced = 0;
                }
            }
        });
        long n = journal.scan(from, blockCount, lastSeq, verify, (seq, type, lba, blocks, pos) -> {
            long dataAt = pos + Journal.RECORD_HEADER;
            long metaAt = dataAt + (long) blocks * ds;
            for (int i = 0; i < blocks; i++) {
                if (isRewrittenLater(lba + i, seq, durable)) {
                    continue;
                }
                if (type == Journal.WRITE) {
                    batch.add(lba + i, dataAt + (long) i * ds, metaAt + (long) i * ms);
                } else {
                    batch.add(lba + i, -1, -1);
                }
            }
        });
        batch.writeOut();
        return n;
    }

    /** {@code len} bytes of the journal at {@code pos}: a view of its mapping, or read into {@code buffer[0]}. */
    private ByteBuffer journalBytes(long pos, int len, ByteBuffer[] buffer) throws IOException {
        ByteBuffer v = journal.view(pos, len);
        if (v != null) {
            return v;
        }
        if (buffer[0] == null || buffer[0].capacity() < len) {
            // Direct, so a positional write from it copies nothing more.
            buffer[0] = ByteBuffer.allocateDirect(Math.max(len, HomeBatch.MOST_PER_WRITE * (format.dataSize() + 8)));
        }
        ByteBuffer b = buffer[0].clear().limit(len);
        journal.read(b, pos);
        return b.flip();
    }

    private boolean isRewrittenLater(long lba, long seq, long durable) {
        long newest = index.seqOf(lba); // ABSENT is below every sequence number
        return newest > seq && newest <= durable;
    }

    private void writeZeroData(Writes home, long lba, long blocks) throws IOException {
        long pos = lba * format.dataSize();
        long len = blocks * format.dataSize();
        ByteBuffer zeros = ByteBuffer.allocate((int) Math.min(len, ZERO_CHUNK));
        while (len > 0) {
            zeros.clear().limit((int) Math.min(len, zeros.capacity()));
            int n = zeros.remaining();
            home.write(zeros, pos);
            pos += n;
            len -= n;
        }
    }

    /** Forces the journal: every request appended so far is durable (concurrent flushes share one fsync). */
    @Override
    public void flush() throws IOException {
        flushes++;
        journal.syncUpTo(journal.appendedSeq());
    }

    /**
     * Applies everything in the journal to the home files, forces them and empties the journal, as
     * closing does: afterwards {@code NAME.data} and {@code NAME.meta} alone hold every block (to
     * copy them, or for a test to damage a stored block where reads will find it).
     */
    public void checkpoint() throws IOException {
        long token = locks.lockAll(true);
        try {
            if (closed) {
                throw new IOException("volume " + name + " is closed");
            }
            fullCheckpointLocked(false);
        } finally {
            locks.unlock(token, true);
        }
    }

    /** Checkpoints and marks the journal clean, so the next open has nothing to replay. */
    @Override
    public void close() throws IOException {
        long token = locks.lockAll(true);
        try {
            if (closed) {
                return;
            }
            closed = true;
            if (idleTick != null) {
                idleTick.cancel(false);
            }
            fullCheckpointLocked(true);
        } finally {
            locks.unlock(token, true);
            try {
                closeAll(data, meta);
            } finally {
                journal.close();
            }
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
