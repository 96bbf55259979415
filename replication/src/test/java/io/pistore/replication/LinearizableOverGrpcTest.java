package io.pistore.replication;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link LinearizableUnderFaultsTest} with the peers on Ratis's gRPC transport (the option the
 * default RPC replaced): the same history of reads and writes under stops and restarts, leadership
 * transfers and membership changes, checked linearizable.
 */
@ExtendWith(GrpcOn.class)
class LinearizableOverGrpcTest extends LinearizableUnderFaultsTest {
}
