package io.pistore.it.kit;

/** The compatibility kit on the built-in in-process transport. */
class LocalTransportKitTest extends TransportCompatibilityKit {
    @Override
    protected String transportName() {
        return "local";
    }

    @Override
    protected String listenAddress() {
        return "";
    }
}
