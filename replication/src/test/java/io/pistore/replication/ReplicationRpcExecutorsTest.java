package io.pistore.replication;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.ratis.proto.grpc.AdminProtocolServiceGrpc;
import org.apache.ratis.proto.grpc.RaftClientProtocolServiceGrpc;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.junit.jupiter.api.Test;

/** Which gRPC calls a peer handles on its event loop: the write path's only, never one that waits for a disk. */
class ReplicationRpcExecutorsTest {
    @Test
    void theWritePathsCallsRunOnTheEventLoop() {
        assertTrue(ReplicationRpcExecutors.onEventLoop(RaftServerProtocolServiceGrpc.getAppendEntriesMethod().getFullMethodName()));
        assertTrue(ReplicationRpcExecutors.onEventLoop(RaftServerProtocolServiceGrpc.getReadIndexMethod().getFullMethodName()));
        assertTrue(ReplicationRpcExecutors.onEventLoop(RaftClientProtocolServiceGrpc.getOrderedMethod().getFullMethodName()));
    }

    @Test
    void callsThatWriteFilesOrOpenVolumesStayOnGrpcsExecutor() {
        assertFalse(ReplicationRpcExecutors.onEventLoop(RaftServerProtocolServiceGrpc.getRequestVoteMethod().getFullMethodName()));
        assertFalse(ReplicationRpcExecutors.onEventLoop(RaftClientProtocolServiceGrpc.getUnorderedMethod().getFullMethodName()));
        assertFalse(ReplicationRpcExecutors.onEventLoop(RaftServerProtocolServiceGrpc.getInstallSnapshotMethod().getFullMethodName()));
        assertFalse(ReplicationRpcExecutors.onEventLoop(
                RaftServerProtocolServiceGrpc.getStartLeaderElectionMethod().getFullMethodName()));
        assertFalse(ReplicationRpcExecutors.onEventLoop(AdminProtocolServiceGrpc.getGroupManagementMethod().getFullMethodName()));
        assertFalse(ReplicationRpcExecutors.onEventLoop(AdminProtocolServiceGrpc.getSetConfigurationMethod().getFullMethodName()));
    }
}
