package io.pistore.it.reliability;

/** {@link PeerFaultMatrix} with the peers serving hosts over tcp. */
class PeerFaultMatrixTest extends PeerFaultMatrix {
    @Override
    String transport() {
        return "tcp";
    }
}
