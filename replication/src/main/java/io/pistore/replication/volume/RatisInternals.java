package io.pistore.replication.volume;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.proto.RaftProtos.ReadIndexReplyProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.protocol.RaftClientAsynchronousProtocol;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.RaftServerAsynchronousProtocol;

/**
 * Every use pistore makes of Apache Ratis beyond its public API, in one place, for {@link LocalLeader}:
 * <ul>
 * <li>a {@link RaftServer.Division} is Ratis's own server implementation, which also answers the
 * client protocol ({@link RaftClientAsynchronousProtocol}) and the server protocol
 * ({@link RaftServerAsynchronousProtocol}) on the calling thread: a leader puts its own entries into
 * its log and asks its own read index through them, without the server's executor hand-offs;</li>
 * <li>{@code ClientProtoUtils} (the client's {@code impl} package) builds the read-index request
 * exactly as the server's own RPC service receives it.</li>
 * </ul>
 * Both hold for the Ratis version {@link #CHECKED_AGAINST}; the contract test fails on any other
 * version until they are checked again, and whenever a division stops answering these protocols.
 * Where a division does not answer them, the callers take Ratis's public paths (slower, as correct).
 */
final class RatisInternals {
    /** The Ratis version whose internals these calls were checked against. */
    static final String CHECKED_AGAINST = "3.2.0";

    private RatisInternals() {
    }

    /** The version of the Ratis server that made {@code d} (from its jar), or null when unknown. */
    static String version(RaftServer.Division d) {
        return d.getClass().getPackage().getImplementationVersion();
    }

    /** Whether {@link #submit} can put entries into {@code d}'s log on the calling thread. */
    static boolean submitsInProcess(RaftServer.Division d) {
        return d instanceof RaftClientAsynchronousProtocol;
    }

    /** Whether {@link #readIndex} asks {@code d} itself on the calling thread. */
    static boolean readsIndexInProcess(RaftServer.Division d) {
        return d instanceof RaftServerAsynchronousProtocol;
    }

    /**
     * Hands {@code request} to {@code d} as its RPC service would, on the calling thread; null when the
     * division does not answer the client protocol (the caller sends through the group's client).
     */
    static CompletableFuture<RaftClientReply> submit(RaftServer.Division d, RaftClientRequest request)
            throws IOException {
        if (!submitsInProcess(d)) {
            return null;
        }
        return ((RaftClientAsynchronousProtocol) d).submitClientRequestAsync(request);
    }

    /**
     * The read-index request of division {@code d}'s peer to peer {@code to} (itself while it leads, the
     * leader while it follows), carrying {@code request}.
     */
    static ReadIndexRequestProto readIndexRequest(RaftServer.Division d, RaftPeerId to, RaftClientRequest request) {
        return ReadIndexRequestProto.newBuilder()
                .setServerRequest(ClientProtoUtils.toRaftRpcRequestProtoBuilder(d.getMemberId(), to))
                .setClientRequest(ClientProtoUtils.toRaftClientRequestProto(request))
                .build();
    }

    /**
     * Asks {@code d} itself for its read index, on the calling thread; through {@code server} (its
     * request executor, then the same division) when the division does not answer the server protocol.
     * The division answers a leader holding its lease with a completed future.
     */
    static CompletableFuture<ReadIndexReplyProto> readIndex(RaftServer server, RaftServer.Division d,
            ReadIndexRequestProto p) throws IOException {
        if (readsIndexInProcess(d)) {
            return ((RaftServerAsynchronousProtocol) d).readIndexAsync(p);
        }
        return server.readIndexAsync(p);
    }
}
