package io.pistore.replication.volume;

import io.pistore.replication.GrpcOn;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Every case of {@link ReplicatedVolumeTest} (writes, reads, a leader's death, a stopped follower's
 * catch-up, no quorum, COMPARE AND WRITE through two peers) with the peers on Ratis's gRPC transport.
 */
@ExtendWith(GrpcOn.class)
class ReplicatedVolumeOverGrpcTest extends ReplicatedVolumeTest {
}
