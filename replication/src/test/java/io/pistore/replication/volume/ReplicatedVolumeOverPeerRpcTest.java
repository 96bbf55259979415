package io.pistore.replication.volume;

import io.pistore.replication.ReplicationSettings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Every case of {@link ReplicatedVolumeTest} (writes, reads, a leader's death, a stopped follower's
 * catch-up, no quorum, COMPARE AND WRITE through two peers) with the peers on pistore's own RPC.
 */
class ReplicatedVolumeOverPeerRpcTest extends ReplicatedVolumeTest {
    @BeforeAll
    static void peerRpc() {
        System.setProperty(ReplicationSettings.PEER_RPC_PROPERTY, "pistore");
    }

    @AfterAll
    static void grpcAgain() {
        System.clearProperty(ReplicationSettings.PEER_RPC_PROPERTY);
    }
}
