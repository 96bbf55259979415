package io.pistore.replication.volume;

import java.io.IOException;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.ClientFactory;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientRpc;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * A client RPC whose reconnects run on a thread of their own, so that a request is sent again at once.
 *
 * <p>When a request to a peer times out (a frozen leader), Ratis's client drops its connection to
 * that peer: the gRPC channel is shut down and waited for, up to seconds, because calls still hang on
 * it, and this happens on the client's timer thread before the request is sent again to the next
 * leader. A follower forwarding writes to a frozen leader would hold each one that long beyond the
 * attempt time, and behind it every later entry of the volume. Here the drop is handed to another
 * thread and the retry goes out at once. The connection map itself is unchanged: a request sent to the
 * dropped peer meanwhile waits for the drop to end, as before (Ratis holds its reset lock).
 */
final class DetachedReconnectRpc implements RaftClientRpc {
    /** Reconnects of every client in this JVM; rare, each may block for seconds. */
    private static final ExecutorService RECONNECTS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "pistore-ratis-reconnect");
        t.setDaemon(true);
        return t;
    });

    private final RaftClientRpc rpc;
    private final ExecutorService reconnects;

    DetachedReconnectRpc(RaftClientRpc rpc, ExecutorService reconnects) {
        this.rpc = rpc;
        this.reconnects = reconnects;
    }

    /** A builder of a client whose RPC (the one {@code properties} name) reconnects on its own thread. */
    static RaftClient.Builder newClient(RaftProperties properties) {
        ClientId id = ClientId.randomId();
        RaftClientRpc rpc = ClientFactory.cast(RaftConfigKeys.Rpc.type(properties, s -> { })
                .newFactory(new Parameters())).newRaftClientRpc(id, properties);
        return RaftClient.newBuilder().setClientId(id).setProperties(properties)
                .setClientRpc(new DetachedReconnectRpc(rpc, RECONNECTS));
    }

    @Override
    public CompletableFuture<RaftClientReply> sendRequestAsync(RaftClientRequest request) {
        return rpc.sendRequestAsync(request);
    }

    @Override
    public CompletableFuture<RaftClientReply> sendRequestAsyncUnordered(RaftClientRequest request) {
        return rpc.sendRequestAsyncUnordered(request);
    }

    @Override
    public RaftClientReply sendRequest(RaftClientRequest request) throws IOException {
        return rpc.sendRequest(request);
    }

    @Override
    public void addRaftPeers(Collection<RaftPeer> peers) {
        rpc.addRaftPeers(peers);
    }

    @Override
    public boolean shouldReconnect(Throwable t) {
        return rpc.shouldReconnect(t);
    }

    /** Whether the connection to {@code server} is dropped; the drop itself happens on another thread. */
    @Override
    public boolean handleException(RaftPeerId server, Throwable t, boolean reconnect) {
        if (!reconnect && !rpc.shouldReconnect(t)) {
            return false;
        }
        reconnects.execute(() -> rpc.handleException(server, t, reconnect));
        return true;
    }

    /**
     * The calling peer learned that {@code leader} leads (null: none known): if {@code client} still
     * takes another peer for the leader, its connection to that peer is dropped, which fails the
     * requests waiting there and has the client send them again at once (the same call ids) to whoever
     * leads. Without this, a write forwarded to a leader that froze waited out the attempt time
     * although this peer knew of the next leader an election timeout after the freeze.
     */
    static void leaderChanged(RaftClient client, RaftPeerId leader) {
        RaftPeerId old = client.getLeaderId();
        if (leader != null && old != null && !old.equals(leader)) {
            client.getClientRpc().handleException(old, new IOException(leader + " leads now, not " + old), true);
        }
    }

    @Override
    public void close() throws IOException {
        rpc.close();
    }
}
