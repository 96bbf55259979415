package io.pistore.replication.raft;

import io.pistore.integrity.PiError;
import io.pistore.replication.ReplicationSettings;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.ProtoUtils;

/**
 * The Raft state machine of one replica of one replicated volume: committed log entries are applied,
 * in order, to the replica's local engine volume by a {@link ReplicaApplier}; reads are answered from
 * it. The leader checks a write's PI when it enters ({@link #startTransaction}): a write that fails is
 * refused before it reaches the log, so it is stored nowhere; every follower checks it again before
 * it applies it.
 *
 * <p>Snapshots ({@link VolumeSnapshots}): once the entries applied since the last one carry enough data
 * ({@link ReplicationSettings#withSnapshotEveryVolumes}), Ratis's applier thread moves every block
 * home between two entries and records the index; a thread of its own then copies the home files while
 * entries go on being applied, and the snapshot counts (the log up to it purged) from the next time
 * Ratis asks after the copy is done. A follower that needs entries the leader purged gets the
 * snapshot's files shipped by Ratis and is restored from them ({@link #reinitialize}); so does a
 * replica found, at start, to hold less than its newest snapshot. A restored copy may hold blocks of
 * entries after its index, torn between two of them, until the replica applied the entries the copy
 * overlapped again: until then its reads wait ({@link AppliedIndex#holdUntil}).
 */
public final class VolumeStateMachine extends BaseStateMachine {
    private final VolumeSnapshots storage = new VolumeSnapshots();
    private final ReplicaApplier applier;
    private final ReplicaFiles files;
    /** Bytes of entries applied since the last snapshot: a snapshot waits until they reach this. */
    private final long snapshotAfterBytes;
    private long appliedBytes; // on Ratis's applier thread only
    /**
     * Bytes of entries applied after a snapshot was taken before Ratis hears of it and purges the log
     * up to it: a quarter of the snapshot interval (a volume's size by default), so a follower that
     * fell that far behind (a pause, a short partition) catches up from the log, not a whole copy.
     */
    private final long purgeMarginBytes;
    private long appliedTotal; // bytes of entries applied since start; on the applier thread only
    /** The index of the newest snapshot taken here and the applied bytes then (-1: none since start). */
    private long takenIndex = -1;
    private long takenAtBytes;
    /** The snapshot index last answered to Ratis, which purges its log up to it; never goes back. */
    private long reportedIndex = -1;
    /**
     * Entries up to this index are in the replica's files already (it stopped cleanly after applying
     * them, or took a snapshot there): Ratis replays them from its last snapshot, they are not applied again.
     */
    private long skipUpTo = -1;
    /** This replica left its group: its files are deleted, no record is written at close. */
    private volatile boolean removed;
    private final Consumer<String> log;
    private final AppliedIndex appliedIndex = new AppliedIndex();
    private final GroupEvents events;
    private final PeerAddressMemory addresses = new PeerAddressMemory();
    /** Entries applied between looks at what Ratis purged from its log. */
    private static final long DROP_EVERY = 256;
    /** Or bytes of entries applied between those looks: entries of large writes each hold MiBs. */
    private static final long DROP_EVERY_BYTES = 16L << 20;
    private long bytesSinceDrop; // on Ratis's applier thread only
    /** The data of this replica's log entries, kept beside the log; open from {@link #initialize}. */
    private EntryData entryData;
    private final ReplicationSettings settings;
    /** Whether this peer, leading, puts a command's data beside the log; set by {@link #initialize}. */
    private boolean besideWhenLeading;
    /**
     * The index of the entry being applied, or of the last one applied: set before an entry's first
     * write, so a snapshot copy that saw a write reads at least its entry's index here afterwards.
     */
    private volatile long applyingIndex = -1;
    /** The first entry whose apply failed on the replica's storage, or -1: the files hold no record or snapshot past it. */
    private volatile long firstFailedApply = -1;
    /** The snapshot copy under way, if any. */
    private final SnapshotCopyThread copy = new SnapshotCopyThread();

    /** What the replica's peer hears of its group's membership. */
    public interface GroupEvents {
        /** This peer left the group (a membership change removed it); the group has closed. */
        void removed();

        /** A configuration entry was applied: the group's members are now {@code peers} (old and new while joint). */
        void configured(List<RaftPeer> peers);

        /**
         * Whether this peer is a member of the newest configuration applied (false once a change that
         * removes it is applied: the joint configuration names it among the old members only).
         */
        default void member(boolean inNewConfiguration) {
        }

        /**
         * Ratis closed this peer's group by itself, not through a removal: a leader answered its
         * election that a membership change had left it out, or its own configuration does not name
         * it. The group stays held, closed, until this peer removes it.
         */
        default void stoppedByRatis() {
        }

        /**
         * This peer has known no leader for several election timeouts and starts another election: a
         * peer removed while it was down or cut off elects in vain, and the leader's answer that a
         * change left it out can lose the race against the other members' refusals. Called under the
         * Raft server's lock: hand the work on.
         */
        default void noLeaderForLong() {
        }

        /** This peer's Raft log of the group failed to write ({@code cause}); Ratis takes nothing more into it. */
        default void logFailed(Throwable cause) {
        }

        /** The replica's storage failed to apply committed entry {@code index} ({@code cause}): the replica differs. */
        default void applyFailed(long index, Throwable cause) {
        }

        /** This peer learned that {@code leader} leads the group (null: none known). */
        default void leaderChanged(org.apache.ratis.protocol.RaftPeerId leader) {
        }
    }

    public VolumeStateMachine(ReplicaApplier applier, ReplicaFiles files, ReplicationSettings settings,
            Consumer<String> log, GroupEvents events) {
        this.applier = applier;
        this.log = log;
        this.files = files;
        this.snapshotAfterBytes = settings.snapshotAfterBytes(files.volumeBytes());
        this.purgeMarginBytes = snapshotAfterBytes / 4;
        this.settings = settings;
        this.events = events;
    }

    public ReplicaApplier applier() {
        return applier;
    }

    /** What this replica has applied, with a wait for it: the leader-local read path's. */
    public AppliedIndex appliedIndex() {
        return appliedIndex;
    }

    // Every change of the applied index (entries applied here, configuration and no-op entries Ratis
    // reports, a snapshot restored) goes through one of these two. Ours moves first: once Ratis's
    // shows an index (and answers a query waiting for it), a settling replica has settled.
    @Override
    protected boolean updateLastAppliedTermIndex(TermIndex ti) {
        if (appliedIndex != null && ti != null) { // null while the base class's constructor runs
            appliedIndex.advance(ti.getIndex());
        }
        return super.updateLastAppliedTermIndex(ti);
    }

    @Override
    protected void setLastAppliedTermIndex(TermIndex ti) {
        if (appliedIndex != null && ti != null) { // null while the base class's constructor runs
            appliedIndex.advance(ti.getIndex());
        }
        super.setLastAppliedTermIndex(ti);
    }

    /**
     * Moves on when a snapshot from the leader may be restored (a pause, a reinitialize): a read of
     * the replica outside the log that saw the same count before and after it saw no restore.
     */
    private final java.util.concurrent.atomic.AtomicLong restores = new java.util.concurrent.atomic.AtomicLong();

    /** How many times the replica was paused for, or restored from, a snapshot the leader sent. */
    public long restores() {
        return restores.get();
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        storage.copyWith(this::copyOnDemand);
        Path root = raftStorage.getStorageDir().getRoot().toPath();
        entryData = EntryData.open(root.resolve(EntryDataLog.DIR), settings.besideSegmentBytes());
        besideWhenLeading = settings.dataBesideIn(root);
        getLifeCycle().transition(LifeCycle.State.STARTING);
        load();
        getLifeCycle().transition(LifeCycle.State.RUNNING);
    }

    /** Ratis pauses the state machine while a snapshot from the leader is written beside it. */
    @Override
    public synchronized void pause() {
        copy.end(true); // the files it copies are about to be replaced
        restores.incrementAndGet();
        if (getLifeCycleState() == LifeCycle.State.RUNNING) {
            getLifeCycle().transition(LifeCycle.State.PAUSING);
            getLifeCycle().transition(LifeCycle.State.PAUSED);
        }
    }

    /** A snapshot from the leader is installed: the replica is restored from it, then follows the log after it. */
    @Override
    public synchronized void reinitialize() throws IOException {
        copy.end(true);
        restores.incrementAndGet();
        load();
        TermIndex at = getLastAppliedTermIndex();
        if (at != null) {
            entryData.dropBefore(at.getIndex() + 1); // the log starts after the snapshot now
        }
        if (getLifeCycleState() == LifeCycle.State.PAUSED) {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }
    }

    /**
     * Takes up the newest snapshot: when the replica's record says its files hold less (a snapshot
     * the leader shipped, or a restore a crash interrupted), the files are restored from it first and
     * the record moved on; then the applied index is the snapshot's, and the log resumes after it.
     */
    private void load() throws IOException {
        FileListSnapshotInfo s = storage.load();
        long held = files.heldIndex();
        appliedBytes = 0;
        takenIndex = -1;
        reportedIndex = s == null ? -1 : s.getIndex(); // where Ratis's own snapshot index starts
        skipUpTo = held;
        // the table as at the snapshot; the log after it passes through it again, applied or skipped
        applier.fences().restore(s == null ? null : VolumeSnapshots.fences(s));
        applier.sharedState().restore(s == null ? null : VolumeSnapshots.shared(s)); // likewise
        if (s == null) {
            return;
        }
        long settled = VolumeSnapshots.settledIndex(s);
        if (held < s.getIndex()) {
            files.restoreFrom(VolumeSnapshots.data(s), VolumeSnapshots.meta(s));
            files.recordHeld(s.getIndex());
            log.accept("volume " + files.name() + ": replica " + getId() + " restored from the snapshot at index "
                    + s.getIndex() + (held < 0 ? "" : " (it held index " + held + ")")
                    + (settled > s.getIndex() ? ", whole again at index " + settled : ""));
            skipUpTo = s.getIndex();
            held = s.getIndex();
        }
        if (held < settled) {
            appliedIndex.holdUntil(settled); // the files may still hold the copy's torn blocks
        }
        setLastAppliedTermIndex(s.getTermIndex());
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public FileListSnapshotInfo getLatestSnapshot() {
        return storage.getLatestSnapshot();
    }

    @Override
    public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
        TransactionContext t = super.startTransaction(request);
        List<ReplicaCommand> commands;
        try {
            commands = ReplicaCommand.decodeAll(request.getMessage().getContent());
        } catch (IllegalArgumentException e) {
            return t.setException(new IOException("not a replica command: " + e.getMessage()));
        }
        // A batch enters the log whole or not at all: its writer sends each command alone again when
        // one is refused, so each gets its own answer. Writes this very peer checked on their way in
        // (an entry that never left its memory) are not checked again.
        boolean prechecked = request.getMessage() instanceof PrecheckedEntry;
        for (ReplicaCommand c : commands) {
            String misfit = applier.misfit(c);
            if (misfit != null) {
                return t.setException(new IOException(misfit));
            }
            if (c.op == ReplicaCommand.Op.RESIZE && c.lba < applier.volume().blockCount()) {
                // a new entry, checked against the leader's replica (one applied again is done as is)
                return t.setException(new IOException(ReplicaCommand.shrinking(files.name(), applier.volume().blockCount(),
                        c.lba)));
            }
            if (c.op == ReplicaCommand.Op.REPAIR || (c.op == ReplicaCommand.Op.WRITE && !prechecked)) {
                PiError e = applier.firstError(c);
                if (e != null) {
                    return t.setException(new IOException("leader " + getId() + ": " + c + " "
                            + ApplyOutcome.refused(c.lba + e.blockIndex(), e).describe()));
                }
            }
        }
        ByteString content = request.getMessage().getContent();
        CheckedOnEntry checked = new CheckedOnEntry(commands, ReplicaCommand.isBatch(content));
        if (!besideWhenLeading || !EntryData.beside(content)) {
            return t.setStateMachineContext(checked);
        }
        return TransactionContext.newBuilder().setStateMachine(this).setClientRequest(request)
                .setLogData(EntryData.header(content)).setStateMachineData(content)
                .setStateMachineContext(checked).build();
    }

    /**
     * The commands of an entry this leader decoded and checked when it entered: Ratis hands the same
     * transaction to {@link #applyTransaction} on this peer (its context is kept by term and index, so
     * an entry a new leader put at that index never meets it), and the bytes cannot have changed in
     * memory since, so the leader applies them without decoding or checking them again. Followers,
     * and a leader applying entries of an earlier term, decode and check what they apply.
     */
    private record CheckedOnEntry(List<ReplicaCommand> commands, boolean batch) {
    }

    /** Entries whose data this replica wrote beside its log: moves with each entry a catching-up peer receives. */
    private final java.util.concurrent.atomic.AtomicLong entryDataWrites = new java.util.concurrent.atomic.AtomicLong();

    /** How many entries' data this replica wrote beside its log so far (a measure of progress, not durable). */
    public long entryDataWrites() {
        return entryDataWrites.get();
    }

    /** Ratis hands each new entry here before it writes the entry's header into its log. */
    @Override
    public CompletableFuture<?> write(LogEntryProto entry, TransactionContext context) {
        entryDataWrites.incrementAndGet();
        StateMachineLogEntryProto e = entry.getStateMachineLogEntry();
        return entryData.write(entry.getIndex(), e.getLogData(), e.getStateMachineEntry().getStateMachineData());
    }

    /** Ratis's appenders ask here for the data of an entry they send. */
    @Override
    public CompletableFuture<ByteString> read(LogEntryProto entry, TransactionContext context) {
        try {
            return CompletableFuture.completedFuture(entryData.read(entry.getIndex(),
                    entry.getStateMachineLogEntry().getLogData()));
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Ratis replaces the entries from {@code index} on. */
    @Override
    public CompletableFuture<Void> truncate(long index) {
        try {
            entryData.truncate(index);
            return CompletableFuture.completedFuture(null);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The commands of an entry: in its log data, or beside the log where the log data is a header. */
    private ByteString commandsOf(LogEntryProto entry) throws IOException {
        StateMachineLogEntryProto e = entry.getStateMachineLogEntry();
        if (!EntryData.isHeader(e.getLogData())) {
            return e.getLogData();
        }
        ByteString data = e.getStateMachineEntry().getStateMachineData();
        return data.isEmpty() ? entryData.read(entry.getIndex(), e.getLogData()) : data;
    }

    /** Bytes of commands an entry carries, wherever they are. */
    private static long bytesOf(LogEntryProto entry) {
        ByteString d = entry.getStateMachineLogEntry().getLogData();
        return EntryData.isHeader(d) ? d.asReadOnlyByteBuffer().slice().getInt(1) : d.size();
    }

    /** Tests only: runs on each replica's applier thread, with its peer id, before an entry is applied. */
    static volatile java.util.function.Consumer<org.apache.ratis.protocol.RaftPeerId> beforeApply = id -> { };

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        beforeApply.accept(getId());
        LogEntryProto entry = trx.getLogEntry();
        applyingIndex = entry.getIndex();
        applier.entering(entry.getIndex());
        Message reply;
        try {
            boolean checked = trx.getStateMachineContext() instanceof CheckedOnEntry;
            ByteString data = checked ? null : commandsOf(entry);
            List<ReplicaCommand> commands = checked ? ((CheckedOnEntry) trx.getStateMachineContext()).commands()
                    : ReplicaCommand.decodeAll(data);
            boolean batch = checked ? ((CheckedOnEntry) trx.getStateMachineContext()).batch()
                    : ReplicaCommand.isBatch(data);
            if (entry.getIndex() > skipUpTo && commands.stream().anyMatch(c -> c.op == ReplicaCommand.Op.RESIZE)) {
                copy.end(true); // a copy of files about to grow would hold parts of both sizes
            }
            if (entry.getIndex() <= skipUpTo) {
                // In the replica's files before it restarted: done then, not again (a block that rotted
                // at rest stays as found, for a read or scrub to report and repair); its fences count.
                for (ReplicaCommand c : commands) {
                    applier.admitOnly(c);
                }
                reply = batch
                        ? ApplyOutcome.encodeAll(Collections.nCopies(commands.size(), ApplyOutcome.done()))
                        : ApplyOutcome.done().encode();
            } else if (!batch) {
                reply = applier.apply(commands.get(0), checked).encode();
            } else {
                List<ApplyOutcome> outcomes = new ArrayList<>(commands.size());
                for (ReplicaCommand c : commands) {
                    outcomes.add(applier.apply(c, checked));
                }
                reply = ApplyOutcome.encodeAll(outcomes);
            }
        } catch (IllegalArgumentException e) {
            // Committed, yet not readable here: the leader reads every entry before it takes it in,
            // so a peer of another build wrote it. Answering it failed while the others apply it
            // would leave this replica different without a word: the group stops here instead.
            reply = ApplyOutcome.failed("replica " + getId() + ": " + e.getMessage()).encode();
            applier.storageFailed(new UnreadableEntryException("log entry " + entry.getIndex() + " holds a command this build"
                    + " cannot read (" + e.getMessage() + "); a peer of another build wrote it"));
        } catch (IOException e) {
            // its data is gone or damaged here: the blocks stay as they were, for scrub to find and repair
            log.accept("volume " + files.name() + ": replica " + getId() + " could not apply log entry "
                    + entry.getIndex() + ": " + e.getMessage());
            reply = ApplyOutcome.failed("replica " + getId() + ": " + e.getMessage()).encode();
        }
        IOException storage = applier.takeStorageFailure();
        if (storage != null && firstFailedApply < 0) {
            // a committed entry missing here: no snapshot or record may claim it, and the group starts
            // again (replaying from the last record) once the storage takes writes again
            firstFailedApply = entry.getIndex();
            events.applyFailed(entry.getIndex(), storage);
        }
        long bytes = entry.getIndex() <= skipUpTo ? 0 : bytesOf(entry);
        appliedBytes += bytes;
        appliedTotal += bytes;
        bytesSinceDrop += bytes;
        if (entry.getIndex() % DROP_EVERY == 0 || bytesSinceDrop >= DROP_EVERY_BYTES) {
            bytesSinceDrop = 0;
            dropPurgedData(); // Ratis purges after a snapshot returns: the data it let go goes soon after
        }
        updateLastAppliedTermIndex(entry.getTerm(), entry.getIndex());
        return CompletableFuture.completedFuture(reply);
    }

    @Override
    public CompletableFuture<Message> query(Message request) {
        try {
            ReplicaCommand c = ReplicaCommand.decode(request.getContent());
            if (c.op == ReplicaCommand.Op.INFO) {
                return CompletableFuture.completedFuture(
                        new VolumeShape(applier.volume().format(), applier.volume().blockCount()).encode());
            }
            if (c.op == ReplicaCommand.Op.PEERS) {
                return CompletableFuture.completedFuture(addresses.encode());
            }
            if (c.op != ReplicaCommand.Op.READ) {
                throw new IllegalArgumentException("not a query: " + c);
            }
            String misfit = applier.misfit(c);
            if (misfit != null) {
                throw new IllegalArgumentException(misfit);
            }
            if (appliedIndex.settling()) {
                throw new IOException("replica " + getId() + " is restored from a snapshot and not whole yet");
            }
            // The applied index is read before the blocks: the blocks are at least that fresh.
            long applied = appliedIndex.get();
            byte[][] dm = applier.read(c.lba, c.blocks);
            return CompletableFuture.completedFuture(ReadReply.encode(applied, dm[0], dm[1]));
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Called by Ratis on its applier thread, between entries, once enough entries are applied since
     * the last snapshot. Once they also carry enough data, every block is moved home (forced) and the
     * index recorded here, and the copy starts on a thread of its own. The answer is the newest
     * snapshot done with the purge margin applied after it (Ratis purges its log up to it), so Ratis
     * goes on asking after later entries.
     */
    @Override
    public long takeSnapshot() throws IOException {
        TermIndex last = getLastAppliedTermIndex();
        FileListSnapshotInfo have = storage.getLatestSnapshot();
        long haveIndex = have == null ? -1 : have.getIndex();
        if (haveIndex == takenIndex && appliedTotal - takenAtBytes >= purgeMarginBytes) {
            reportedIndex = Math.max(reportedIndex, takenIndex); // done, and the margin applied after it
        }
        if (firstFailedApply >= 0) {
            return reportedIndex; // a copy would carry the missing entry's blocks as if applied, and purge it
        }
        if (last == null || last.getIndex() <= 0 || last.getIndex() <= haveIndex || appliedBytes < snapshotAfterBytes
                || last.getIndex() < skipUpTo // the files hold more than that index until the skipped entries pass
                || (takenIndex >= 0 && last.getIndex() - takenIndex < settings.snapshotEveryEntries()) // as many as
                // Ratis counts from the index it last heard of, which the purge margin holds back
                || appliedIndex.settling() // a copy now could hold torn blocks of the restored one past its settled index
                || isCopying()) {
            return reportedIndex;
        }
        files.checkpoint();
        files.recordHeld(last.getIndex());
        appliedBytes = 0;
        if (startCopy(last, applier.fences().encode(), applier.sharedState().encode())) {
            takenIndex = last.getIndex();
            takenAtBytes = appliedTotal;
        }
        return reportedIndex;
    }

    /** Whether a snapshot is being copied. */
    public boolean isCopying() {
        return copy.busy();
    }

    private synchronized boolean startCopy(TermIndex at, byte[] fences, byte[] shared) {
        if (getLifeCycleState() != LifeCycle.State.RUNNING) {
            return false; // paused for a snapshot from the leader, or closing
        }
        copy.start("pistore-snapshot-" + files.name() + "-" + getId(), () -> {
            copy(at, fences, shared);
            return null;
        });
        return true;
    }

    private void copy(TermIndex at, byte[] fences, byte[] shared) {
        try {
            if (settings.snapshotCopiedOnDemand()) {
                storage.takeOnDemand(at, fences, shared);
            } else {
                storage.take(at, files, fences, shared, () -> applyingIndex);
            }
        } catch (IOException | RuntimeException e) {
            if (!Thread.currentThread().isInterrupted() && !(e instanceof java.nio.channels.ClosedByInterruptException)) {
                log.accept("volume " + files.name() + ": replica " + getId() + " could not take a snapshot at index "
                        + at.getIndex() + " (its log is kept until the next): " + e.getMessage());
            }
        }
    }

    /**
     * Makes the copy of on-demand snapshot {@code s} when a leader ships it, as a snapshot's copy is
     * made (cancelled alike; no snapshot taken meanwhile), while the caller waits. Throws {@link
     * IllegalStateException} when it cannot start (another copy under way, the replica not running)
     * or fails; the caller tries again.
     */
    private org.apache.ratis.statemachine.impl.FileListSnapshotInfo copyOnDemand(OnDemandSnapshot s) {
        String what = "volume " + files.name() + ": replica " + getId() + " could not copy the snapshot at index " + s.getIndex();
        java.util.concurrent.CompletableFuture<org.apache.ratis.statemachine.impl.FileListSnapshotInfo> done;
        if (!leading()) { // only a leader ships; a follower that names its snapshot in an error copies nothing
            throw new IllegalStateException(what + ": it does not lead");
        }
        synchronized (this) {
            if (isCopying() || getLifeCycleState() != LifeCycle.State.RUNNING) {
                throw new IllegalStateException(what + " now: " + (isCopying() ? "a copy is under way" : getLifeCycleState()));
            }
            done = copy.start("pistore-snapshot-" + files.name() + "-" + getId() + "-shipped",
                    () -> storage.copyInto(s, files, () -> applyingIndex));
        }
        org.apache.ratis.statemachine.impl.FileListSnapshotInfo c = SnapshotCopyThread.await(done, what);
        log.accept("volume " + files.name() + ": replica " + getId() + " copied the snapshot at index " + s.getIndex() + " to ship it");
        return c;
    }

    private boolean leading() {
        try {
            return getServer().join().getDivision(getGroupId()).getInfo().isLeader();
        } catch (IOException | RuntimeException e) {
            return false; // the group left this server
        }
    }

    /** Drops the entry data of entries Ratis purged from its log (whole files only). */
    private void dropPurgedData() {
        try {
            long start = getServer().join().getDivision(getGroupId()).getRaftLog().getStartIndex();
            if (start > 0) {
                entryData.dropBefore(start);
            }
        } catch (org.apache.ratis.protocol.exceptions.GroupMismatchException e) {
            // the group left this server (stopped, removed): the next start drops what its log no longer has
        } catch (IOException | RuntimeException e) {
            log.accept("volume " + files.name() + ": replica " + getId() + " could not drop purged entry data"
                    + " (it stays until the next snapshot): " + e.getMessage());
        }
    }

    @Override
    public void notifyLeaderChanged(org.apache.ratis.protocol.RaftGroupMemberId member,
            org.apache.ratis.protocol.RaftPeerId leader) {
        if (!repliesOnLogWorker) { // the division is whole once it hears of a leader, before its first append
            try {
                repliesOnLogWorker = LogWorkerReplies.install(getServer().join().getDivision(getGroupId()));
            } catch (IOException | RuntimeException e) {
                // left as Ratis made it: appends are answered from its server executor
            }
        }
        events.leaderChanged(leader);
    }

    /** Whether this division's follower appends are answered on its log worker ({@link LogWorkerReplies}). */
    private volatile boolean repliesOnLogWorker;

    @Override
    public void notifyGroupRemove() {
        removed = true;
        events.removed();
    }

    /** Tests only: runs on each replica's applier thread, with its peer id, as a configuration entry is applied. */
    static volatile java.util.function.BiConsumer<org.apache.ratis.protocol.RaftPeerId, RaftConfigurationProto>
            onConfiguration = (id, conf) -> { };

    @Override
    public void notifyConfigurationChanged(long term, long index,
            RaftConfigurationProto conf) {
        onConfiguration.accept(getId(), conf);
        List<RaftPeer> peers = new ArrayList<>(
                ProtoUtils.toRaftPeers(conf.getPeersList()));
        for (RaftPeer p : ProtoUtils.toRaftPeers(conf.getOldPeersList())) {
            if (peers.stream().noneMatch(q -> q.getId().equals(p.getId()))) {
                peers.add(p);
            }
        }
        addresses.saw(peers);
        events.configured(peers);
        events.member(conf.getPeersList().stream().anyMatch(p -> p.getId().equals(getId().toByteString())));
    }

    /** An entry as Ratis's messages name it: its sizes, never its bytes (a failure's line would carry megabytes). */
    @Override
    public String toStateMachineLogEntryString(StateMachineLogEntryProto proto) {
        return entryString(proto);
    }

    static String entryString(StateMachineLogEntryProto proto) {
        return "pistore commands, " + proto.getLogData().size() + " bytes"
                + (proto.hasStateMachineEntry() ? " and " + proto.getStateMachineEntry().getStateMachineData().size()
                        + " beside the log" : "");
    }

    @Override
    public void notifyLogFailed(Throwable cause, LogEntryProto failedEntry) {
        events.logFailed(cause);
    }

    @Override
    public void notifyExtendedNoLeader(RoleInfoProto roleInfo) {
        events.noLeaderForLong();
    }

    @Override
    public void notifyServerShutdown(RoleInfoProto roleInfo, boolean allServer) {
        if (!allServer) { // the whole server stopping says true
            events.stoppedByRatis();
        }
    }

    /**
     * Ratis closes the state machine after its last entry is applied (a clean stop): the volume is
     * flushed and the record moved to that entry, so the next start does not apply again what the
     * replica holds (a crash skips this; the next start then applies again from the last snapshot or
     * record, which is harmless: every entry overwrites). The log closes next: its idle worker is
     * woken so that close does not wait for the worker's next poll ({@link LogWorkerWakeup}).
     */
    @Override
    public void close() throws IOException {
        copy.end(true); // the record moved when it started: a stop loses only the copy
        try {
            TermIndex last = getLastAppliedTermIndex();
            if (!removed && firstFailedApply < 0 && last != null && last.getIndex() > files.heldIndex()) {
                applier.volume().flush();
                files.recordHeld(last.getIndex());
            }
        } catch (IOException | RuntimeException e) {
            log.accept("volume " + files.name() + ": replica " + getId() + " could not record its applied index at close"
                    + " (the next start applies its log again from the last snapshot): " + e.getMessage());
        } finally {
            super.close();
            if (entryData != null) {
                entryData.close();
            }
            LogWorkerWakeup.interruptIdle(getId(), getGroupId());
        }
    }
}
