package io.pistore.replication.raft;

import io.pistore.replication.ReplicationSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** {@link SnapshotCatchUpTest} with the peers on pistore's own RPC: snapshots shipped in chunks over it. */
class SnapshotCatchUpOverPeerRpcTest extends SnapshotCatchUpTest {
    @BeforeAll
    static void peerRpc() {
        System.setProperty(ReplicationSettings.PEER_RPC_PROPERTY, "pistore");
    }

    @AfterAll
    static void grpcAgain() {
        System.clearProperty(ReplicationSettings.PEER_RPC_PROPERTY);
    }
}
