package io.pistore.security.tls;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Vector;
import org.bouncycastle.tls.AlertDescription;
import org.bouncycastle.tls.BasicTlsPSKExternal;
import org.bouncycastle.tls.CipherSuite;
import org.bouncycastle.tls.PRFAlgorithm;
import org.bouncycastle.tls.PSKTlsServer;
import org.bouncycastle.tls.ProtocolVersion;
import org.bouncycastle.tls.PskIdentity;
import org.bouncycastle.tls.TlsCredentials;
import org.bouncycastle.tls.TlsFatalAlert;
import org.bouncycastle.tls.TlsPSKExternal;
import org.bouncycastle.tls.TlsPSKIdentityManager;
import org.bouncycastle.tls.TlsUtils;
import org.bouncycastle.tls.crypto.TlsCrypto;

/**
 * The server side of TLS-PSK as GnuTLS clients (libnbd's {@code tls-psk-file}, qemu's
 * {@code tls-creds-psk}) speak it: TLS 1.3 with an external PSK and a fresh (EC)DHE share
 * ({@code psk_dhe_ke}), or TLS 1.2 with the DHE-PSK AES-GCM suites. Both keep forward secrecy;
 * plain-PSK suites (no DHE) are not offered. One instance per connection: it remembers which
 * identity the client named so that a failed handshake can say whose.
 */
final class PskServer extends PSKTlsServer {
    /**
     * In this server's order of preference, which wins over the client's. TLS 1.3: only the
     * SHA-256 suite, because GnuTLS binds an external PSK to SHA-256 (a SHA-384 suite cannot use
     * it). AES-GCM only: the record crypto is the JDK's, which Bouncy Castle's JCA layer does not
     * find ChaCha20-Poly1305 in, and AES-GCM is the fast one with the CPU's AES instructions.
     * TLS 1.2: DHE-PSK with AES-GCM, which GnuTLS offers ({@code +DHE-PSK}); no ECDHE-PSK suite
     * with AES-GCM exists in both.
     */
    static final int[] SUITES = {
        CipherSuite.TLS_AES_128_GCM_SHA256,
        CipherSuite.TLS_DHE_PSK_WITH_AES_128_GCM_SHA256,
        CipherSuite.TLS_DHE_PSK_WITH_AES_256_GCM_SHA384,
    };

    /** Finds TLS 1.2 keys by identity and notes the identity asked for. */
    private static final class Lookup implements TlsPSKIdentityManager {
        private final PskKeys keys;
        String asked;
        boolean known;

        Lookup(PskKeys keys) {
            this.keys = keys;
        }

        @Override
        public byte[] getHint() {
            return null;
        }

        @Override
        public byte[] getPSK(byte[] identity) {
            asked = new String(identity, StandardCharsets.UTF_8);
            byte[] k = keys.key(asked);
            known = k != null;
            return k;
        }
    }

    private final Lookup lookup;
    private boolean sawClientHello;

    PskServer(TlsCrypto crypto, PskKeys keys) {
        this(crypto, new Lookup(keys));
    }

    private PskServer(TlsCrypto crypto, Lookup lookup) {
        super(crypto, lookup);
        this.lookup = lookup;
    }

    @Override
    protected ProtocolVersion[] getSupportedVersions() {
        return ProtocolVersion.TLSv13.downTo(ProtocolVersion.TLSv12);
    }

    @Override
    protected int[] getSupportedCipherSuites() {
        return TlsUtils.getSupportedCipherSuites(getCrypto(), SUITES);
    }

    @Override
    protected boolean preferLocalCipherSuites() {
        return true;
    }

    @Override
    public void notifyClientVersion(ProtocolVersion clientVersion) throws IOException {
        sawClientHello = true;
        super.notifyClientVersion(clientVersion);
    }

    /** TLS 1.3: the first offered identity this server has a key for (binder checked by the caller). */
    @Override
    public TlsPSKExternal getExternalPSK(Vector identities) {
        for (Object o : identities) {
            byte[] id = ((PskIdentity) o).getIdentity();
            String name = new String(id, StandardCharsets.UTF_8);
            byte[] k = lookup.keys.key(name);
            if (k != null) {
                lookup.asked = name;
                lookup.known = true;
                return new BasicTlsPSKExternal(id, getCrypto().createSecret(k), PRFAlgorithm.tls13_hkdf_sha256);
            }
        }
        if (!identities.isEmpty()) {
            lookup.asked = new String(((PskIdentity) identities.get(0)).getIdentity(), StandardCharsets.UTF_8);
        }
        return null;
    }

    /**
     * Asked only when no pre-shared key was agreed: TLS 1.3 would go on with a certificate, which
     * this server does not have, so the handshake ends here with the reason.
     */
    @Override
    public TlsCredentials getCredentials() throws IOException {
        if (ProtocolVersion.TLSv13.equals(context.getServerVersion())) {
            throw new TlsFatalAlert(AlertDescription.handshake_failure, lookup.asked == null
                    ? "the client offered no pre-shared key" : "unknown PSK identity '" + lookup.asked + "'");
        }
        return super.getCredentials();
    }

    /** The identity the client named (known or not), or null before it named one. */
    String askedIdentity() {
        return lookup.asked;
    }

    /** Whether the identity the client named has a key here. */
    boolean identityKnown() {
        return lookup.known;
    }

    boolean sawClientHello() {
        return sawClientHello;
    }

    /** The agreed protocol, as the JDK names it ({@code TLSv1.3}). */
    String protocolName() {
        return versionName(context.getServerVersion());
    }

    /** A protocol version as the JDK names it ({@code TLSv1.3}); {@code none} before one is agreed. */
    static String versionName(ProtocolVersion v) {
        return v == null ? "none" : "TLSv1." + (v.getMinorVersion() - 1);
    }

    /** The agreed cipher suite's IANA name. */
    String cipherSuiteName() {
        return suiteName(context.getSecurityParametersConnection().getCipherSuite());
    }

    /** The IANA name of cipher suite {@code s} of {@link #SUITES}, else its number. */
    static String suiteName(int s) {
        switch (s) {
            case CipherSuite.TLS_AES_128_GCM_SHA256:
                return "TLS_AES_128_GCM_SHA256";
            case CipherSuite.TLS_DHE_PSK_WITH_AES_128_GCM_SHA256:
                return "TLS_DHE_PSK_WITH_AES_128_GCM_SHA256";
            case CipherSuite.TLS_DHE_PSK_WITH_AES_256_GCM_SHA384:
                return "TLS_DHE_PSK_WITH_AES_256_GCM_SHA384";
            default:
                return "0x" + Integer.toHexString(s);
        }
    }
}
