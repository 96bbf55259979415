package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ReplicationSettings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A committed entry this build cannot read (a peer of a newer build wrote a command it does not
 * know): the replica applies none of it, not even the commands of a batch it could read, and reports
 * a failure of its storage, which stops its group, instead of answering the entry failed while the
 * other replicas apply it.
 */
class UnreadableEntryTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    @TempDir
    Path dir;

    private static TransactionContext entry(VolumeStateMachine sm, long index, ByteString data) {
        LogEntryProto e = LogEntryProto.newBuilder().setTerm(1).setIndex(index)
                .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder().setLogData(data)).build();
        return TransactionContext.newBuilder().setStateMachine(sm).setServerRole(RaftPeerRole.FOLLOWER).setLogEntry(e).build();
    }

    @Test
    void aCommandOfAnotherBuildStopsTheReplicaWithNothingApplied() throws Exception {
        List<String> log = new ArrayList<>();
        List<Long> failedAt = new ArrayList<>();
        List<Throwable> causes = new ArrayList<>();
        try (VolumeStore store = VolumeStore.inMemory()) {
            store.create("v", F, 16);
            ReplicaApplier applier = new ReplicaApplier("v", "n2", store.get("v"), log::add, new ReplicaStats());
            VolumeStateMachine sm = new VolumeStateMachine(applier, new ReplicaFiles(store, "v", dir.resolve("v.applied")),
                    ReplicationSettings.defaults(), log::add, new VolumeStateMachine.GroupEvents() {
                        @Override
                        public void removed() {
                        }

                        @Override
                        public void configured(List<org.apache.ratis.protocol.RaftPeer> peers) {
                        }

                        @Override
                        public void applyFailed(long index, Throwable cause) {
                            failedAt.add(index);
                            causes.add(cause);
                        }
                    });
            byte[][] w = ReplicaApplierTest.blocks(3, 2, 1);
            ByteString write = ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, 3, 2, ScatterList.wrap(w[0]),
                    ScatterList.wrap(w[1]), false).getContent();
            assertEquals("done", ApplyOutcome.decode(sm.applyTransaction(entry(sm, 1, write)).join().getContent()).describe());
            assertTrue(failedAt.isEmpty(), "a readable entry stops nothing");

            byte[] unknown = new byte[ReplicaCommand.HEADER_BYTES];
            unknown[0] = 99; // a command code no build of this one knows
            byte[][] w2 = ReplicaApplierTest.blocks(3, 2, 2);
            ByteString rewrite = ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, 3, 2, ScatterList.wrap(w2[0]),
                    ScatterList.wrap(w2[1]), false).getContent();
            ByteString batch = ReplicaCommand.batch(List.of(rewrite, UnsafeByteOperations.unsafeWrap(unknown))).getContent();
            ApplyOutcome o = ApplyOutcome.decode(sm.applyTransaction(entry(sm, 2, batch)).join().getContent());
            assertTrue(o.describe().startsWith("failed: replica") && o.describe().contains("unknown replica command code 99"),
                    o.describe());
            assertEquals(List.of(2L), failedAt, "the replica's storage failed at that entry: its group stops");
            assertInstanceOf(UnreadableEntryException.class, causes.get(0));
            assertTrue(causes.get(0).getMessage().contains("log entry 2 holds a command this build cannot read"),
                    causes.get(0).getMessage());
            byte[] d = new byte[2 * F.dataSize()];
            store.get("v").read(3, 2, ScatterList.wrap(d), ScatterList.wrap(new byte[2 * F.metadataSize()]));
            assertArrayEquals(w[0], d, "the batch's readable write was not applied either");
        }
    }
}
