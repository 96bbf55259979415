package io.pistore.replication.rpc;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.AppendEntriesReplyProto;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotReplyProto;
import org.apache.ratis.proto.RaftProtos.InstallSnapshotRequestProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexReplyProto;
import org.apache.ratis.proto.RaftProtos.ReadIndexRequestProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteReplyProto;
import org.apache.ratis.proto.RaftProtos.RequestVoteRequestProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionReplyProto;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.RaftServerRpc;
import org.apache.ratis.server.protocol.RaftServerAsynchronousProtocol;
import org.apache.ratis.thirdparty.com.google.protobuf.MessageLite;
import org.apache.ratis.util.IOUtils;

/**
 * A peer's end of the peers' RPC ({@link PeerRpcType}): it listens on the peer's replication address
 * and answers every request of the other peers and of clients, and it makes this peer's own calls to
 * the others ({@link PeerChannels}). The write path's requests (appends, read index, client requests)
 * are handed to the Raft server on the connection's reader thread and answered from whichever thread
 * completes them, so an append costs its follower no hand-off the server does not make itself;
 * requests the server answers by blocking (votes, snapshot chunks, group administration) run on
 * threads of their own, so no reader ever waits for a disk.
 */
final class PeerRpcServer implements RaftServerRpc {
    private final RaftServer server;
    private final PeerChannels peers;
    private final ServerSocketChannel listening;
    private final InetSocketAddress address;
    private final long requestTimeoutMs;
    private final ExecutorService blocking;
    private final Map<FrameChannel, Boolean> accepted = new ConcurrentHashMap<>();
    private final PeerRpcDispatch dispatch;
    private volatile boolean closed;

    PeerRpcServer(RaftServer server) {
        this.server = server;
        RaftProperties p = server.getProperties();
        this.requestTimeoutMs = RaftServerConfigKeys.Rpc.requestTimeout(p).toLong(TimeUnit.MILLISECONDS);
        this.peers = new PeerChannels(() -> String.valueOf(server.getId()));
        this.blocking = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, server.getId() + "-rpc-blocking");
            t.setDaemon(true);
            return t;
        });
        this.dispatch = new PeerRpcDispatch(server, blocking);
        this.address = new InetSocketAddress(PeerRpcType.host(p), PeerRpcType.port(p));
        try {
            this.listening = ServerSocketChannel.open();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public RpcType getRpcType() {
        return PeerRpcType.INSTANCE;
    }

    /** Listens (a taken address fails here, with the address and the reason) and starts accepting. */
    @Override
    public void start() throws IOException {
        try {
            listening.bind(address);
        } catch (IOException e) {
            throw new IOException("cannot listen for Raft peers on " + address.getHostString() + ":" + address.getPort() + ": "
                    + e.getMessage(), e);
        }
        Thread t = new Thread(this::acceptAll, server.getId() + "-rpc-accept");
        t.setDaemon(true);
        t.start();
    }

    private void acceptAll() {
        while (!closed) {
            SocketChannel c;
            try {
                c = listening.accept();
            } catch (IOException e) {
                return; // closed
            }
            adopt(c);
        }
    }

    /**
     * Serves connection {@code c}, accepted; one accepted as this server closes is closed here. Otherwise
     * it would outlive the server: a peer's calls on it answered by a closed Raft server ("not in
     * STARTING, RUNNING") and never sent anew, since that answer does not make a caller reconnect, even once
     * a new server listens on the address.
     */
    void adopt(SocketChannel c) {
        try {
            FrameChannel[] self = new FrameChannel[1];
            String from = String.valueOf(c.getRemoteAddress());
            self[0] = new FrameChannel(c, from, server.getId() + "-rpc-from-" + from,
                    f -> dispatch.handle(f, reply -> answer(self[0], reply)), e -> accepted.remove(self[0]));
            accepted.put(self[0], Boolean.TRUE);
            if (closed) { // close() set the flag before it closed what it found in accepted: one of the two closes it
                self[0].close();
            }
            self[0].start(); // a closed one ends at once: its reader releases its selector and leaves accepted
        } catch (IOException e) {
            IOUtils.cleanup(null, c);
        }
    }

    private void answer(FrameChannel to, java.nio.ByteBuffer reply) {
        try {
            to.write(reply, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(requestTimeoutMs));
        } catch (IOException e) {
            // the connection is closed: the caller's call fails and is made again
        }
    }

    @Override
    public InetSocketAddress getInetSocketAddress() {
        try {
            InetSocketAddress bound = (InetSocketAddress) listening.getLocalAddress();
            return bound != null ? bound : address;
        } catch (IOException e) {
            return address;
        }
    }

    @Override
    public void addRaftPeers(Collection<RaftPeer> ps) {
        peers.addPeers(ps);
    }

    @Override
    public void handleException(RaftPeerId serverId, Exception e, boolean reconnect) {
        if (reconnect || IOUtils.shouldReconnect(e)) { // as Ratis's own proxies: a timeout too opens another
            peers.reset(serverId);
        }
    }

    @Override
    public RequestVoteReplyProto requestVote(RequestVoteRequestProto r) throws IOException {
        return get(call(r.getServerRequest().getReplyId(), RpcFrame.VOTE, r), RequestVoteReplyProto.parser());
    }

    @Override
    public AppendEntriesReplyProto appendEntries(AppendEntriesRequestProto r) throws IOException {
        return get(call(r.getServerRequest().getReplyId(), RpcFrame.APPEND, r), AppendEntriesReplyProto.parser());
    }

    @Override
    public InstallSnapshotReplyProto installSnapshot(InstallSnapshotRequestProto r) throws IOException {
        return get(call(r.getServerRequest().getReplyId(), RpcFrame.INSTALL_SNAPSHOT, r), InstallSnapshotReplyProto.parser());
    }

    @Override
    public StartLeaderElectionReplyProto startLeaderElection(StartLeaderElectionRequestProto r) throws IOException {
        return get(call(r.getServerRequest().getReplyId(), RpcFrame.START_ELECTION, r), StartLeaderElectionReplyProto.parser());
    }

    @Override
    public RaftServerAsynchronousProtocol async() {
        return async;
    }

    /** This peer's asynchronous calls to the others: appends and read-index questions. */
    private final RaftServerAsynchronousProtocol async = new RaftServerAsynchronousProtocol() {
        @Override
        public CompletableFuture<AppendEntriesReplyProto> appendEntriesAsync(AppendEntriesRequestProto r) {
            return call(r.getServerRequest().getReplyId(), RpcFrame.APPEND, r)
                    .thenApply(f -> PeerRpcDispatch.parse(f, AppendEntriesReplyProto.parser()));
        }

        @Override
        public CompletableFuture<ReadIndexReplyProto> readIndexAsync(ReadIndexRequestProto r) {
            return call(r.getServerRequest().getReplyId(), RpcFrame.READ_INDEX, r)
                    .thenApply(f -> PeerRpcDispatch.parse(f, ReadIndexReplyProto.parser()));
        }
    };

    private CompletableFuture<RpcFrame> call(org.apache.ratis.thirdparty.com.google.protobuf.ByteString to, byte kind,
            MessageLite body) {
        return peers.call(RaftPeerId.valueOf(to), kind, body, requestTimeoutMs);
    }

    private static <T> T get(CompletableFuture<RpcFrame> f,
            org.apache.ratis.thirdparty.com.google.protobuf.Parser<T> parser) throws IOException {
        try {
            return f.get().body(parser);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw IOUtils.toInterruptedIOException("interrupted waiting for a peer's reply", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw IOUtils.asIOException(e.getCause());
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listening.close();
        accepted.keySet().forEach(FrameChannel::close);
        peers.close();
        blocking.shutdownNow();
    }
}
