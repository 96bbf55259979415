package io.pistore.engine.volume.file;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.FutureTask;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The checkpoints of a {@link FileVolume}'s journal: full segments forced, gathered and written home
 * in the background ({@link #startSegmentCheckpoint}), everything at once ({@link #fullCheckpointLocked}),
 * or, write-through, only the home files forced ({@link #moveOnWrittenThrough}). Invariants: segments
 * are checkpointed in order (each checkpoint waits for the one before it); home files are written only
 * with records already durable in the journal; the head moves past records only after they were
 * written home and the home files forced, and only then are their index entries dropped. After a
 * failure every later write fails with it, and the records stay for recovery, until a heal
 * ({@link #healLocked}) writes them all home. Methods that say so run with every block lock of the
 * volume held.
 */
final class Checkpointer {
    private final String name;
    private final Journal journal;
    private final JournalIndex index;
    private final HomeWriter home;
    private final boolean writeThrough;
    /**
     * Runs the checkpoint of a full journal segment: on a thread of its own ({@link FileVolume#ON_A_THREAD});
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
    /** Checkpoints that applied records, and their time: figures for the metrics (rare, so atomics). */
    private final AtomicLong checkpointsDone = new AtomicLong();
    private final AtomicLong checkpointNanos = new AtomicLong();
    private final AtomicLong heals = new AtomicLong();
    /** Why a background checkpoint failed; later writes fail with it. */
    private volatile IOException checkpointFailure;
    /** When the volume last failed or last tried to heal ({@link System#nanoTime}). */
    private volatile long failedAtNanos;
    /** Least time between tries to heal: each try may rewrite the whole journal home. Tests set 0. */
    long healPauseNanos = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

    Checkpointer(String name, Journal journal, JournalIndex index, HomeWriter home, boolean writeThrough,
                 Executor checkpoints) {
        this.name = name;
        this.journal = journal;
        this.index = index;
        this.home = home;
        this.writeThrough = writeThrough;
        this.checkpoints = checkpoints;
    }

    /** Sets, at open, how many full segments go home at once and how many bytes between forcings. */
    void configure(int segmentsPerHomeSync, long homeSyncEvery) {
        this.segmentsPerHomeSync = segmentsPerHomeSync;
        this.homeSyncEvery = homeSyncEvery;
    }

    /** Notes a flush or FUA: a batch going home from now on is forced in pieces. */
    void flushed() {
        flushes++;
    }

    /** Checkpoints that applied records since open. */
    long done() {
        return checkpointsDone.get();
    }

    /** Time those checkpoints took, in nanoseconds. */
    long nanos() {
        return checkpointNanos.get();
    }

    /** Fails when a checkpoint (or a write-through home write) failed: no record may be appended. */
    void throwIfFailed() throws IOException {
        IOException failed = checkpointFailure;
        if (failed != null) {
            throw new IOException("volume " + name + ": " + (writeThrough ? "" : "a checkpoint failed: ")
                    + failed.getMessage(), failed);
        }
    }

    /** Write-through: a writer's home write failed; every later write fails with {@code cause}. Returns what to throw. */
    IOException writingHomeFailed(Exception cause) {
        failWith(new IOException("writing home failed: " + cause.getMessage(), cause));
        return new IOException("volume " + name + ": " + checkpointFailure.getMessage(), cause);
    }

    /**
     * With every block lock held and the active segment full: waits until the ring has a free
     * segment, moves the journal on to it and starts the checkpoint of the full one. Holding every
     * block lock keeps readers of the segment about to be reused out: its checkpoint, awaited here
     * when the ring is full, finished before.
     */
    void startSegmentCheckpoint() throws IOException {
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
    }

    /**
     * Write-through, with every block lock held: every record of the active segment is home (its
     * writer wrote it before releasing its locks), so the home files are forced and the head moves to
     * the next segment, where the next record goes. Nothing is applied, no thread is started.
     */
    void moveOnWrittenThrough() throws IOException {
        IOException failed = checkpointFailure;
        if (failed != null) {
            throw new IOException("volume " + name + ": " + failed.getMessage(), failed);
        }
        long t0 = System.nanoTime();
        try {
            home.sync();
            Journal.Appended next = journal.swap();
            journal.advanceHead(next.seq() + 1, next.pos());
        } catch (IOException | RuntimeException e) {
            // The journal may have moved on with the head left behind: no record may follow.
            failWith(new IOException("moving the journal on failed: " + e.getMessage(), e));
            throw e;
        }
        checkpointed(t0);
    }

    /** Waits for every checkpoint started, oldest first; with every block lock held. */
    private void awaitCheckpoints() throws IOException {
        while (!pendingCheckpoints.isEmpty()) {
            await(pendingCheckpoints.pollFirst());
        }
        throwIfFailed();
    }

    /** Waits for one checkpoint, running it here if it has not started; a failure is kept for later writes. */
    private void await(FutureTask<Void> t) throws IOException {
        t.run(); // nothing if it ran or runs elsewhere
        try {
            awaitUninterruptibly(t);
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            throw failWith(c instanceof IOException io ? io : new IOException(c));
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
    void writeGatheredHome() throws IOException {
        synchronized (homeSync) {
            if (gathered == 0) {
                return;
            }
            long durable = journal.durableSeq(); // each gathered segment was forced when gathered
            // In pieces once a flush came since the last batch started, even if in the middle of this one.
            long since = flushesAtLastBatch;
            flushesAtLastBatch = flushes;
            long n = home.applyInLbaOrder(journal.head(), gatheredLastSeq, false, durable,
                    () -> flushes != since ? homeSyncEvery : Long.MAX_VALUE);
            expectApplied(n, gatheredLastSeq - journal.head().startSeq() + 1);
            home.sync();
            journal.advanceHead(gatheredLastSeq + 1, gatheredNextPos);
            index.removeUpTo(gatheredLastSeq);
            gathered = 0;
        }
    }

    private IOException failWith(IOException e) {
        failedAtNanos = System.nanoTime();
        if (checkpointFailure == null) {
            FileVolume.LOG.log(System.Logger.Level.WARNING, name + ": writes fail until its journal can go home: "
                    + e.getMessage());
        }
        checkpointFailure = e;
        return e;
    }

    /** Whether a failure is kept: writes fail with it. */
    boolean failed() {
        return checkpointFailure != null;
    }

    /** Heals that cleared a failure since open. */
    long heals() {
        return heals.get();
    }

    /**
     * Whether a write or the idle tick should try to heal the volume now: it failed, at least
     * {@link #healPauseNanos} ago or since the last try, and no forcing failed. After a failed
     * fsync the kernel may have dropped the pages it could not write, and a second fsync reports
     * success for them; such a volume waits for a reopen, which replays the journal from the disk.
     * A refused write (no space, a quota) took nothing, so writing the same records again is safe.
     */
    boolean healDue(long now) {
        IOException failed = checkpointFailure;
        return failed != null && now - failedAtNanos >= healPauseNanos && FileVolume.healable(failed);
    }

    /**
     * With every block lock held, after a failure: lets every checkpoint started end, then does
     * what a reopen's replay does: writes every record of the journal home (in LBA order, each
     * block's newest version), forces the home files and empties the journal. Returns how many
     * records went home, or -1 when the volume had not failed. If this fails too, its failure is the
     * volume's and the journal keeps every record, as before.
     */
    long healLocked() throws IOException {
        if (checkpointFailure == null) {
            return -1;
        }
        failedAtNanos = System.nanoTime();
        // Each checkpoint after the failed one failed too (it awaits the one before): all end soon.
        while (!pendingCheckpoints.isEmpty()) {
            FutureTask<Void> t = pendingCheckpoints.pollFirst();
            t.run();
            try {
                awaitUninterruptibly(t);
            } catch (ExecutionException e) {
                // the failure already kept, or one after it
            }
        }
        try {
            synchronized (homeSync) {
                long n = writeJournalHome();
                home.sync();
                index.clear();
                gathered = 0;
                journal.resetEmpty(false);
                checkpointFailure = null;
                heals.incrementAndGet();
                return n;
            }
        } catch (IOException | RuntimeException e) {
            throw failWith(new IOException("writing the journal home again failed: " + e.getMessage(), e));
        }
    }

    private static void awaitUninterruptibly(FutureTask<Void> t) throws ExecutionException {
        boolean interrupted = false;
        try {
            for (;;) {
                try {
                    t.get();
                    return;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void checkpointed(long t0) {
        checkpointNanos.addAndGet(System.nanoTime() - t0);
        checkpointsDone.incrementAndGet();
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
    void fullCheckpointLocked(boolean clean) throws IOException {
        awaitCheckpoints();
        if (writeThrough) {
            home.sync(); // every record is home already
            journal.resetEmpty(clean);
            return;
        }
        writeGatheredHome();
        if (!journal.isEmpty()) {
            long t0 = System.nanoTime();
            writeJournalHome();
            home.sync();
            index.clear();
            checkpointed(t0);
        }
        journal.resetEmpty(clean);
    }

    /**
     * With every block lock held: forces the journal and writes every record from its head home (each
     * block's newest version, in LBA order); returns how many. The caller forces the home files once
     * at the end: every block lock is held and the journal was just forced, so no request or flush
     * waits behind it.
     */
    private long writeJournalHome() throws IOException {
        if (journal.isEmpty()) {
            return 0;
        }
        long last = journal.appendedSeq();
        journal.syncUpTo(last);
        Journal.Header head = journal.head();
        long n = home.applyInLbaOrder(head, last, false, journal.durableSeq(), () -> Long.MAX_VALUE);
        expectApplied(n, last - head.startSeq() + 1);
        return n;
    }
}
