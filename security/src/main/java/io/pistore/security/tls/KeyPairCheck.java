package io.pistore.security.tls;

import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;

/**
 * Checks that a private key belongs to a certificate by signing a random message with the key and
 * verifying it with the certificate's public key: one test for every key type, where comparing key
 * numbers would need one per algorithm.
 */
final class KeyPairCheck {
    private KeyPairCheck() {
    }

    static void check(PrivateKey key, Path keyFile, X509Certificate cert, Path certFile) {
        PublicKey pub = cert.getPublicKey();
        if (!pub.getAlgorithm().equals(key.getAlgorithm())) {
            throw mismatch(keyFile, certFile, key.getAlgorithm() + " key, " + pub.getAlgorithm() + " certificate");
        }
        String alg = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "RSASSA-PSS" -> null;
            default -> key.getAlgorithm(); // Ed25519, Ed448: the algorithm is its own signature
        };
        if (alg == null) {
            return; // PSS keys need parameters to sign with; the handshake proves them
        }
        byte[] message = new byte[32];
        new SecureRandom().nextBytes(message);
        try {
            Signature s = Signature.getInstance(alg);
            s.initSign(key);
            s.update(message);
            byte[] sig = s.sign();
            Signature v = Signature.getInstance(alg);
            v.initVerify(pub);
            v.update(message);
            if (!v.verify(sig)) {
                throw mismatch(keyFile, certFile, "the key's signature does not verify with the certificate");
            }
        } catch (GeneralSecurityException e) {
            throw mismatch(keyFile, certFile, e.getMessage());
        }
    }

    private static TlsFileException mismatch(Path keyFile, Path certFile, String why) {
        return new TlsFileException("private key " + keyFile + " does not match certificate " + certFile + " (" + why + ")");
    }
}
