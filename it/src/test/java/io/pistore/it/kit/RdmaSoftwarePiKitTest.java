package io.pistore.it.kit;

import io.pistore.spi.TransportOptions;

/**
 * The kit over rdma(soft) with {@code rdma.pi=cpu}: the path a DiSNI device (no integrity MR) takes
 * for every format.
 */
class RdmaSoftwarePiKitTest extends RdmaTransportKitTest {
    @Override
    protected TransportOptions transportOptions() {
        return super.transportOptions().with("rdma.pi", "cpu");
    }

    @Override
    protected boolean offloaded(String vol) {
        return false;
    }
}
