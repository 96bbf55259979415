package io.pistore.security.tls;

import java.io.IOException;
import java.net.Socket;
import java.security.SecureRandom;
import java.util.Vector;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.PSKTlsClient;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.TlsClientProtocol;
import org.bouncycastle.tls.TlsPSKExternal;
import org.bouncycastle.tls.crypto.TlsCrypto;
import org.bouncycastle.tls.crypto.impl.jcajce.JcaTlsCryptoProvider;

/**
 * A blocking TLS-PSK client for tests (Bouncy Castle's, as the server is, but with the client
 * behaviour GnuTLS shows): TLS 1.3 with an external PSK bound to SHA-256, or TLS 1.2 with a
 * DHE-PSK or ECDHE-PSK suite. Shared with the modules that test TLS through the test jar.
 */
public final class PskTestClient extends PSKTlsClient {
    private static final TlsCrypto CRYPTO = new JcaTlsCryptoProvider().create(new SecureRandom());

    private final byte[] identity;
    private final byte[] key;
    private final boolean tls13;
    private final int suite;

    private PskTestClient(String identity, byte[] key, boolean tls13, int suite) {
        super(CRYPTO, identity.getBytes(java.nio.charset.StandardCharsets.UTF_8), key);
        this.identity = identity.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        this.key = key.clone();
        this.tls13 = tls13;
        this.suite = suite;
    }

    /** TLS 1.3, psk_dhe_ke, TLS_AES_128_GCM_SHA256. */
    public static PskTestClient tls13(String identity, byte[] key) {
        return new PskTestClient(identity, key, true, CipherSuite.TLS_AES_128_GCM_SHA256);
    }

    /** TLS 1.2 with one (EC)DHE-PSK suite ({@link CipherSuite} constant). */
    public static PskTestClient tls12(String identity, byte[] key, int suite) {
        return new PskTestClient(identity, key, false, suite);
    }

    /** Runs the handshake over a connected socket (after any plaintext the protocol needs first). */
    public TlsClientProtocol connect(Socket s) throws IOException {
        TlsClientProtocol p = new TlsClientProtocol(s.getInputStream(), s.getOutputStream());
        p.connect(this);
        return p;
    }

    @Override
    protected ProtocolVersion[] getSupportedVersions() {
        return tls13 ? ProtocolVersion.TLSv13.only() : ProtocolVersion.TLSv12.only();
    }

    @Override
    protected int[] getSupportedCipherSuites() {
        return new int[] {suite};
    }

    @Override
    public Vector getExternalPSKs() {
        if (!tls13) {
            return null;
        }
        Vector<TlsPSKExternal> v = new Vector<>();
        v.add(new BasicTlsPSKExternal(identity, getCrypto().createSecret(key), PRFAlgorithm.tls13_hkdf_sha256));
        return v;
    }
}
