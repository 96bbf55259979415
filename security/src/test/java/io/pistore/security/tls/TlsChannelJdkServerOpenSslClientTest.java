package io.pistore.security.tls;

import org.junit.jupiter.api.BeforeAll;

/** {@link TlsChannelTest} with a server on the jdk engine and a client on the openssl engine. */
class TlsChannelJdkServerOpenSslClientTest extends TlsChannelTest {
    @BeforeAll
    static void openSsl() {
        assumeOpenSsl();
    }

    @Override
    TlsEngine serverEngine() {
        return TlsEngine.JDK;
    }

    @Override
    TlsEngine clientEngine() {
        return TlsEngine.OPENSSL;
    }
}
