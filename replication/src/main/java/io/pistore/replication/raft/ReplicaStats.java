package io.pistore.replication.raft;

import java.util.concurrent.atomic.AtomicLong;

/** What one replica of one volume has done with its log: counters, read by tests and status output. */
public final class ReplicaStats {
    final AtomicLong applied = new AtomicLong();
    final AtomicLong refusedWrites = new AtomicLong();
    final AtomicLong rewrittenBlocks = new AtomicLong();
    final AtomicLong failedApplies = new AtomicLong();
    final AtomicLong fencedWrites = new AtomicLong();
    final AtomicLong repeatedWrites = new AtomicLong();
    final AtomicLong viewChangedWrites = new AtomicLong();

    /** Log entries applied (whatever their outcome). */
    public long applied() {
        return applied.get();
    }

    /** Writes this replica refused because their data failed its PI check here: nothing was stored. */
    public long refusedWrites() {
        return refusedWrites.get();
    }

    /** Blocks whose copy here failed its PI check and were rewritten from a good replica's copy. */
    public long rewrittenBlocks() {
        return rewrittenBlocks.get();
    }

    /** Entries whose apply failed on the local volume (an I/O error): this replica may now differ. */
    public long failedApplies() {
        return failedApplies.get();
    }

    /** Stale copies of writes refused: their host had sent them again on a newer connection ({@link WriteFences}). */
    public long fencedWrites() {
        return fencedWrites.get();
    }

    /**
     * Copies of writes answered done without applying them: their first copy had been applied, and
     * their host sent them again ({@link WriteFences}, by sequence number).
     */
    public long repeatedWrites() {
        return repeatedWrites.get();
    }

    /**
     * Writes refused because they were checked against a version of the volume's shared state that
     * had changed by the time they were applied ({@link io.pistore.spi.WriteFence#view}): nothing written.
     */
    public long viewChangedWrites() {
        return viewChangedWrites.get();
    }
}
