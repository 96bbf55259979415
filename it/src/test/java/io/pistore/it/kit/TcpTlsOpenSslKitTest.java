package io.pistore.it.kit;

import io.pistore.security.tls.NativeTls;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;

/** The TLS kit on the native engine (Netty's OpenSSL over BoringSSL); skipped, with why, where it cannot load. */
class TcpTlsOpenSslKitTest extends TcpTlsKit {
    @BeforeAll
    static void openSsl() {
        Assumptions.assumeTrue(NativeTls.NETTY.available(),
                () -> "the openssl TLS engine is not available: " + NativeTls.NETTY.unavailabilityCause());
    }

    @Override
    protected String engine() {
        return "openssl";
    }
}
