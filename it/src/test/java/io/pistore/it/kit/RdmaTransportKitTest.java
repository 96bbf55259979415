package io.pistore.it.kit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The compatibility kit over the rdma transport with the soft verbs provider: integrity MRs (the
 * emulated signature engine) for 8-byte-tuple formats, software PI for the others.
 */
class RdmaTransportKitTest extends TransportCompatibilityKit {
    @BeforeAll
    static void soft() {
        System.setProperty("rdma.provider", "soft");
        System.setProperty("rdma.pi", "auto");
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
