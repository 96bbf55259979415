package io.pistore.it.kit;

/** The compatibility kit on the TCP transport, host and target in this JVM over loopback. */
class TcpTransportKitTest extends TransportCompatibilityKit {
    @Override
    protected String transportName() {
        return "tcp";
    }

    @Override
    protected String listenAddress() {
        return "127.0.0.1:0";
    }
}
