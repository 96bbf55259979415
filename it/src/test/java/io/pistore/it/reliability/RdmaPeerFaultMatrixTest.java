package io.pistore.it.reliability;

/** {@link PeerFaultMatrix} with the peers serving hosts over rdma (the soft NIC across processes). */
class RdmaPeerFaultMatrixTest extends PeerFaultMatrix {
    @Override
    String transport() {
        return "rdma";
    }
}
