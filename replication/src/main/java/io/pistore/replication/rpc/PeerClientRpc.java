package io.pistore.replication.rpc;

import java.io.IOException;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.GroupInfoReplyProto;
import org.apache.ratis.proto.RaftProtos.GroupListReplyProto;
import org.apache.ratis.proto.RaftProtos.RaftClientReplyProto;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupInfoRequest;
import org.apache.ratis.protocol.GroupListRequest;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.LeaderElectionManagementRequest;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.thirdparty.com.google.protobuf.MessageLite;
import org.apache.ratis.util.IOUtils;

/**
 * A Ratis client's end of the peers' RPC: each request to the peer it names, answered in any order;
 * a request with no answer within the client's request timeout (plus the request's own, for a watch)
 * fails with a timeout, and an answer that says "not the leader" or "leader not ready" fails with that
 * exception, as the client's retry logic expects. Thread-safe.
 */
final class PeerClientRpc implements RaftClientRpc {
    private final PeerChannels peers;
    private final long timeoutMs;

    PeerClientRpc(ClientId id, RaftProperties properties) {
        this.peers = new PeerChannels(() -> "client-" + id);
        this.timeoutMs = RaftClientConfigKeys.Rpc.requestTimeout(properties).toLong(TimeUnit.MILLISECONDS);
    }

    @Override
    public CompletableFuture<RaftClientReply> sendRequestAsync(RaftClientRequest request) {
        byte kind;
        MessageLite body;
        if (request instanceof GroupManagementRequest r) {
            kind = RpcFrame.GROUP_MANAGEMENT;
            body = ClientProtoUtils.toGroupManagementRequestProto(r);
        } else if (request instanceof SetConfigurationRequest r) {
            kind = RpcFrame.SET_CONFIGURATION;
            body = ClientProtoUtils.toSetConfigurationRequestProto(r);
        } else if (request instanceof GroupListRequest r) {
            kind = RpcFrame.GROUP_LIST;
            body = ClientProtoUtils.toGroupListRequestProto(r);
        } else if (request instanceof GroupInfoRequest r) {
            kind = RpcFrame.GROUP_INFO;
            body = ClientProtoUtils.toGroupInfoRequestProto(r);
        } else if (request instanceof TransferLeadershipRequest r) {
            kind = RpcFrame.TRANSFER_LEADERSHIP;
            body = ClientProtoUtils.toTransferLeadershipRequestProto(r);
        } else if (request instanceof SnapshotManagementRequest r) {
            kind = RpcFrame.SNAPSHOT_MANAGEMENT;
            body = ClientProtoUtils.toSnapshotManagementRequestProto(r);
        } else if (request instanceof LeaderElectionManagementRequest r) {
            kind = RpcFrame.ELECTION_MANAGEMENT;
            body = ClientProtoUtils.toLeaderElectionManagementRequestProto(r);
        } else {
            kind = RpcFrame.CLIENT;
            body = ClientProtoUtils.toRaftClientRequestProto(request);
        }
        byte k = kind;
        return peers.call(request.getServerId(), kind, body, timeoutMs + Math.max(0, request.getTimeoutMs())).thenApply(f -> {
            RaftClientReply reply;
            if (k == RpcFrame.GROUP_LIST) {
                reply = ClientProtoUtils.toGroupListReply(PeerRpcDispatch.parse(f, GroupListReplyProto.parser()));
            } else if (k == RpcFrame.GROUP_INFO) {
                reply = ClientProtoUtils.toGroupInfoReply(PeerRpcDispatch.parse(f, GroupInfoReplyProto.parser()));
            } else {
                reply = ClientProtoUtils.toRaftClientReply(PeerRpcDispatch.parse(f, RaftClientReplyProto.parser()));
            }
            Exception e = reply.getNotLeaderException();
            if (e == null) {
                e = reply.getLeaderNotReadyException();
            }
            if (e != null) {
                throw new CompletionException(e);
            }
            return reply;
        });
    }

    @Override
    public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
        return sendRequestAsync(request);
    }

    @Override
    public RaftClientReply sendRequest(RaftClientRequest request) throws IOException {
        try {
            return sendRequestAsync(request).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw IOUtils.toInterruptedIOException("interrupted waiting for " + request.getServerId(), e);
        } catch (ExecutionException e) {
            throw IOUtils.asIOException(e.getCause());
        }
    }

    @Override
    public void addRaftPeers(Collection<RaftPeer> ps) {
        peers.addPeers(ps);
    }

    @Override
    public boolean handleException(RaftPeerId serverId, Throwable t, boolean reconnect) {
        if (reconnect || shouldReconnect(t)) {
            peers.reset(serverId);
            return true;
        }
        return false;
    }

    @Override
    public void close() {
        peers.close();
    }
}
