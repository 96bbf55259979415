package io.pistore.security.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Vector;
import org.bouncycastle.tls.AbstractTlsClient;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.TlsAuthentication;
import org.bouncycastle.tls.TlsCredentials;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsServerCertificate;
import org.bouncycastle.tls.TlsUtils;
import org.bouncycastle.tls.crypto.TlsCrypto;
import org.bouncycastle.tls.CertificateRequest;

/**
 * The client side of TLS-PSK as a pistore host speaks it to a pistore target ({@link PskServer}):
 * TLS 1.3 only, one external PSK (identity and key) with a fresh (EC)DHE share ({@code psk_dhe_ke},
 * Bouncy Castle's default, so the session keeps forward secrecy), {@code TLS_AES_128_GCM_SHA256}, the
 * SHA-256 binding the server takes. A server that shows a certificate instead ends the handshake:
 * it did not prove that it holds the key. One instance per connection.
 */
final class PskClient extends AbstractTlsClient {
    private final byte[] identity;
    private final byte[] key;

    PskClient(TlsCrypto crypto, String identity, byte[] key) {
        super(crypto);
        this.identity = identity.getBytes(StandardCharsets.UTF_8);
        this.key = key.clone();
    }

    @Override
    protected ProtocolVersion[] getSupportedVersions() {
        return ProtocolVersion.TLSv13.only();
    }

    @Override
    protected int[] getSupportedCipherSuites() {
        return TlsUtils.getSupportedCipherSuites(getCrypto(), new int[] {CipherSuite.TLS_AES_128_GCM_SHA256});
    }

    @Override
    public Vector getExternalPSKs() {
        Vector<Object> psks = new Vector<>();
        psks.add(new BasicTlsPSKExternal(identity, getCrypto().createSecret(key), PRFAlgorithm.tls13_hkdf_sha256));
        return psks;
    }

    @Override
    public TlsAuthentication getAuthentication() {
        return new TlsAuthentication() {
            @Override
            public void notifyServerCertificate(TlsServerCertificate certificate) throws IOException {
                throw new TlsFatalAlert(AlertDescription.handshake_failure,
                        "the target answered with a certificate, not the pre-shared key");
            }

            @Override
            public TlsCredentials getClientCredentials(CertificateRequest request) {
                return null;
            }
        };
    }

    /** The identity this client offers. */
    String identity() {
        return new String(identity, StandardCharsets.UTF_8);
    }

    /** The agreed protocol, as the JDK names it ({@code TLSv1.3}). */
    String protocolName() {
        return PskServer.versionName(context.getServerVersion());
    }

    /** The agreed cipher suite's IANA name. */
    String cipherSuiteName() {
        return PskServer.suiteName(context.getSecurityParametersConnection().getCipherSuite());
    }
}
