package io.pistore.security.tls;


/** {@link TlsChannelTest} with a server on the jdk engine and a client on the jdk engine. */
class TlsChannelJdkTest extends TlsChannelTest {
    @Override
    TlsEngine serverEngine() {
        return TlsEngine.JDK;
    }

    @Override
    TlsEngine clientEngine() {
        return TlsEngine.JDK;
    }
}
