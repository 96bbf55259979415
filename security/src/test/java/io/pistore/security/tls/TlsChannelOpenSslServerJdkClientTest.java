package io.pistore.security.tls;

import org.junit.jupiter.api.BeforeAll;

/** {@link TlsChannelTest} with a server on the openssl engine and a client on the jdk engine. */
class TlsChannelOpenSslServerJdkClientTest extends TlsChannelTest {
    @BeforeAll
    static void openSsl() {
        assumeOpenSsl();
    }

    @Override
    TlsEngine serverEngine() {
        return TlsEngine.OPENSSL;
    }

    @Override
    TlsEngine clientEngine() {
        return TlsEngine.JDK;
    }
}
