package io.pistore.security.tls;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate ({@code CN=localhost}) and its key as PEM files, made with the JDK's own
 * keytool, for tests that need valid TLS files but no CA and must not depend on openssl.
 */
public final class SelfSigned {
    private SelfSigned() {
    }

    /** Writes {@code self-cert.pem} and {@code self-key.pem} into {@code dir}; returns {cert, key}. */
    public static Path[] create(Path dir) throws IOException, InterruptedException, GeneralSecurityException {
        Files.createDirectories(dir);
        Path store = dir.resolve("self.p12");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process p = new ProcessBuilder(List.of(keytool, "-genkeypair", "-keystore", store.toString(), "-storetype",
                "PKCS12", "-storepass", "changeit", "-alias", "self", "-keyalg", "EC", "-dname", "CN=localhost",
                "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2")).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool failed: " + out);
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, "changeit".toCharArray());
        }
        Key key = ks.getKey("self", "changeit".toCharArray());
        Path cert = dir.resolve("self-cert.pem");
        Path keyFile = dir.resolve("self-key.pem");
        Files.writeString(cert, pem("CERTIFICATE", ks.getCertificate("self").getEncoded()));
        Files.writeString(keyFile, pem("PRIVATE KEY", key.getEncoded()));
        java.nio.file.Files.setPosixFilePermissions(keyFile, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")); // a key file open to others is refused
        return new Path[] {cert, keyFile};
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
