package io.pistore.app.cli.serve;

import io.pistore.app.cli.CliException;
import io.pistore.security.tls.PskKeys;
import io.pistore.security.tls.TlsContext;
import io.pistore.security.tls.TlsEngine;
import io.pistore.security.tls.TlsFileException;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The server's TLS material (docs/SECURITY.md): its certificate and key, the CA bundle that client
 * certificates must chain to, and whether clients must show one; or, for NBD, a file of pre-shared
 * keys instead; and which engine runs the records. Loaded and checked when serve starts, so a bad file stops it with one line instead
 * of failing each client's handshake.
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

    @Option(names = "--tls-psk", paramLabel = "FILE",
            description = "Pre-shared keys for NBD TLS instead of a certificate: IDENTITY:HEXKEY lines as psktool "
                    + "writes them; with it, NBD requires TLS unless --nbd-tls says otherwise (config key: tls-psk).")
    Path psk;

    @Option(names = "--tls-engine", paramLabel = "auto|openssl|jdk",
            description = "What encrypts TLS records with certificates, on NBD and on the tcp transport (unless "
                    + "tcp.tlsEngine is set): openssl (BoringSSL, native), jdk, or auto, openssl where its library "
                    + "loads and jdk elsewhere (default: auto; pre-shared keys always run on Bouncy Castle; config key: "
                    + "tls-engine).")
    String engine;

    /** --tls-engine, or null when not given. */
    TlsEngine engine() {
        if (engine == null) {
            return null;
        }
        try {
            return TlsEngine.parse(engine);
        } catch (IllegalArgumentException e) {
            throw CliException.usage("--tls-engine: " + e.getMessage());
        }
    }

    boolean given() {
        return cert != null || key != null;
    }

    /** The loaded pre-shared keys, or null without --tls-psk. */
    PskKeys pskKeys() {
        if (psk == null) {
            return null;
        }
        if (given() || ca != null || verifyClient) {
            throw CliException.usage("--tls-psk replaces --tls-cert, --tls-key, --tls-ca and --tls-verify-client: "
                    + "give pre-shared keys or certificates, not both");
        }
        try {
            return PskKeys.read(psk);
        } catch (TlsFileException e) {
            throw CliException.usage(e.getMessage());
        }
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
            TlsEngine e = engine();
            return TlsContext.server(cert, key, ca, verifyClient, e == null ? TlsEngine.AUTO : e);
        } catch (TlsFileException e) {
            throw CliException.usage(e.getMessage());
        }
    }
}
