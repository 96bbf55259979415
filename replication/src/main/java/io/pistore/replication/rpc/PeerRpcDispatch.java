package io.pistore.replication.rpc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.GroupInfoRequestProto;
import org.apache.ratis.proto.RaftProtos.GroupListRequestProto;
import org.apache.ratis.proto.RaftProtos.GroupManagementRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.LeaderElectionManagementRequestProto;
import org.apache.ratis.proto.RaftProtos.RaftClientRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.SetConfigurationRequestProto;
import org.apache.ratis.proto.RaftProtos.SnapshotManagementRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.proto.RaftProtos.TransferLeadershipRequestProto;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.MessageLite;
import org.apache.ratis.thirdparty.com.google.protobuf.Parser;
import org.apache.ratis.util.function.CheckedSupplier;

/**
 * What a peer does with each request of the peers' RPC: the write path's on the reader thread (the
 * server queues them and completes later), the rest, which the server answers by blocking, on
 * {@code blocking}. Each reply (or the request's failure) goes to the connection it came from.
 */
final class PeerRpcDispatch {
    private final RaftServer server;
    private final Executor blocking;

    PeerRpcDispatch(RaftServer server, Executor blocking) {
        this.server = server;
        this.blocking = blocking;
    }

    /** Handles request {@code f}; its reply frame goes to {@code reply}, once. */
    void handle(RpcFrame f, Consumer<ByteBuffer> reply) {
        CompletableFuture<? extends MessageLite> r;
        try {
            r = answer(f);
        } catch (IOException | RuntimeException e) {
            r = CompletableFuture.failedFuture(e);
        }
        r.whenComplete((m, t) -> {
            if (t == null) {
                reply.accept(RpcFrame.encode(f.id(), RpcFrame.DONE, m));
            } else {
                Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
                reply.accept(RpcFrame.failure(f.id(), c));
            }
        });
    }

    private CompletableFuture<? extends MessageLite> answer(RpcFrame f) throws IOException {
        switch (f.kind()) {
            case RpcFrame.APPEND:
                return server.appendEntriesAsync(f.body(AppendEntriesRequestProto.parser()));
            case RpcFrame.READ_INDEX:
                return server.readIndexAsync(f.body(ReadIndexRequestProto.parser()));
            case RpcFrame.CLIENT:
                return server.submitClientRequestAsync(ClientProtoUtils.toRaftClientRequest(
                        f.body(RaftClientRequestProto.parser()))).thenApply(ClientProtoUtils::toRaftClientReplyProto);
            case RpcFrame.VOTE: {
                RequestVoteRequestProto p = f.body(RequestVoteRequestProto.parser());
                return off(() -> server.requestVote(p));
            }
            case RpcFrame.START_ELECTION: {
                StartLeaderElectionRequestProto p = f.body(StartLeaderElectionRequestProto.parser());
                return off(() -> server.startLeaderElection(p));
            }
            case RpcFrame.INSTALL_SNAPSHOT: {
                InstallSnapshotRequestProto p = f.body(InstallSnapshotRequestProto.parser());
                return off(() -> server.installSnapshot(p));
            }
            case RpcFrame.SET_CONFIGURATION: {
                var p = ClientProtoUtils.toSetConfigurationRequest(f.body(SetConfigurationRequestProto.parser()));
                return off(() -> reply(server.setConfiguration(p)));
            }
            case RpcFrame.GROUP_MANAGEMENT: {
                var p = ClientProtoUtils.toGroupManagementRequest(f.body(GroupManagementRequestProto.parser()));
                return off(() -> reply(server.groupManagement(p)));
            }
            case RpcFrame.GROUP_LIST: {
                var p = ClientProtoUtils.toGroupListRequest(f.body(GroupListRequestProto.parser()));
                return off(() -> ClientProtoUtils.toGroupListReplyProto(server.getGroupList(p)));
            }
            case RpcFrame.GROUP_INFO: {
                var p = ClientProtoUtils.toGroupInfoRequest(f.body(GroupInfoRequestProto.parser()));
                return off(() -> ClientProtoUtils.toGroupInfoReplyProto(server.getGroupInfo(p)));
            }
            case RpcFrame.TRANSFER_LEADERSHIP: {
                var p = ClientProtoUtils.toTransferLeadershipRequest(f.body(TransferLeadershipRequestProto.parser()));
                return off(() -> reply(server.transferLeadership(p)));
            }
            case RpcFrame.SNAPSHOT_MANAGEMENT: {
                var p = ClientProtoUtils.toSnapshotManagementRequest(f.body(SnapshotManagementRequestProto.parser()));
                return off(() -> reply(server.snapshotManagement(p)));
            }
            case RpcFrame.ELECTION_MANAGEMENT: {
                var p = ClientProtoUtils.toLeaderElectionManagementRequest(f.body(LeaderElectionManagementRequestProto.parser()));
                return off(() -> reply(server.leaderElectionManagement(p)));
            }
            default:
                throw new IOException("unknown request kind " + f.kind());
        }
    }

    private static MessageLite reply(RaftClientReply r) {
        return ClientProtoUtils.toRaftClientReplyProto(r);
    }

    /** {@code call} on a blocking thread. */
    private <T> CompletableFuture<T> off(CheckedSupplier<T, IOException> call) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return call.get();
            } catch (IOException e) {
                throw new CompletionException(e);
            }
        }, blocking);
    }

    /** A reply frame's body; a frame that does not parse fails the call. */
    static <T> T parse(RpcFrame f, Parser<T> parser) {
        try {
            return f.body(parser);
        } catch (IOException e) {
            throw new CompletionException(e);
        }
    }
}
