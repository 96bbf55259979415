package io.pistore.security.tls;

import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.List;

/**
 * Reads an unencrypted private key from a PEM file: PKCS#8 ({@code BEGIN PRIVATE KEY}, what
 * {@code openssl genpkey} and {@code openssl req -newkey} write) or PKCS#1 RSA
 * ({@code BEGIN RSA PRIVATE KEY}, what {@code certtool} and older openssl write). Anything else
 * is refused with a message that says how to convert it.
 */
final class PemKeys {
    /** DER of AlgorithmIdentifier { rsaEncryption, NULL }. */
    private static final byte[] RSA_ALGORITHM = {
        0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00
    };
    private static final String[] ALGORITHMS = {"RSA", "EC", "Ed25519", "Ed448", "RSASSA-PSS"};

    private PemKeys() {
    }

    static PrivateKey read(Path file) {
        String what = "private key";
        KeyFilePermissions.check(file);
        List<PemBlock> blocks = PemBlock.read(file, what);
        for (PemBlock b : blocks) {
            switch (b.type()) {
                case "PRIVATE KEY":
                    return pkcs8(file, b.der());
                case "RSA PRIVATE KEY":
                    return pkcs8(file, wrapPkcs1(b.der()));
                case "ENCRYPTED PRIVATE KEY":
                    throw new TlsFileException(what + " " + file + " is encrypted; give an unencrypted key "
                            + "(openssl pkey -in KEY -out KEY.plain)");
                case "EC PRIVATE KEY":
                    throw new TlsFileException(what + " " + file + " is a SEC1 EC key; convert it to PKCS#8 "
                            + "(openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8)");
                default:
                    break;
            }
        }
        if (blocks.isEmpty()) {
            throw new TlsFileException(what + " " + file + " is not PEM (expected -----BEGIN PRIVATE KEY-----)");
        }
        throw new TlsFileException(what + " " + file + " holds no private key (found " + blocks.get(0).type() + ")");
    }

    private static PrivateKey pkcs8(Path file, byte[] der) {
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        for (String alg : ALGORITHMS) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(spec);
            } catch (GeneralSecurityException | IllegalArgumentException e) {
                // not this algorithm (or not supported here): try the next
            }
        }
        throw new TlsFileException("private key " + file + " is not an RSA, EC or EdDSA key this JDK can read");
    }

    /** PKCS#8 PrivateKeyInfo { version 0, rsaEncryption, OCTET STRING { the PKCS#1 key } }. */
    private static byte[] wrapPkcs1(byte[] pkcs1) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(new byte[] {0x02, 0x01, 0x00});
        body.writeBytes(RSA_ALGORITHM);
        body.writeBytes(tlv(0x04, pkcs1));
        return tlv(0x30, body.toByteArray());
    }

    private static byte[] tlv(int tag, byte[] value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(tag);
        int n = value.length;
        if (n < 0x80) {
            out.write(n);
        } else {
            int bytes = (32 - Integer.numberOfLeadingZeros(n) + 7) / 8;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write(n >>> (8 * i));
            }
        }
        out.writeBytes(value);
        return out.toByteArray();
    }
}
