package io.pistore.frontend.nbd;

import io.pistore.security.tls.TlsEngine;

/** {@link NbdTlsTest} with the server on the JDK's TLS engine (the default is the native one). */
class NbdJdkTlsTest extends NbdTlsTest {
    @Override
    TlsEngine engine() {
        return TlsEngine.JDK;
    }
}
