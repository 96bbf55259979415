package io.pistore.replication;

import java.util.Set;
import java.util.concurrent.Executor;
import org.apache.ratis.proto.grpc.RaftClientProtocolServiceGrpc;
import org.apache.ratis.proto.grpc.RaftServerProtocolServiceGrpc;
import org.apache.ratis.thirdparty.io.grpc.Metadata;
import org.apache.ratis.thirdparty.io.grpc.ServerCall;
import org.apache.ratis.thirdparty.io.grpc.ServerCallExecutorSupplier;

/**
 * Which Ratis gRPC calls a peer handles on the connection's event loop thread, not on gRPC's
 * executor: the appends a follower takes, the ordered client requests (a volume's writes) and the
 * read-index requests a leader takes. Ratis handles those without blocking (it queues an append for its log worker and
 * answers when the future completes), so the hand-off to an executor thread only added a thread
 * wake-up per message, and on a small machine each one costs more than the handling itself.
 * Everything else (votes, which force the Raft metadata; snapshot chunks, written to files; the
 * group administration calls, which open and close volumes; unordered requests, which are queries
 * that read a volume) stays on gRPC's executor, so no event loop waits for a disk. A read sent
 * through Ratis on the ordered stream (the path of a peer that does not lead) can read its blocks
 * on the event loop when the replica has already applied its index: a page-cache read, or a
 * disk read on a volume whose blocks are not cached.
 */
final class ReplicationRpcExecutors implements ServerCallExecutorSupplier {
    private static final Executor ON_EVENT_LOOP = Runnable::run;

    private static final Set<String> ON_EVENT_LOOP_METHODS = Set.of(
            RaftServerProtocolServiceGrpc.getAppendEntriesMethod().getFullMethodName(),
            RaftServerProtocolServiceGrpc.getReadIndexMethod().getFullMethodName(),
            RaftClientProtocolServiceGrpc.getOrderedMethod().getFullMethodName());

    /** Owns no thread: each gRPC server gets its own, made with its parameters. */
    ReplicationRpcExecutors() {
    }

    /** The event loop for the calls named above; null (gRPC's executor) for any other. */
    @Override
    public <Q, R> Executor getExecutor(ServerCall<Q, R> call, Metadata headers) {
        return onEventLoop(call.getMethodDescriptor().getFullMethodName()) ? ON_EVENT_LOOP : null;
    }

    static boolean onEventLoop(String fullMethodName) {
        return ON_EVENT_LOOP_METHODS.contains(fullMethodName);
    }
}
