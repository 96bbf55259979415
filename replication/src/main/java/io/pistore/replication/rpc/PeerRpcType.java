package io.pistore.replication.rpc;

import org.apache.ratis.client.ClientFactory;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerRpc;
import org.apache.ratis.server.ServerFactory;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;

/**
 * The peers' RPC of pistore's own, as a Ratis RPC type (named by its class in {@code raft.rpc.type}):
 * one TCP connection per pair of ends, each message a frame of Ratis's own protocol messages
 * ({@link RpcFrame}), replies matched by id. A leader sends its appends with {@link PeerLogAppender},
 * one request at a time to each follower on the appender's own thread (a volume has one entry in
 * flight anyway); a follower hands them to its server where they arrive. No gRPC layer, no event
 * loop between a thread and its socket.
 */
public final class PeerRpcType implements RpcType {
    /** The one instance; Ratis makes others by reflection, all alike. */
    public static final PeerRpcType INSTANCE = new PeerRpcType();
    /** The properties naming where a peer listens ({@link #listen}). */
    private static final String HOST_KEY = "pistore.rpc.host";
    private static final String PORT_KEY = "pistore.rpc.port";

    @Override
    public String name() {
        return PeerRpcType.class.getName();
    }

    @Override
    public RpcFactory newFactory(Parameters parameters) {
        return new Factory();
    }

    /** Sets where a peer with {@code p} listens ({@code port} 0: any free one). */
    public static void listen(RaftProperties p, String host, int port) {
        p.set(HOST_KEY, host);
        p.setInt(PORT_KEY, port);
    }

    static String host(RaftProperties p) {
        return p.get(HOST_KEY, "0.0.0.0");
    }

    static int port(RaftProperties p) {
        return p.getInt(PORT_KEY, 0);
    }

    private static final class Factory implements ServerFactory, ClientFactory {
        @Override
        public RpcType getRpcType() {
            return INSTANCE;
        }

        @Override
        public RaftServerRpc newRaftServerRpc(RaftServer server) {
            return new PeerRpcServer(server);
        }

        @Override
        public LogAppender newLogAppender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
            return new PeerLogAppender(server, state, follower);
        }

        @Override
        public RaftClientRpc newRaftClientRpc(ClientId clientId, RaftProperties properties) {
            return new PeerClientRpc(clientId, properties);
        }
    }
}
