package io.pistore.it.kit;

import io.pistore.spi.TransportOptions;

/**
 * The compatibility kit over the rdma transport with the soft verbs provider: integrity MRs (the
 * emulated signature engine) for 8-byte-tuple formats, software PI for the others.
 */
class RdmaTransportKitTest extends TransportCompatibilityKit {
    @Override
    protected String transportName() {
        return "rdma";
    }

    @Override
    protected TransportOptions transportOptions() {
        return TransportOptions.NONE.with("rdma.provider", "soft").with("rdma.pi", "auto");
    }

    @Override
    protected String listenAddress() {
        return "127.0.0.1:0";
    }
}
