package io.pistore.replication.raft;

import io.pistore.engine.volume.Volume;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Applies committed commands to one replica's local engine volume, checking first: a write whose
 * data fails its PI check here is refused and stores nothing (the replica reports it instead of
 * keeping bad data); a repair rewrites only blocks whose local copy fails its check, so a block
 * written again since the repair was asked for is never rolled back. A write checked against another
 * version of the volume's shared state than the one applied here ({@link ReplicaSharedState}) is
 * refused before anything else. Called from one thread, in log order.
 */
public final class ReplicaApplier {
    private final String volumeName;
    private final String replica;
    private final Volume volume;
    private final Consumer<String> log;
    private final ReplicaStats stats;
    /** Applier thread only (and a restore, while nothing is applied). */
    private final WriteFences fences = new WriteFences();
    /** Grows the replica's files ({@link ReplicaCommand.Op#RESIZE}); null: a replica that cannot. */
    private final Grower grower;
    /** The volume's shared state as applied here; applier thread only (and a restore). */
    private final ReplicaSharedState shared;
    /** The index of the log entry being applied: a shared-state change's version. Applier thread only. */
    private long index;

    /** Grows a replica's volume to a larger block count, durably (its files and their manifest). */
    public interface Grower {
        void grow(long blocks) throws IOException;
    }

    public ReplicaApplier(String volumeName, String replica, Volume volume, Consumer<String> log, ReplicaStats stats) {
        this(volumeName, replica, volume, log, stats, null);
    }

    public ReplicaApplier(String volumeName, String replica, Volume volume, Consumer<String> log, ReplicaStats stats,
                          Grower grower) {
        this(volumeName, replica, volume, log, stats, grower, new SharedStateBoard(log));
    }

    /** {@code board}: where the peer shows the shared state this replica applies (one per volume on a peer). */
    public ReplicaApplier(String volumeName, String replica, Volume volume, Consumer<String> log, ReplicaStats stats,
                          Grower grower, SharedStateBoard board) {
        this.shared = new ReplicaSharedState(board);
        this.grower = grower;
        this.volumeName = volumeName;
        this.replica = replica;
        this.volume = volume;
        this.log = log;
        this.stats = stats;
    }

    public Volume volume() {
        return volume;
    }

    /** Where this peer shows the shared state its replica applied. */
    public SharedStateBoard sharedStateBoard() {
        return shared.board();
    }

    ReplicaSharedState sharedState() {
        return shared;
    }

    /** The next commands applied, or passed over, are those of log entry {@code index}. */
    void entering(long index) {
        this.index = index;
    }

    /**
     * Whether {@code c} is a write checked against a version of the shared state other than the one
     * applied here: refused before its fence counts, on every replica alike.
     */
    private boolean otherView(ReplicaCommand c) {
        // the view is the version checked against plus one, so that 0 can mean none
        return c.fenceView != 0 && c.fenceView - 1 != shared.version() && (c.op == ReplicaCommand.Op.WRITE
                || c.op == ReplicaCommand.Op.WRITE_ZEROES || c.op == ReplicaCommand.Op.DEALLOCATE
                || c.op == ReplicaCommand.Op.COMPARE_AND_WRITE);
    }

    /** The reason a command does not fit this volume, or null. */
    String misfit(ReplicaCommand c) {
        if (c.op == ReplicaCommand.Op.FLUSH) {
            return null;
        }
        if (c.op == ReplicaCommand.Op.RESIZE) {
            return c.lba < 1 ? c + ": a volume needs a block at least" : null; // a smaller count changes nothing
        }
        if (c.op == ReplicaCommand.Op.SHARED_STATE) {
            return ReplicaSharedState.misfit(c);
        }
        BlockFormat f = volume.format();
        if (c.blocks < 1 || c.lba < 0 || c.lba > volume.blockCount() - c.blocks) {
            return c + " does not fit a volume of " + volume.blockCount() + " blocks";
        }
        boolean carries = c.op == ReplicaCommand.Op.WRITE || c.op == ReplicaCommand.Op.REPAIR
                || c.op == ReplicaCommand.Op.COMPARE_AND_WRITE;
        if (carries) {
            long dl = c.data == null ? 0 : c.data.remaining();
            long ml = c.metadata == null ? 0 : c.metadata.remaining();
            int copies = c.op == ReplicaCommand.Op.COMPARE_AND_WRITE ? 2 : 1; // the blocks to compare, then to write
            long comparedMeta = copies == 2 && ml > 0 && ml != (long) c.blocks * f.metadataSize()
                    ? (long) (c.blocks + 1) * f.metadataSize() : 0; // metadata to compare and its mask
            if (dl != (long) copies * c.blocks * f.dataSize() || ml != (long) c.blocks * f.metadataSize() + comparedMeta) {
                return c + " carries " + dl + "+" + ml + " bytes, not " + c.blocks + " blocks of " + f;
            }
        }
        return null;
    }

    /** Checks a write or repair's data as a replica can: the first failing block (absolute LBA), or null. */
    PiError firstError(ReplicaCommand c) {
        return StoredBlockCheck.firstWriteError(volume.format(), c.lba, c.dataList(), c.metadataList(), c.blocks);
    }

    ApplyOutcome apply(ReplicaCommand c) {
        return apply(c, false);
    }

    /** Set by an apply whose storage failed, taken by {@link #takeStorageFailure} (the applier thread's alone). */
    private IOException storageFailure;
    /**
     * Whether the replica's storage failed an apply: later storage failures are not logged one by one
     * (its group stops at the first; the entries applied meanwhile fail alike). The applier thread's alone.
     */
    private boolean storageFailing;

    WriteFences fences() {
        return fences;
    }

    /**
     * Passes {@code c}'s fence through the table without applying it: an entry the replica's files
     * already hold, met again after a restart, so that the table is as if it had been applied. A
     * shared-state change, which no file holds, is applied again.
     */
    void admitOnly(ReplicaCommand c) {
        if (misfit(c) != null || otherView(c)) {
            return;
        }
        if (c.op == ReplicaCommand.Op.SHARED_STATE) {
            shared.apply(c, index); // kept in memory only: applied again
        } else if (c.fenceKey != 0 && fences.admit(c.fenceKey, c.fenceEpoch)) {
            fences.admitSeq(c.fenceKey, c.fenceSeq);
        }
    }

    /**
     * Applies {@code c}; {@code checked}: this peer checked it as it entered the log (the leader that
     * took it in, {@link VolumeStateMachine#startTransaction}), so a write is not checked again.
     */
    ApplyOutcome apply(ReplicaCommand c, boolean checked) {
        stats.applied.incrementAndGet();
        String misfit = misfit(c);
        if (misfit != null) {
            return failed(c, misfit);
        }
        if (otherView(c)) {
            stats.viewChangedWrites.incrementAndGet();
            return ApplyOutcome.viewChanged(c, c.fenceView - 1, shared.version());
        }
        if (c.fenceKey != 0 && !fences.admit(c.fenceKey, c.fenceEpoch)) {
            stats.fencedWrites.incrementAndGet();
            String why = c + " is a stale copy: its host sent it again on a newer connection (epoch "
                    + fences.highest(c.fenceKey) + "), whose copy counts; nothing written";
            log.accept("volume " + volumeName + " replica " + replica + ": " + why);
            return ApplyOutcome.fenced(why);
        }
        if (c.fenceKey != 0 && !fences.admitSeq(c.fenceKey, c.fenceSeq)) {
            // its first copy was applied: applied again it could undo another host's write since
            stats.repeatedWrites.incrementAndGet();
            return c.op != ReplicaCommand.Op.COMPARE_AND_WRITE ? ApplyOutcome.done()
                    : compareOutcomes.getOrDefault(List.of(c.fenceKey, c.fenceSeq), ApplyOutcome.failed("replica " + replica
                            + ": " + c + " is a copy sent again of one applied long ago or before this replica's last start;"
                            + " its outcome is no longer known here"));
        }
        if (c.fenceSeq != 0 && c.op == ReplicaCommand.Op.COMPARE_AND_WRITE) {
            ApplyOutcome o = applyChecked(c, checked);
            compareOutcomes.put(List.of(c.fenceKey, c.fenceSeq), o); // a copy sent again answers what this one did
            return o;
        }
        return applyChecked(c, checked);
    }

    /**
     * The outcomes of the latest numbered compare-and-writes, by stream and number: a copy sent again
     * (its first one committed while its sender heard nothing) answers the first one's outcome instead
     * of comparing the blocks that copy changed. The applier thread's alone.
     */
    private final Map<List<Long>, ApplyOutcome> compareOutcomes = new java.util.LinkedHashMap<>(16, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<List<Long>, ApplyOutcome> eldest) {
            return size() > 1024;
        }
    };

    private ApplyOutcome applyChecked(ReplicaCommand c, boolean checked) {
        try {
            switch (c.op) {
                case WRITE:
                    return checked ? stored(c) : write(c);
                case REPAIR:
                    return repair(c);
                case WRITE_ZEROES:
                case DEALLOCATE:
                    volume.writeZeroes(c.lba, c.blocks, c.fua);
                    return ApplyOutcome.done();
                case FLUSH:
                    volume.flush();
                    return ApplyOutcome.done();
                case COMPARE_AND_WRITE:
                    return compareAndWrite(c);
                case RESIZE:
                    return grow(c);
                case SHARED_STATE:
                    return shared.apply(c, index);
                default:
                    return failed(c, "not a log command");
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof IOException io) {
                if (storageFailure == null) {
                    storageFailure = io; // the replica's files could not take a committed command: it now differs
                }
                if (storageFailing) { // the same failure again, until the group stops: counted, one line was enough
                    stats.failedApplies.incrementAndGet();
                    return ApplyOutcome.failed("replica " + replica + ": " + c + ": " + e.getMessage());
                }
                storageFailing = true;
            }
            return failed(c, String.valueOf(e.getMessage()));
        }
    }

    /** Records a failure of this replica to take a committed entry, as a storage failure is; the applier thread's. */
    void storageFailed(IOException e) {
        if (storageFailure == null) {
            storageFailure = e;
        }
    }

    /** The first I/O failure of the replica's storage since the last call, or null; called on the applier thread. */
    IOException takeStorageFailure() {
        IOException e = storageFailure;
        storageFailure = null;
        return e;
    }

    /** Grows the replica to the command's count; one it already has (met again in a replay) is done as is. */
    private ApplyOutcome grow(ReplicaCommand c) throws IOException {
        long before = volume.blockCount();
        if (c.lba <= before) {
            return ApplyOutcome.done();
        }
        if (grower == null) {
            return failed(c, "this replica cannot grow");
        }
        grower.grow(c.lba);
        log.accept("volume " + volumeName + " replica " + replica + ": grown from " + before + " to " + c.lba + " blocks");
        return ApplyOutcome.done();
    }

    private ApplyOutcome write(ReplicaCommand c) throws IOException {
        PiError e = firstError(c);
        if (e != null) {
            stats.refusedWrites.incrementAndGet();
            ApplyOutcome o = ApplyOutcome.refused(c.lba + e.blockIndex(), e);
            log.accept("volume " + volumeName + " replica " + replica + ": " + c + " " + o.describe());
            return o;
        }
        return stored(c);
    }

    /**
     * Compares the stored blocks with the command's first half and writes its second half only when
     * every byte is equal. Every replica holds the same blocks at this place in the log, so each
     * decides alike; one whose stored copy fails its check cannot compare it and writes nothing (that
     * copy stays bad, for a read or a scrub to repair from the others).
     */
    private ApplyOutcome compareAndWrite(ReplicaCommand c) throws IOException {
        BlockFormat f = volume.format();
        int dl = c.blocks * f.dataSize();
        int at = c.data.position();
        ByteBuffer verify = c.data.duplicate().limit(at + dl).slice();
        ScatterList data = ScatterList.of(c.data.duplicate().position(at + dl).slice());
        int ml = c.blocks * f.metadataSize();
        ByteBuffer compared = c.metadata == null || c.metadata.remaining() == ml ? null
                : c.metadata.duplicate().position(c.metadata.position() + ml).slice(); // entries to compare, then the mask
        ScatterList written = c.metadata == null ? null : ScatterList.of(c.metadata.duplicate().limit(c.metadata.position() + ml).slice());
        PiError bad = StoredBlockCheck.firstWriteError(f, c.lba, data, written, c.blocks);
        if (bad != null) {
            stats.refusedWrites.incrementAndGet();
            return ApplyOutcome.refused(c.lba + bad.blockIndex(), bad);
        }
        ByteBuffer stored = ByteBuffer.allocate(dl);
        byte[] storedMetaBytes = new byte[c.blocks * f.metadataSize()];
        ScatterList storedMeta = f.metadataSize() == 0 ? null : ScatterList.wrap(storedMetaBytes);
        volume.read(c.lba, c.blocks, ScatterList.of(stored), storedMeta);
        if (storedMeta != null && !StoredBlockCheck.allPass(f, c.lba, ScatterList.of(stored.duplicate()), storedMeta, c.blocks)) {
            return failed(c, "a stored block fails its check on this replica: nothing compared or written");
        }
        long diff = compared == null ? stored.mismatch(verify)
                : io.pistore.spi.OrderedCompareAndWrite.firstDifference(verify, stored, compared.slice(0, ml),
                        ByteBuffer.wrap(storedMetaBytes), mask(compared, ml), f.dataSize());
        if (diff >= 0) {
            return ApplyOutcome.miscompare(diff);
        }
        volume.write(c.lba, c.blocks, data, written, c.fua);
        return ApplyOutcome.done();
    }

    /** The mask after the {@code ml} bytes of metadata to compare (one entry's length). */
    private static byte[] mask(ByteBuffer compared, int ml) {
        byte[] m = new byte[compared.remaining() - ml];
        compared.get(ml, m);
        return m;
    }

    private ApplyOutcome stored(ReplicaCommand c) throws IOException {
        volume.write(c.lba, c.blocks, c.dataList(), c.metadataList(), c.fua);
        return ApplyOutcome.done();
    }

    private ApplyOutcome repair(ReplicaCommand c) throws IOException {
        PiError good = firstError(c);
        if (good != null) {
            // A repair must carry a copy that passes; one that does not is never written anywhere.
            stats.refusedWrites.incrementAndGet();
            return ApplyOutcome.refused(c.lba + good.blockIndex(), good);
        }
        BlockFormat f = volume.format();
        ByteBuffer data = ByteBuffer.allocate(c.blocks * f.dataSize());
        ByteBuffer meta = ByteBuffer.allocate(c.blocks * f.metadataSize());
        volume.read(c.lba, c.blocks, ScatterList.of(data), ScatterList.of(meta));
        Map<Integer, PiError> bad = StoredBlockCheck.badStoredBlocks(f, c.lba, ScatterList.of(data), ScatterList.of(meta),
                c.blocks);
        ScatterList src = c.dataList();
        ScatterList srcMeta = c.metadataList();
        for (Map.Entry<Integer, PiError> b : bad.entrySet()) {
            int i = b.getKey();
            volume.write(c.lba + i, 1, src.slice((long) i * f.dataSize(), f.dataSize()),
                    srcMeta.slice((long) i * f.metadataSize(), f.metadataSize()), true);
            stats.rewrittenBlocks.incrementAndGet();
            log.accept("volume " + volumeName + " replica " + replica + ": repaired lba=" + (c.lba + i) + " error="
                    + b.getValue().kind().shortName() + " (copy rewritten from a good replica)");
        }
        return ApplyOutcome.done();
    }

    private ApplyOutcome failed(ReplicaCommand c, String why) {
        stats.failedApplies.incrementAndGet();
        log.accept("volume " + volumeName + " replica " + replica + ": " + c + " failed: " + why);
        return ApplyOutcome.failed("replica " + replica + ": " + c + ": " + why);
    }

    /** Reads blocks as stored here, data and metadata, for a read query. */
    byte[][] read(long lba, int blocks) throws IOException {
        BlockFormat f = volume.format();
        byte[] data = new byte[blocks * f.dataSize()];
        byte[] meta = new byte[blocks * f.metadataSize()];
        volume.read(lba, blocks, ScatterList.wrap(data), f.metadataSize() == 0 ? null : ScatterList.wrap(meta));
        return new byte[][] {data, meta};
    }
}
