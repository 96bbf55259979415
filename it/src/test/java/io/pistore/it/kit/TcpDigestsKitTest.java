package io.pistore.it.kit;

import io.pistore.spi.TransportOptions;

/** The compatibility kit on tcp with CRC-32C header and data digests negotiated on every queue. */
class TcpDigestsKitTest extends TransportCompatibilityKit {
    @Override
    protected String transportName() {
        return "tcp";
    }

    @Override
    protected TransportOptions transportOptions() {
        return TransportOptions.NONE.with("tcp.headerDigest", "true").with("tcp.dataDigest", "true");
    }

    @Override
    protected String listenAddress() {
        return "127.0.0.1:0";
    }
}
