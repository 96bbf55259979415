package io.pistore.transport.tcp.internal;

import io.pistore.security.tls.TestPki;
import io.pistore.security.tls.TlsEngine;
import io.pistore.spi.HostConnection;
import io.pistore.transport.tcp.TcpConfig;
import io.pistore.transport.tcp.TcpTls;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every test of {@link TcpTransportTest} again with TLS 1.3 and client certificates on every
 * connection: frames, digests, PI, ordering and backpressure are the same inside TLS.
 */
class TcpTlsTransportTest extends TcpTransportTest {
    @TempDir
    static Path dir;

    static TestPki pki;

    @BeforeAll
    static void pki() throws Exception {
        pki = TestPki.create(dir, "localhost");
    }

    @Override
    HostConnection start(TcpConfig cfg, int queues, int depth) throws Exception {
        // one certificate for both ends: the client one, made for both uses below
        cfg.tls = tls(engine());
        return super.start(cfg, queues, depth);
    }

    /** The engine of both ends: the default (openssl where it loads; the jdk one runs in TcpTlsJdkKitTest). */
    TlsEngine engine() {
        return TlsEngine.AUTO;
    }

    static TcpTls tls() throws Exception {
        return tls(TlsEngine.AUTO);
    }

    /** Target and host: each presents a certificate of the test CA and checks the other's. */
    static TcpTls tls(TlsEngine engine) throws Exception {
        if (!java.nio.file.Files.exists(pki.dir.resolve("both-cert.pem"))) {
            pki.leaf("both", "/CN=localhost",
                    "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n");
        }
        return TcpTls.load(pki.dir.resolve("both-cert.pem"), pki.dir.resolve("both-key.pem"), pki.ca(), true, engine);
    }
}
