package io.pistore.transport.tcp.internal;

import io.pistore.security.tls.TlsEngine;

/** {@link TcpAccessTest} with the JDK's TLS engine at both ends (the default is the native one). */
class TcpJdkAccessTest extends TcpAccessTest {
    @Override
    TlsEngine engine() {
        return TlsEngine.JDK;
    }
}
