package io.pistore.replication.raft;

import io.pistore.replication.PeerRpcOn;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link SnapshotCatchUpTest} with the peers on pistore's own RPC: snapshots shipped in chunks over it. */
@ExtendWith(PeerRpcOn.class)
class SnapshotCatchUpOverPeerRpcTest extends SnapshotCatchUpTest {
}
