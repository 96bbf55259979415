package io.pistore.app.cli;

import io.pistore.runtime.tls.TlsContext;
import io.pistore.runtime.tls.TlsFileException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The server's TLS material (docs/SECURITY.md): its certificate and key, the CA bundle that client
 * certificates must chain to, and whether clients must show one. Loaded and checked when serve
 * starts, so a bad file stops it with one line instead of failing each client's handshake.
 */
final class TlsOptions {
    @Option(names = "--tls-cert", paramLabel = "FILE",
            description = "Server certificate chain (PEM) for TLS; with it, NBD requires TLS unless --nbd-tls "
                    + "says otherwise (config key: tls-cert).")
    Path cert;

    @Option(names = "--tls-key", paramLabel = "FILE",
            description = "Private key of --tls-cert (PEM, PKCS#8 or PKCS#1 RSA, unencrypted; config key: tls-key).")
    Path key;

    @Option(names = "--tls-ca", paramLabel = "FILE",
            description = "CA bundle (PEM) that client certificates must chain to (config key: tls-ca).")
    Path ca;

    @Option(names = "--tls-verify-client",
            description = "Accept only TLS clients with a certificate that chains to --tls-ca (mutual TLS; config key: "
                    + "tls-verify-client).")
    boolean verifyClient;

    boolean given() {
        return cert != null || key != null;
    }

    /** The loaded server context, or null when no certificate was given. */
    TlsContext serverContext() {
        if (!given()) {
            if (ca != null || verifyClient) {
                throw CliException.usage("--tls-ca and --tls-verify-client need --tls-cert and --tls-key");
            }
            return null;
        }
        if (cert == null || key == null) {
            throw CliException.usage("TLS needs both --tls-cert and --tls-key");
        }
        try {
            return TlsContext.server(cert, key, ca, verifyClient);
        } catch (TlsFileException e) {
            throw CliException.usage(e.getMessage());
        }
    }
}
