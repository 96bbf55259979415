package io.pistore.it.kit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The compatibility kit on tcp with CRC-32C header and data digests negotiated on every queue. */
class TcpDigestsKitTest extends TransportCompatibilityKit {
    @BeforeAll
    static void digestsOn() {
        System.setProperty("pistore.tcp.headerDigest", "true");
        System.setProperty("pistore.tcp.dataDigest", "true");
    }

    @AfterAll
    static void digestsOff() {
        System.clearProperty("pistore.tcp.headerDigest");
        System.clearProperty("pistore.tcp.dataDigest");
    }

    @Override
    protected String transportName() {
        return "tcp";
    }

    @Override
    protected String listenAddress() {
        return "127.0.0.1:0";
    }
}
