package io.pistore.server.metrics;

import com.sun.net.httpserver.BasicAuthenticator;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import io.pistore.security.tls.TlsContext;
import io.pistore.security.tls.TlsEngine;
import io.pistore.security.tls.TlsFileException;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.bouncycastle.crypto.generators.OpenBSDBCrypt;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * The metrics endpoint's TLS and basic authentication, from a file in the format of the Prometheus
 * exporter toolkit's {@code --web.config.file}, so a Prometheus that scrapes other exporters that
 * way scrapes this one unchanged:
 *
 * <pre>
 * tls_server_config:
 *   cert_file: metrics-cert.pem      # relative paths: from the file's directory
 *   key_file: metrics-key.pem
 *   client_ca_file: ca.pem           # optional, with client_auth_type: RequireAndVerifyClientCert
 *   client_auth_type: RequireAndVerifyClientCert
 * basic_auth_users:
 *   prometheus: $2y$10$...           # bcrypt ($2a$, $2b$, $2y$), as htpasswd -B makes it
 * </pre>
 *
 * TLS is 1.3 only, as on every other listener of pistore; the toolkit's cipher and version keys are
 * refused rather than ignored. Either section may be left out. Passwords are checked with Bouncy
 * Castle's {@link OpenBSDBCrypt}; an unknown user costs the same bcrypt check as a known one.
 */
public final class MetricsWebConfig {
    private static final Set<String> TOP = Set.of("tls_server_config", "basic_auth_users");
    private static final Set<String> TLS_KEYS = Set.of("cert_file", "key_file", "client_ca_file", "client_auth_type");
    /** Checked for a user that is not in the file, so that its answer takes as long as a known user's. */
    private static final String UNKNOWN_USER_HASH = OpenBSDBCrypt.generate("2b", new char[] {'x'}, new byte[16], 10);

    private final Path file;
    private final TlsContext tls;
    private final Map<String, String> users;

    private MetricsWebConfig(Path file, TlsContext tls, Map<String, String> users) {
        this.file = file;
        this.tls = tls;
        this.users = users;
    }

    /** Reads and checks {@code file}; any problem is an {@link IllegalArgumentException} with one line. */
    public static MetricsWebConfig read(Path file) {
        Object root;
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            root = new Yaml(new SafeConstructor(new LoaderOptions())).load(r);
        } catch (java.nio.file.NoSuchFileException e) {
            throw new IllegalArgumentException("web config " + file + " does not exist");
        } catch (IOException e) {
            throw new IllegalArgumentException("web config " + file + " is not readable: " + e.getMessage());
        } catch (YAMLException e) {
            throw new IllegalArgumentException("web config " + file + " is not YAML: "
                    + e.getMessage().strip().replaceAll("\\s*\\n\\s*", " "));
        }
        if (root == null) {
            root = Map.of();
        }
        Map<String, Object> top = map(root, file, "the file");
        unknown(top, TOP, file, "");
        TlsContext tls = top.get("tls_server_config") == null ? null
                : tls(map(top.get("tls_server_config"), file, "tls_server_config"), file);
        Map<String, String> users = new LinkedHashMap<>();
        Object u = top.get("basic_auth_users");
        if (u != null) {
            for (Map.Entry<String, Object> e : map(u, file, "basic_auth_users").entrySet()) {
                String hash = String.valueOf(e.getValue());
                if (!bcrypt(hash)) {
                    throw new IllegalArgumentException("web config " + file + ": the hash of user " + e.getKey()
                            + " is not bcrypt ($2a$, $2b$ or $2y$; htpasswd -nbBC 10 \"\" PASSWORD makes one)");
                }
                users.put(e.getKey(), hash);
            }
        }
        return new MetricsWebConfig(file, tls, Map.copyOf(users));
    }

    private static TlsContext tls(Map<String, Object> t, Path file) {
        unknown(t, TLS_KEYS, file, "tls_server_config.");
        Path cert = path(t.get("cert_file"), file);
        Path key = path(t.get("key_file"), file);
        Path ca = path(t.get("client_ca_file"), file);
        Object auth = t.get("client_auth_type");
        boolean verify;
        if (auth == null || auth.equals("NoClientCert")) {
            verify = false;
        } else if (auth.equals("RequireAndVerifyClientCert")) {
            verify = true;
        } else {
            throw new IllegalArgumentException("web config " + file + ": client_auth_type must be NoClientCert or "
                    + "RequireAndVerifyClientCert here, not " + auth);
        }
        if (cert == null || key == null) {
            throw new IllegalArgumentException("web config " + file + ": tls_server_config needs cert_file and key_file");
        }
        try {
            return TlsContext.server(cert, key, ca, verify, TlsEngine.JDK);
        } catch (TlsFileException e) {
            throw new IllegalArgumentException("web config " + file + ": " + e.getMessage());
        }
    }

    private static boolean bcrypt(String hash) {
        if (!hash.startsWith("$2a$") && !hash.startsWith("$2b$") && !hash.startsWith("$2y$")) {
            return false;
        }
        try {
            OpenBSDBCrypt.checkPassword(hash, new char[] {'x'});
            return true;
        } catch (IllegalArgumentException | org.bouncycastle.crypto.DataLengthException e) {
            return false;
        }
    }

    private static Path path(Object v, Path file) {
        if (v == null) {
            return null;
        }
        Path p = Path.of(String.valueOf(v));
        Path dir = file.toAbsolutePath().getParent();
        return p.isAbsolute() || dir == null ? p : dir.resolve(p);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o, Path file, String what) {
        if (!(o instanceof Map)) {
            throw new IllegalArgumentException("web config " + file + ": " + what + " must be a mapping");
        }
        for (Object k : ((Map<Object, Object>) o).keySet()) {
            if (!(k instanceof String)) {
                throw new IllegalArgumentException("web config " + file + ": " + what + " has a key that is not text: " + k);
            }
        }
        return (Map<String, Object>) o;
    }

    private static void unknown(Map<String, Object> m, Set<String> known, Path file, String prefix) {
        for (String k : m.keySet()) {
            if (!known.contains(k)) {
                throw new IllegalArgumentException("web config " + file + ": " + prefix + k + " is not supported here ("
                        + String.join(", ", known.stream().sorted().toList()) + " are)");
            }
        }
    }

    /** Whether it turns TLS on. */
    public boolean tls() {
        return tls != null;
    }

    /** Whether it asks for basic authentication. */
    public boolean authenticates() {
        return !users.isEmpty();
    }

    /** The HTTPS set-up of the endpoint, or null without TLS. */
    HttpsConfigurator httpsConfigurator() {
        if (tls == null) {
            return null;
        }
        return new HttpsConfigurator(tls.jdkContext()) {
            @Override
            public void configure(HttpsParameters params) {
                params.setSSLParameters(tls.jdkServerParameters());
            }
        };
    }

    /** The basic authentication of the endpoint, or null without users. */
    BasicAuthenticator authenticator() {
        if (users.isEmpty()) {
            return null;
        }
        return new BasicAuthenticator("pistore metrics") {
            @Override
            public boolean checkCredentials(String user, String password) {
                String hash = users.get(user);
                boolean ok = OpenBSDBCrypt.checkPassword(hash == null ? UNKNOWN_USER_HASH : hash, password.toCharArray());
                return ok && hash != null;
            }
        };
    }

    /** One line for the start-up banner. */
    @Override
    public String toString() {
        List<String> parts = new java.util.ArrayList<>();
        if (tls != null) {
            parts.add("TLS, " + tls);
        }
        if (!users.isEmpty()) {
            parts.add("basic auth, " + users.size() + " user(s)");
        }
        return (parts.isEmpty() ? "no TLS, no auth" : String.join("; ", parts)) + " (web config " + file + ")";
    }
}
