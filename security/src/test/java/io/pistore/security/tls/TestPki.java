package io.pistore.security.tls;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throwaway CA and certificates made with the {@code openssl} command at test time, in the file
 * names libnbd and qemu look for in a certificate directory: {@code ca-cert.pem},
 * {@code server-cert.pem}, {@code server-key.pem}, {@code client-cert.pem}, {@code client-key.pem}.
 * The server certificate names {@code localhost} and {@code 127.0.0.1}. Tests that need it are
 * skipped when openssl is not installed. Shared with other modules through the test jar.
 */
public final class TestPki {
    public final Path dir;

    private TestPki(Path dir) {
        this.dir = dir;
    }

    public Path ca() {
        return dir.resolve("ca-cert.pem");
    }

    public Path serverCert() {
        return dir.resolve("server-cert.pem");
    }

    public Path serverKey() {
        return dir.resolve("server-key.pem");
    }

    public Path clientCert() {
        return dir.resolve("client-cert.pem");
    }

    public Path clientKey() {
        return dir.resolve("client-key.pem");
    }

    /** Skips the calling test when openssl is missing. */
    public static void assumeOpenssl() {
        assumeTrue(onPath("openssl"), "skipped: openssl is not installed (apt-get install openssl)");
    }

    /** A CA, a server certificate and a client certificate (CN {@code clientCn}) in {@code dir}. */
    public static TestPki create(Path dir, String clientCn) throws IOException, InterruptedException {
        assumeOpenssl();
        Files.createDirectories(dir);
        TestPki p = new TestPki(dir);
        p.openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", "ca-key.pem", "-out", "ca-cert.pem", "-days", "2", "-subj", "/CN=pistore test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        p.leaf("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
        p.leaf("client", "/CN=" + clientCn, "extendedKeyUsage=clientAuth\n");
        return p;
    }

    /** Another certificate and key signed by this CA, {@code NAME-cert.pem} and {@code NAME-key.pem}. */
    public void leaf(String name, String subject, String extensions) throws IOException, InterruptedException {
        Files.writeString(dir.resolve(name + ".ext"), "basicConstraints=CA:FALSE\n" + extensions);
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", name + "-key.pem", "-out", name + ".csr", "-subj", subject);
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca-cert.pem", "-CAkey", "ca-key.pem",
                "-CAcreateserial", "-out", name + "-cert.pem", "-days", "2", "-extfile", name + ".ext");
    }

    /** Runs openssl in the directory; fails with its output when it fails. */
    public void openssl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add("openssl");
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("openssl " + String.join(" ", args) + " failed: " + out);
        }
    }

    /** Whether {@code tool} is an executable on the PATH. */
    public static boolean onPath(String tool) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }
}
