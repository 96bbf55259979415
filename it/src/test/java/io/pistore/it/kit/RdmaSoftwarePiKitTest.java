package io.pistore.it.kit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The kit over rdma(soft) with {@code rdma.pi=cpu}: the path a DiSNI device (no integrity MR) takes for every format. */
class RdmaSoftwarePiKitTest extends TransportCompatibilityKit {
    @BeforeAll
    static void cpu() {
        System.setProperty("rdma.provider", "soft");
        System.setProperty("rdma.pi", "cpu");
    }

    @AfterAll
    static void reset() {
        System.clearProperty("rdma.provider");
        System.clearProperty("rdma.pi");
    }

    @Override
    protected String transportName() {
        return "rdma";
    }

    @Override
    protected String listenAddress() {
        return "127.0.0.1:0";
    }
}
