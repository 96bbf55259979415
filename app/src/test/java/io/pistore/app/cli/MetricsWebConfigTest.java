package io.pistore.app.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.server.metrics.EngineCollector;
import io.pistore.server.metrics.MetricsEndpoint;
import io.pistore.server.metrics.MetricsWebConfig;
import io.pistore.engine.stats.TargetStats;
import io.pistore.security.tls.SelfSigned;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.Base64;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metrics endpoint behind the TLS and basic authentication of a web-config file in the
 * Prometheus exporter toolkit's format: a scrape with the right password over TLS works, one
 * without a password, with a wrong one or without TLS does not; a bad file is one line; serve warns
 * of an endpoint that others can reach without TLS, as it warns of a plaintext NBD listener.
 */
class MetricsWebConfigTest {
    /** bcrypt of "scrape-me", made by {@code htpasswd -nbBC 10 "" scrape-me} (apache2-utils), not by the code under test. */
    private static final String HASH = "$2y$10$ovI60/OzKiTmVxxVBJjpM.TJnLuqJ9H2oS3Eet4mgxDvOwsmBMdau";

    @TempDir
    Path dir;
    private Path cert;

    @BeforeEach
    void pki() throws Exception {
        Path[] made = SelfSigned.create(dir);
        cert = made[0];
    }

    private Path webConfig(String yaml) throws IOException {
        Path f = dir.resolve("web.yml");
        Files.writeString(f, yaml);
        return f;
    }

    private Path tlsAndAuth() throws IOException {
        return webConfig("tls_server_config:\n  cert_file: self-cert.pem\n  key_file: self-key.pem\n"
                + "basic_auth_users:\n  prometheus: " + HASH + "\n");
    }

    private HttpClient client() throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        try (InputStream in = Files.newInputStream(cert)) {
            ks.setCertificateEntry("self", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext c = SSLContext.getInstance("TLS");
        c.init(null, tmf.getTrustManagers(), null);
        return HttpClient.newBuilder().sslContext(c).connectTimeout(Duration.ofSeconds(20)).build();
    }

    private static HttpResponse<String> get(HttpClient c, String url, String user, String password) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
        if (user != null) {
            b.header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString((user + ":" + password).getBytes(StandardCharsets.UTF_8)));
        }
        return c.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aScrapeWithTheRightPasswordOverTlsWorksAndNoOtherDoes() throws Exception {
        MetricsWebConfig web = MetricsWebConfig.read(tlsAndAuth());
        try (MetricsEndpoint m = MetricsEndpoint.start("127.0.0.1:0", new EngineCollector(new TargetStats()), web)) {
            assertTrue(m.url().startsWith("https://127.0.0.1:"), m.url());
            HttpClient c = client();
            HttpResponse<String> ok = get(c, m.url(), "prometheus", "scrape-me");
            assertEquals(200, ok.statusCode(), ok.body());
            assertTrue(ok.body().contains("jvm_memory_used_bytes"), ok.body());
            assertEquals(401, get(c, m.url(), null, null).statusCode(), "no password");
            assertEquals(401, get(c, m.url(), "prometheus", "wrong").statusCode(), "a wrong password");
            assertEquals(401, get(c, m.url(), "someone", "scrape-me").statusCode(), "an unknown user");
            String plain = "http://127.0.0.1:" + m.port() + "/metrics";
            assertThrows(IOException.class, () -> get(HttpClient.newHttpClient(), plain, "prometheus", "scrape-me"),
                    "no plaintext on the TLS port");
        }
    }

    @Test
    void aBadFileIsOneLine() throws Exception {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MetricsWebConfig.read(webConfig("basic_auth_users:\n  prometheus: plain-text-password\n")));
        assertEquals("web config " + dir.resolve("web.yml") + ": the hash of user prometheus is not bcrypt ($2a$, $2b$ "
                + "or $2y$; htpasswd -nbBC 10 \"\" PASSWORD makes one)", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> MetricsWebConfig.read(webConfig("tls_server_config:\n  cert_file: self-cert.pem\n"
                        + "  key_file: self-key.pem\n  min_version: TLS12\n")));
        assertTrue(e.getMessage().endsWith(": tls_server_config.min_version is not supported here (cert_file, "
                + "client_auth_type, client_ca_file, key_file are)"), e.getMessage());
        Files.setPosixFilePermissions(dir.resolve("self-key.pem"), PosixFilePermissions.fromString("rw-r--r--"));
        e = assertThrows(IllegalArgumentException.class, () -> MetricsWebConfig.read(tlsAndAuth()));
        assertEquals("web config " + dir.resolve("web.yml") + ": " + dir.resolve("self-key.pem")
                + " is readable by others (0644): chmod 600 " + dir.resolve("self-key.pem"), e.getMessage());
    }

    @Test
    void serveWarnsOfMetricsOthersCanReachWithoutTls() throws Exception {
        try (ServeThread serve = new ServeThread("serve", "--memory-volume", "m:1MiB", "--transport", "local",
                "--listen", "metrics-warning-test", "--metrics", "0.0.0.0:0")) {
            serve.awaitOutput(o -> o.contains("\n  m "));
            assertTrue(serve.err().matches("pistore serve: warning: metrics on every address port \\d+ accepts clients "
                    + "without TLS: anyone who can reach it reads every volume's name and figures "
                    + "\\(see docs/SECURITY\\.md\\)\\n"), serve.err());
            assertEquals(0, serve.stop());
        }
        try (ServeThread serve = new ServeThread("serve", "--memory-volume", "m:1MiB", "--transport", "local",
                "--listen", "metrics-warning-test", "--metrics", "0.0.0.0:0", "--metrics-web-config",
                tlsAndAuth().toString())) {
            serve.awaitOutput(o -> o.contains("\n  m "));
            assertTrue(serve.out().contains("pistore serve: metrics at https://0.0.0.0:"), serve.out());
            assertFalse(serve.err().contains("warning"), serve.err());
            assertEquals(0, serve.stop());
        }
    }
}
