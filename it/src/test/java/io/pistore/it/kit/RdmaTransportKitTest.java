package io.pistore.it.kit;

/** The compatibility kit over the rdma transport with the soft verbs provider (integrity MRs where the format allows). */
class RdmaTransportKitTest extends TransportCompatibilityKit {
    static {
        System.setProperty("rdma.provider", "soft");
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
