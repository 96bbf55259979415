package io.pistore.replication;

import io.pistore.integrity.PiError;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.StateMachineStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.MD5FileUtil;

/**
 * The Raft state machine of one replica of one replicated volume: committed log entries are applied,
 * in order, to the replica's local engine volume by a {@link ReplicaApplier}; reads are answered from
 * it. The leader checks a write's PI when it enters ({@link #startTransaction}): a write that fails is
 * refused before it reaches the log, so it is stored nowhere.
 *
 * <p>Snapshots: the volume's own files are the state. Taking a snapshot makes them durable (flush)
 * and records the last applied index in a small snapshot file, so a restart replays only the entries
 * after it; replaying entries the volume already holds is harmless, as every command overwrites.
 * The Raft log is retained (never purged, see {@link ReplicationSettings}), so a follower that fell
 * behind always catches up from the log; the snapshot file alone could not bring it up to date.
 */
final class VolumeStateMachine extends BaseStateMachine {
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private final ReplicaApplier applier;
    private final AppliedIndex appliedIndex = new AppliedIndex();
    private final GroupEvents events;

    /** What the replica's peer hears of its group's membership. */
    interface GroupEvents {
        /** This peer left the group (a membership change removed it); the group has closed. */
        void removed();

        /** A configuration entry was applied: the group's members are now {@code peers} (old and new while joint). */
        void configured(java.util.List<org.apache.ratis.protocol.RaftPeer> peers);
    }

    VolumeStateMachine(ReplicaApplier applier, GroupEvents events) {
        this.applier = applier;
        this.events = events;
    }

    ReplicaApplier applier() {
        return applier;
    }

    /** What this replica has applied, with a wait for it: the leader-local read path's. */
    AppliedIndex appliedIndex() {
        return appliedIndex;
    }

    // Every change of the applied index (entries applied here, configuration and no-op entries Ratis
    // reports, a snapshot restored) goes through one of these two.
    @Override
    protected boolean updateLastAppliedTermIndex(TermIndex ti) {
        boolean updated = super.updateLastAppliedTermIndex(ti);
        if (appliedIndex != null) { // null while the base class's constructor runs
            appliedIndex.advance(getLastAppliedTermIndex().getIndex());
        }
        return updated;
    }

    @Override
    protected void setLastAppliedTermIndex(TermIndex ti) {
        super.setLastAppliedTermIndex(ti);
        if (appliedIndex != null && ti != null) { // null while the base class's constructor runs
            appliedIndex.advance(ti.getIndex());
        }
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        reinitialize();
    }

    @Override
    public void reinitialize() throws IOException {
        SingleFileSnapshotInfo s = storage.loadLatestSnapshot();
        if (s != null) {
            setLastAppliedTermIndex(s.getTermIndex());
        }
    }

    @Override
    public StateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public SingleFileSnapshotInfo getLatestSnapshot() {
        return storage.getLatestSnapshot();
    }

    @Override
    public TransactionContext startTransaction(RaftClientRequest request) throws IOException {
        TransactionContext t = super.startTransaction(request);
        java.util.List<ReplicaCommand> commands;
        try {
            commands = ReplicaCommand.decodeAll(request.getMessage().getContent());
        } catch (IllegalArgumentException e) {
            return t.setException(new IOException("not a replica command: " + e.getMessage()));
        }
        // A batch enters the log whole or not at all: its writer sends each command alone again when
        // one is refused, so each gets its own answer.
        for (ReplicaCommand c : commands) {
            String misfit = applier.misfit(c);
            if (misfit != null) {
                return t.setException(new IOException(misfit));
            }
            if (c.op == ReplicaCommand.Op.WRITE || c.op == ReplicaCommand.Op.REPAIR) {
                PiError e = applier.firstError(c);
                if (e != null) {
                    return t.setException(new IOException("leader " + getId() + ": " + c + " "
                            + ApplyOutcome.refused(c.lba + e.blockIndex(), e).describe()));
                }
            }
        }
        return t;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto entry = trx.getLogEntry();
        Message reply;
        try {
            org.apache.ratis.thirdparty.com.google.protobuf.ByteString data = entry.getStateMachineLogEntry().getLogData();
            java.util.List<ReplicaCommand> commands = ReplicaCommand.decodeAll(data);
            if (!ReplicaCommand.isBatch(data)) {
                reply = applier.apply(commands.get(0)).encode();
            } else {
                java.util.List<ApplyOutcome> outcomes = new java.util.ArrayList<>(commands.size());
                for (ReplicaCommand c : commands) {
                    outcomes.add(applier.apply(c));
                }
                reply = ApplyOutcome.encodeAll(outcomes);
            }
        } catch (IllegalArgumentException e) {
            reply = ApplyOutcome.failed("replica " + getId() + ": " + e.getMessage()).encode();
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
            if (c.op != ReplicaCommand.Op.READ) {
                throw new IllegalArgumentException("not a query: " + c);
            }
            String misfit = applier.misfit(c);
            if (misfit != null) {
                throw new IllegalArgumentException(misfit);
            }
            // The applied index is read before the blocks: the blocks are at least that fresh.
            long applied = getLastAppliedTermIndex().getIndex();
            byte[][] dm = applier.read(c.lba, c.blocks);
            return CompletableFuture.completedFuture(ReadReply.encode(applied, dm[0], dm[1]));
        } catch (IOException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public long takeSnapshot() throws IOException {
        TermIndex last = getLastAppliedTermIndex();
        if (last == null || last.getIndex() < 0) {
            return -1;
        }
        applier.volume().flush(); // everything applied so far is durable before the snapshot says so
        File f = storage.getSnapshotFile(last.getTerm(), last.getIndex());
        Files.write(f.toPath(), ("applied " + last + "\n").getBytes(StandardCharsets.UTF_8));
        storage.updateLatestSnapshot(new SingleFileSnapshotInfo(
                new FileInfo(f.toPath(), MD5FileUtil.computeAndSaveMd5ForFile(f)), last));
        return last.getIndex();
    }

    @Override
    public void notifyGroupRemove() {
        events.removed();
    }

    @Override
    public void notifyConfigurationChanged(long term, long index,
            org.apache.ratis.proto.RaftProtos.RaftConfigurationProto conf) {
        java.util.List<org.apache.ratis.protocol.RaftPeer> peers = new java.util.ArrayList<>(
                org.apache.ratis.util.ProtoUtils.toRaftPeers(conf.getPeersList()));
        for (org.apache.ratis.protocol.RaftPeer p : org.apache.ratis.util.ProtoUtils.toRaftPeers(conf.getOldPeersList())) {
            if (peers.stream().noneMatch(q -> q.getId().equals(p.getId()))) {
                peers.add(p);
            }
        }
        events.configured(peers);
    }

    @Override
    public void close() throws IOException {
        super.close();
    }
}
