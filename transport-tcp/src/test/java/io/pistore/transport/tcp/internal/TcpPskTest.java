package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.security.access.AccessRules;
import io.pistore.security.tls.TlsFileException;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportOptions;
import io.pistore.transport.tcp.TcpConfig;
import io.pistore.transport.tcp.TcpTls;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS with pre-shared keys on the tcp transport (tcp.tlsPsk), over loopback: a host that holds a key
 * the target knows reads and writes; an unknown identity and a wrong key are refused with a line
 * on each side that names the identity; access rules name hosts by PSK identity; and the settings
 * that do not go together are refused when read.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpPskTest {
    private static final String ALICE = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
    private static final String BOB = "0f0e0d0c0b0a09080706050403020100";

    @TempDir
    Path dir;

    TcpTransport target;
    TargetListener listener;
    TcpAccessTest.VolumesHandler handler;
    LogCapture log;
    final List<TcpTransport> hosts = new ArrayList<>();

    /** A key file open to its owner alone, as a key file must be. */
    Path keys(String name, String... lines) throws IOException {
        Path p = dir.resolve(name);
        Files.write(p, List.of(lines));
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rw-------"));
        return p;
    }

    @BeforeEach
    void start() throws Exception {
        log = new LogCapture();
        TcpConfig cfg = TcpConfig.defaults();
        cfg.reconnect = false;
        cfg.tls = TcpTls.psk(keys("target.psk", "alice:" + ALICE, "bob:" + BOB, "carol:" + BOB), null);
        cfg.access = AccessRules.parse(List.of("alice a,b rw", "bob b ro"), "test");
        target = new TcpTransport(cfg);
        handler = new TcpAccessTest.VolumesHandler("a", "b");
        listener = target.listen("127.0.0.1:0", handler);
    }

    @AfterEach
    void stop() {
        hosts.forEach(TcpTransport::close);
        target.close();
        log.close();
    }

    HostConnection connect(String identity, String key) throws IOException {
        return TcpAccessTest.connect(TcpTls.psk(keys(identity + "-" + key.length() + ".psk", identity + ":" + key), null),
                listener, hosts);
    }

    static Completion submit(HostConnection c, BlockRequest r) throws Exception {
        return TcpAccessTest.submit(c, r);
    }

    @Test
    void aHostWithAKeyTheTargetKnowsWritesAndReadsWhatItsIdentityIsGranted() throws Exception {
        try (HostConnection c = connect("alice", ALICE)) {
            assertEquals(List.of("a", "b"), TcpAccessTest.names(c));
            byte[] d = TcpAccessTest.random(1);
            assertEquals(Status.SUCCESS, submit(c, TcpAccessTest.write("b", 3, d)).status());
            assertArrayEquals(d, TcpAccessTest.read(c, "b", 3));
        }
        try (HostConnection c = connect("bob", BOB)) {
            assertEquals(List.of("b"), TcpAccessTest.names(c));
            Completion w = submit(c, TcpAccessTest.write("b", 3, TcpAccessTest.random(2)));
            assertEquals(Status.ACCESS_DENIED, w.status(), w.toString());
            assertEquals("volume b is read-only to bob", w.message());
        }
        try (HostConnection c = connect("carol", BOB)) {
            assertEquals(List.of(), TcpAccessTest.names(c), "a key without a rule: no volume");
        }
    }

    @Test
    void anUnknownIdentityAndAWrongKeyAreRefusedByNameOnBothSides() throws Exception {
        IOException unknown = assertThrows(IOException.class, () -> connect("mallory", ALICE));
        assertTrue(unknown.getMessage().contains("the target refused PSK identity 'mallory'"), unknown.getMessage());
        assertNotNull(log.awaitWarning(5000, "unknown PSK identity 'mallory'"), log.warnings().toString());
        String wrong = ALICE.replace('0', '1');
        IOException bad = assertThrows(IOException.class, () -> connect("alice", wrong));
        assertTrue(bad.getMessage().contains("the target has another key for PSK identity 'alice'"), bad.getMessage());
        assertNotNull(log.awaitWarning(5000, "wrong key for PSK identity 'alice'"), log.warnings().toString());
        assertTrue(handler.requests.isEmpty(), "nothing reached the handler: " + handler.requests);
    }

    @Test
    void aHostWithoutTlsIsTurnedAwayWithTheLikelyCause() throws Exception {
        TcpConfig plain = TcpConfig.defaults();
        plain.reconnect = false;
        TcpTransport p = new TcpTransport(plain);
        hosts.add(p);
        IOException e = assertThrows(IOException.class, () -> p.connect(listener.address(), new ConnectOptions(1, 4)));
        assertTrue(e.getMessage().contains("set tcp.tls=true here too"), e.getMessage());
        assertNotNull(log.awaitWarning(5000, "the peer does not speak TLS (a plaintext peer"), log.warnings().toString());
    }

    @Test
    void aHostWhoseFileHoldsSeveralIdentitiesNamesTheOneItOffers() throws Exception {
        Path several = keys("several.psk", "bob:" + BOB, "alice:" + ALICE);
        IOException e = assertThrows(IOException.class, () -> TcpAccessTest.connect(TcpTls.psk(several, null), listener,
                hosts));
        assertTrue(e.getMessage().contains("tcp.tlsPskIdentity names the one this host offers"), e.getMessage());
        TcpConfig named = TcpConfig.from(TransportOptions.of(Map.of("tcp.tls", "true", "tcp.tlsPsk", several.toString(),
                "tcp.tlsPskIdentity", "alice", "tcp.reconnect", "false")));
        TcpTransport n = new TcpTransport(named);
        hosts.add(n);
        try (HostConnection c = n.connect(listener.address(), new ConnectOptions(1, 4))) {
            assertEquals(List.of("a", "b"), TcpAccessTest.names(c), "alice's volumes");
        }
    }

    @Test
    void settingsThatDoNotGoTogetherAreRefusedWhenRead() throws Exception {
        String file = keys("one.psk", "alice:" + ALICE).toString();
        String[][] bad = {
            {"tcp.tlsPsk", file},
            {"tcp.tls", "true", "tcp.tlsPsk", file, "tcp.tlsCert", file},
            {"tcp.tls", "true", "tcp.tlsPsk", file, "tcp.tlsVerifyClient", "true"},
            {"tcp.tls", "true", "tcp.tlsPskIdentity", "alice"},
        };
        String[] why = {"need tcp.tls=true", "tcp.tlsPsk replaces certificates", "tcp.tlsPsk replaces certificates",
            "tcp.tlsPskIdentity needs tcp.tlsPsk"};
        for (int i = 0; i < bad.length; i++) {
            Map<String, String> m = new java.util.LinkedHashMap<>();
            for (int k = 0; k < bad[i].length; k += 2) {
                m.put(bad[i][k], bad[i][k + 1]);
            }
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> TcpConfig.from(TransportOptions.of(m)), m.toString());
            assertTrue(e.getMessage().contains(why[i]), e.getMessage());
        }
        TlsFileException missing = assertThrows(TlsFileException.class, () -> TcpConfig.from(TransportOptions.of(
                Map.of("tcp.tls", "true", "tcp.tlsPsk", file, "tcp.tlsPskIdentity", "bob"))));
        assertTrue(missing.getMessage().contains("has no identity 'bob'"), missing.getMessage());
        Path open = keys("open.psk", "alice:" + ALICE);
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
        assertThrows(TlsFileException.class, () -> TcpConfig.from(TransportOptions.of(
                Map.of("tcp.tls", "true", "tcp.tlsPsk", open.toString()))), "a key file others can read");
        TcpConfig ok = TcpConfig.from(TransportOptions.of(Map.of("tcp.tls", "true", "tcp.tlsPsk", file,
                "tcp.access", keys("rules", "alice a rw").toString())));
        assertTrue(ok.tls.isPsk() && ok.access != null, "access rules by PSK identity without client certificates");
    }
}
