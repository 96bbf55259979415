package io.pistore.replication.raft;

import io.pistore.replication.GrpcOn;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@link SnapshotCatchUpTest} with the peers on Ratis's gRPC transport: snapshots shipped in chunks over it. */
@ExtendWith(GrpcOn.class)
class SnapshotCatchUpOverGrpcTest extends SnapshotCatchUpTest {
}
