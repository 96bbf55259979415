package io.pistore.it.kit;

import io.pistore.security.tls.TestPki;
import io.pistore.spi.TransportOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The compatibility kit on tcp with mutual TLS 1.3 on every queue (certificates made with openssl
 * for this class; skipped without it), set only through transport settings, as a user sets them.
 * A subclass per TLS engine ({@code tcp.tlsEngine}).
 */
abstract class TcpTlsKit extends TransportCompatibilityKit {
    /** The {@code tcp.tlsEngine} of both ends. */
    protected abstract String engine();

    /** Where the certificates (and a subclass's other key files) are, removed after the class. */
    static Path dir;
    private static TestPki pki;

    @BeforeAll
    static void pki() throws Exception {
        TestPki.assumeOpenssl();
        dir = Files.createTempDirectory("pistore-tls-kit");
        pki = TestPki.create(dir, "host");
        pki.leaf("both", "/CN=localhost",
                "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n");
    }

    @AfterAll
    static void removePki() throws Exception {
        if (dir != null) {
            io.pistore.testkit.TestFiles.deleteTree(dir);
        }
    }

    @Override
    protected String transportName() {
        return "tcp";
    }

    @Override
    protected TransportOptions transportOptions() {
        return TransportOptions.NONE.with("tcp.tls", "true")
                .with("tcp.tlsCert", pki.dir.resolve("both-cert.pem").toString())
                .with("tcp.tlsKey", pki.dir.resolve("both-key.pem").toString())
                .with("tcp.tlsCa", pki.ca().toString())
                .with("tcp.tlsVerifyClient", "true")
                .with("tcp.tlsEngine", engine());
    }

    @Override
    protected String listenAddress() {
        return "127.0.0.1:0";
    }
}
