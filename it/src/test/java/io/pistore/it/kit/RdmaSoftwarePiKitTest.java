package io.pistore.it.kit;

import org.junit.jupiter.api.BeforeAll;

/**
 * The kit over rdma(soft) with {@code rdma.pi=cpu}: the path a DiSNI device (no integrity MR) takes
 * for every format. The parent sets up the soft provider and clears both properties afterwards.
 */
class RdmaSoftwarePiKitTest extends RdmaTransportKitTest {
    @BeforeAll
    static void cpu() {
        System.setProperty("rdma.pi", "cpu"); // runs after the parent's @BeforeAll
    }
}
