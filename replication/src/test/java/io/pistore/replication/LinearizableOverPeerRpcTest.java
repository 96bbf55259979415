package io.pistore.replication;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link LinearizableUnderFaultsTest} with the peers on pistore's own RPC: the same history of reads
 * and writes under kills, pauses, transfers and a membership change, checked linearizable.
 */
class LinearizableOverPeerRpcTest extends LinearizableUnderFaultsTest {
    @BeforeAll
    static void peerRpc() {
        System.setProperty(ReplicationSettings.PEER_RPC_PROPERTY, "pistore");
    }

    @AfterAll
    static void grpcAgain() {
        System.clearProperty(ReplicationSettings.PEER_RPC_PROPERTY);
    }
}
