package io.pistore.replication.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.replication.ThreePeers;
import io.pistore.replication.node.ReplicaNode;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A connection the peer RPC server accepted as it closed does not outlive it: otherwise a peer's calls on
 * it were answered by the closed Raft server for good, even once a new server listened on the address.
 */
class PeerRpcServerCloseTest {
    @TempDir
    Path dir;

    @Test
    void aConnectionAcceptedAsTheServerClosesIsClosed() throws Exception {
        try (ReplicaNode node = ReplicaNode.start("a", "127.0.0.1", 0, dir, ThreePeers.SETTINGS, s -> { })) {
            assertTrue(node.server().getServerRpc() instanceof PeerRpcServer, "the peers' RPC is pistore's own");
            PeerRpcServer rpc = (PeerRpcServer) node.server().getServerRpc();
            try (ServerSocketChannel l = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
                 SocketChannel caller = SocketChannel.open(l.getLocalAddress())) {
                SocketChannel accepted = l.accept(); // as the server's accept loop got it, just before close
                rpc.close();
                rpc.adopt(accepted); // ... and went on with it just after
                caller.socket().setSoTimeout(10_000);
                InputStream in = caller.socket().getInputStream();
                assertEquals(-1, in.read(), "the caller sees the connection end (a timeout here: it was served on)");
            }
        }
    }
}
