package io.pistore.engine.volume.file;

import io.pistore.engine.volume.BlockLocks;
import io.pistore.engine.volume.JournalFigures;
import io.pistore.engine.volume.Volume;
import io.pistore.integrity.UnwrittenBlock;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.Executor;
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
    /** A failure and a heal of a volume: the server's log. */
    static final System.Logger LOG = System.getLogger("io.pistore.engine.volume");
    private static final long MAP_SEGMENT = 1L << 30;
    /** How often a volume opened with an idle ticker looks whether it went idle. */
    private static final long IDLE_TICK_MS = 500;
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
    /**
     * A zeroing of at least this many blocks is written home at once by a full checkpoint (it holds
     * every block lock) rather than indexed block by block: an index entry per block of a whole
     * volume's discard would cost more memory and time than the checkpoint. Smaller ones (a sparse
     * image's holes, a file system's discards) are indexed like writes, so none waits for the disk.
     */
    static final int CHECKPOINTED_ZEROING = 1 << 16;
    /**
     * A zeroing's record is a header, so many of them fit in a segment whatever they zero: one that
     * would take the index past this many blocks (4 times what a ring of data holds) is checkpointed
     * too, which bounds the index (about 32 bytes a block) as the ring bounds it for writes.
     */
    static final long MOST_ZEROED_INDEX = 4L << 18; // 4 * MOST_RING_BLOCKS

    private final String name;
    private final BlockFormat format;
    private final long blockCount;
    private final StorageFile data;
    private final StorageFile meta;
    private final Journal journal;
    private final BlockLocks locks = new BlockLocks();
    /**
     * Blocks whose newest version is only in the journal, with where. An entry is put under its
     * block's write lock; a checkpoint removes the entries it applied once the blocks are durable at
     * home, each only if no newer one replaced it meanwhile.
     */
    private final JournalIndex index = new JournalIndex();
    /** Reads each block's newest version: from the journal where {@link #index} has it, else home. */
    private final VolumeReader reader;
    /** Writes durable journal records home and forces the home files. */
    private final HomeWriter home;
    /** Moves full journal segments home and the journal's head past them. */
    private final Checkpointer checkpointer;
    /** Set by the first close; guarded by all block locks. */
    private boolean closed;
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
    /** Changes with every append (a lost increment still changes it): the idle tick compares. */
    private volatile long appends;
    private long appendsAtLastTick;
    private volatile ScheduledFuture<?> idleTick;
    /** {@link #CHECKPOINTED_ZEROING}; tests set fewer. Read under the zeroing's block locks. */
    private volatile int checkpointedZeroing = CHECKPOINTED_ZEROING;
    /** Records replayed when this volume was opened. */
    private long replayedOnOpen;

    /** File systems whose files live in memory only: nothing in them survives the machine. */
    private static final java.util.Set<String> IN_MEMORY = java.util.Set.of("tmpfs", "ramfs");

    /** Whether {@code p} (which exists) is on a file system in memory (tmpfs, ramfs); false if that cannot be told. */
    public static boolean inMemory(Path p) {
        try {
            return IN_MEMORY.contains(java.nio.file.Files.getFileStore(p).type());
        } catch (IOException | SecurityException e) {
            return false;
        }
    }

    private FileVolume(String name, BlockFormat format, long blockCount, StorageFile data, StorageFile meta,
                       Journal journal, boolean writeThrough, long mapSegment, Executor checkpoints,
                       MetadataCoding coding) throws IOException {
        this.name = name;
        this.writeThrough = writeThrough;
        this.format = format;
        this.blockCount = blockCount;
        this.data = data;
        this.meta = meta;
        this.journal = journal;
        this.reader = new VolumeReader(name, format, blockCount, data, meta, journal, index, mapSegment, coding);
        this.home = new HomeWriter(name, format, blockCount, data, meta, journal, index, mapSegment,
                reader.metaSegment(), coding);
        this.checkpointer = new Checkpointer(name, journal, index, home, writeThrough, checkpoints);
    }

    /**
     * Creates the files of a new volume (manifest version 3): sparse zero data, metadata of unwritten
     * blocks (a hole on a disk: {@link MetadataCoding}), an empty journal; forced to disk.
     * {@code idle}, owned by the caller and shut down only after the volume is closed, runs the volume's idle tick
     * (it only starts checkpoints, never runs them); null: no idle tick, an idle journal drains at the next write or
     * at close.
     */
    public static FileVolume create(Path dataFile, Path metaFile, Path journalFile, String name, BlockFormat format,
                                    long blockCount, ScheduledExecutorService idle) throws IOException {
        StorageFile d = ChannelStorageFile.create(dataFile);
        StorageFile m = null;
        StorageFile j = null;
        try {
            if (format.metadataSize() > 0) {
                m = ChannelStorageFile.create(metaFile);
            }
            j = ChannelStorageFile.create(journalFile);
            return create(d, m, j, name, format, blockCount, MAP_SEGMENT, JOURNAL_SEGMENT, ON_A_THREAD)
                    .idleTicksOn(idle);
        } catch (IOException | RuntimeException e) {
            closeAll(d, m, j);
            throw e;
        }
    }

    /** Creates a volume in empty storage files ({@code meta} null without metadata). */
    static FileVolume create(StorageFile d, StorageFile m, StorageFile j, String name, BlockFormat format,
                             long blockCount, long mapSegment, long journalSegment, Executor checkpoints)
            throws IOException {
        return create(d, m, j, name, format, blockCount, mapSegment, journalSegment, checkpoints, true);
    }

    /** As above; {@code xorMetadata} false: metadata stored as it is, as in a version-2 volume (tests). */
    static FileVolume create(StorageFile d, StorageFile m, StorageFile j, String name, BlockFormat format,
                             long blockCount, long mapSegment, long journalSegment, Executor checkpoints,
                             boolean xorMetadata) throws IOException {
        d.truncate(0);
        if (blockCount > 0) {
            // A sparse file: writing the last byte sets the length without writing the rest.
            d.write(ByteBuffer.allocate(1), blockCount * format.dataSize() - 1);
        }
        if (m != null) {
            m.truncate(0);
            // Its full length before it is mapped; a hole, or filled just below.
            m.write(ByteBuffer.allocate(1), blockCount * format.metadataSize() - 1);
            fillUnwrittenMetadata(m, format, xorMetadata, 0, blockCount);
            m.sync();
        }
        d.sync();
        Journal.initialize(j, format);
        return open(d, m, j, name, format, blockCount, mapSegment, journalSegment, checkpoints, note -> { },
                xorMetadata);
    }

    /** Writes the empty journal of an existing volume that had none (a volume of manifest version 1). */
    public static void createJournal(Path journalFile, BlockFormat format) throws IOException {
        java.nio.file.Files.deleteIfExists(journalFile);
        try (StorageFile j = ChannelStorageFile.create(journalFile)) {
            Journal.initialize(j, format);
        }
    }

    /**
     * Opens the files of an existing volume, checking their sizes against the manifest, and replays
     * its journal if it was not closed; {@code notes} gets one line when it did. {@code idle}: as for {@link #create}.
     */
    public static FileVolume open(Path dataFile, Path metaFile, Path journalFile, String name, BlockFormat format,
                                  long blockCount, ScheduledExecutorService idle, Consumer<String> notes)
            throws IOException {
        return open(dataFile, metaFile, journalFile, name, format, blockCount, idle, notes, true);
    }

    /** As above; {@code xorMetadata} false for a volume of manifest version 2 or 1 ({@link MetadataCoding}). */
    public static FileVolume open(Path dataFile, Path metaFile, Path journalFile, String name, BlockFormat format,
                                  long blockCount, ScheduledExecutorService idle, Consumer<String> notes,
                                  boolean xorMetadata) throws IOException {
        return open(dataFile, metaFile, journalFile, name, format, blockCount, MAP_SEGMENT, notes, xorMetadata)
                .idleTicksOn(idle);
    }

    /** As above, mapping the metadata in pieces of about {@code mapSegment} bytes (tests cut them small). */
    static FileVolume open(Path dataFile, Path metaFile, Path journalFile, String name, BlockFormat format,
                           long blockCount, long mapSegment, Consumer<String> notes) throws IOException {
        return open(dataFile, metaFile, journalFile, name, format, blockCount, mapSegment, notes, true);
    }

    private static FileVolume open(Path dataFile, Path metaFile, Path journalFile, String name, BlockFormat format,
                                   long blockCount, long mapSegment, Consumer<String> notes, boolean xorMetadata)
            throws IOException {
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
            return open(d, m, j, name, format, blockCount, mapSegment, JOURNAL_SEGMENT, ON_A_THREAD, notes, xorMetadata);
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
        return open(d, m, j, name, format, blockCount, mapSegment, journalSegment, checkpoints, notes, true);
    }

    /** As above; {@code xorMetadata}: how the metadata file holds metadata ({@link MetadataCoding}). */
    static FileVolume open(StorageFile d, StorageFile m, StorageFile j, String name, BlockFormat format,
                           long blockCount, long mapSegment, long journalSegment, Executor checkpoints,
                           Consumer<String> notes, boolean xorMetadata) throws IOException {
        Journal journal = new Journal(j, name + ".journal", format, journalSegment,
                ringSegments(blockCount, format, journalSegment));
        Journal.Header h = journal.readHeader(); // its message names the journal file, so the volume
        boolean writeThrough = d.inMemory() && j.inMemory() && (m == null || m.inMemory());
        FileVolume v = new FileVolume(name, format, blockCount, d, m, journal, writeThrough, mapSegment, checkpoints,
                MetadataCoding.of(format, xorMetadata));
        long n = 0;
        if (!h.clean()) {
            long t0 = System.nanoTime();
            // Forced once at the end: no request runs during recovery, so no flush waits behind it.
            n = v.home.applyInLbaOrder(h, Long.MAX_VALUE, true, -1, () -> Long.MAX_VALUE);
            v.home.sync();
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
        v.checkpointer.configure(d.inMemory() ? 1 : journal.ringSegments() / 2,
                d.inMemory() ? Long.MAX_VALUE : homeSyncEvery(journalSegment));
        return v;
    }

    /** Starts the idle tick on {@code idle} (none when null); cancelled when the volume closes. */
    private FileVolume idleTicksOn(ScheduledExecutorService idle) {
        if (idle != null) {
            idleTick = idle.scheduleWithFixedDelay(this::idleTick, IDLE_TICK_MS, IDLE_TICK_MS, TimeUnit.MILLISECONDS);
        }
        return this;
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
     * The length the journal of such a volume reaches: on a disk its whole ring (the file grows as the
     * writer first reaches each segment, then keeps that length), on tmpfs and ramfs ({@code inMemory})
     * the two segments a writer cycles through, written at open.
     */
    public static long journalBytes(BlockFormat format, long blockCount, boolean inMemory) {
        int segments = inMemory ? 2 : ringSegments(blockCount, format, JOURNAL_SEGMENT);
        return Journal.RECORDS_START + segments * JOURNAL_SEGMENT;
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

    /**
     * Gives {@code blocks} blocks from {@code lba} of metadata file {@code m} the unwritten metadata
     * as the file holds it: where that is zeros ({@link MetadataCoding}), nothing is written on a disk
     * (the file's hole reads as zeros) and zeros are written in memory (a mapping that met a hole of a
     * tmpfs file would allocate its page in a fault, which on a full tmpfs is a SIGBUS); else the pattern.
     */
    static void fillUnwrittenMetadata(StorageFile m, BlockFormat format, boolean xorMetadata, long lba, long blocks)
            throws IOException {
        byte[] unwritten = UnwrittenBlock.metadata(format);
        if (MetadataCoding.of(format, xorMetadata) != null || java.util.Arrays.equals(unwritten,
                new byte[unwritten.length])) {
            if (!m.inMemory()) {
                return;
            }
            unwritten = new byte[unwritten.length];
        }
        HomeWriter.fillUnwritten(m::write, format, unwritten, lba, blocks);
    }

    /** Data segments this volume reads out of mappings (tests): all of them on tmpfs, none on a disk. */
    int dataSegmentsMappedForReads() {
        return reader.dataSegmentsMapped();
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
            reader.read(lba, blocks, dataOut, metaOut);
        } finally {
            locks.unlock(token, false);
        }
    }

    /** The metadata alone: from the journal where a block's newest version is there, else from home. */
    @Override
    public void readMetadata(long lba, int blocks, ScatterList metaOut) throws IOException {
        if (format.metadataSize() == 0) {
            return;
        }
        long token = locks.lock(lba, blocks, false);
        try {
            reader.read(lba, blocks, null, metaOut);
        } finally {
            locks.unlock(token, false);
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
     * very many blocks ({@link #checkpointedZeroing}, or past {@link #MOST_ZEROED_INDEX} in the index)
     * is applied at once by a full checkpoint instead of being indexed block by block (it holds every
     * block's lock anyway).
     */
    private void append(byte type, long lba, int blocks, ScatterList dataIn, ScatterList metaIn) throws IOException {
        healIfDue();
        for (;;) {
            long token = locks.lock(lba, blocks, true);
            try {
                checkpointer.throwIfFailed();
                Journal.Appended a = journal.append(type, lba, blocks, dataIn, metaIn);
                appends++;
                if (a == null && BlockLocks.coversAll(token)) {
                    // Holding every lock already: moves on here as nextSegment would (a full checkpoint
                    // here made every large write that met a full segment wait for the disk).
                    moveOnLocked();
                    a = journal.append(type, lba, blocks, dataIn, metaIn);
                }
                if (a != null) {
                    if (writeThrough) {
                        writeThrough(type, a, lba, blocks, dataIn, metaIn);
                    } else if (type == Journal.ZEROES && BlockLocks.coversAll(token)
                            && (blocks >= checkpointedZeroing || index.size() + blocks > MOST_ZEROED_INDEX)) {
                        checkpointer.fullCheckpointLocked(false);
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
            home.writeRecord(type, a, lba, blocks, dataIn, metaIn);
        } catch (IOException | RuntimeException e) {
            indexRecord(type, a, lba, blocks);
            throw checkpointer.writingHomeFailed(e);
        }
    }

    private void indexRecord(byte type, Journal.Appended a, long lba, int blocks) {
        int ds = format.dataSize();
        long dataAt = a.pos() + Journal.RECORD_HEADER;
        if (type == Journal.ZEROES) {
            index.putRun(lba, blocks, a.seq(), -1, 0, -1, 0);
        } else {
            index.putRun(lba, blocks, a.seq(), dataAt, ds, dataAt + (long) blocks * ds, format.metadataSize());
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
                healIfDue(); // a failed volume heals by itself once the file system takes writes again
                checkpointer.writeGatheredHome(); // what the tick before gathered: an idle journal drains
                checkpointActiveSegment();
            } catch (IOException | RuntimeException e) {
                // The checkpointer keeps a checkpoint's failure; the next write reports it.
            }
        }
        appendsAtLastTick = a;
    }

    /**
     * After a failure (a home write or a checkpoint the file system refused, such as no space
     * left), at most once per {@link Checkpointer#healPauseNanos}: with every block locked, writes the
     * whole journal home and empties it, so writes go on without a reopen once there is room
     * again. A failure the heal does not clear fails the write that called it.
     */
    private void healIfDue() {
        if (!checkpointer.failed() || !checkpointer.healDue(System.nanoTime())) {
            return; // one volatile read on every write while the volume is well
        }
        long token = locks.lockAll(true);
        try {
            if (closed || !checkpointer.healDue(System.nanoTime())) {
                return;
            }
            long n = checkpointer.healLocked();
            LOG.log(System.Logger.Level.INFO, name + ": writes resume: " + n + " journal records written home after the failure");
        } catch (IOException e) {
            // kept as the volume's failure: the caller's write fails with it
        } finally {
            locks.unlock(token, true);
        }
    }

    /** Zeroings of at least this many blocks are checkpointed whole (tests: fewer). */
    void checkpointZeroingsFrom(int blocks) {
        checkpointedZeroing = blocks;
    }

    /**
     * Whether a volume that failed with {@code cause} heals by itself once its file system takes
     * writes again: a refused write (no space, a quota) took nothing; not after a failed forcing
     * ({@link java.io.SyncFailedException}, as {@link ChannelStorageFile} reports it), after which
     * the kernel may have dropped the pages it could not write.
     */
    public static boolean healable(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof java.io.SyncFailedException) {
                return false;
            }
        }
        return true;
    }

    /** Sets the least time between tries to heal (tests: 0). */
    void healPause(long nanos) {
        checkpointer.healPauseNanos = nanos;
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
            moveOnLocked();
        } finally {
            locks.unlock(token, true);
        }
    }

    /** With every block lock held: the next segment becomes active, the one left behind goes home. */
    private void moveOnLocked() throws IOException {
        if (writeThrough) {
            checkpointer.moveOnWrittenThrough();
        } else {
            checkpointer.startSegmentCheckpoint();
        }
    }

    /** What the journal did since this volume was opened, and how full it is. */
    public JournalFigures journalFigures() {
        return new JournalFigures(journal.recordsAppended(), journal.bytesAppended(), checkpointer.done(),
                checkpointer.nanos(), replayedOnOpen, journal.fillBytes(), journal.capacityBytes(),
                checkpointer.failed(), checkpointer.heals());
    }

    /** The journal's segments mapped read-only for their readers (on a disk, once the writer left them). */
    int journalSegmentsMappedForReads() {
        return journal.segmentsMappedForReads();
    }

    /** Forces the journal: every request appended so far is durable (concurrent flushes share one fsync). */
    @Override
    public void flush() throws IOException {
        checkpointer.flushed();
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
            checkpointer.fullCheckpointLocked(false);
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
            checkpointer.fullCheckpointLocked(true);
        } finally {
            if (closed) {
                reader.close(); // under every block's lock: no read is in flight
            }
            locks.unlock(token, true);
            try {
                closeAll(data, meta);
            } finally {
                journal.close();
            }
        }
    }
}
