package io.pistore.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.spi.Availability;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.TransportOption;
import io.pistore.spi.TransportOptions;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The tcp options reach {@link TcpConfig} and the transport through the SPI, checked. */
class TcpConfigTest {
    private final TcpTransportProvider provider = new TcpTransportProvider();

    @org.junit.jupiter.api.io.TempDir
    java.nio.file.Path dir;

    @Test
    void everyOptionSetsItsField() throws Exception {
        java.nio.file.Path[] self = io.pistore.security.tls.SelfSigned.create(dir);
        java.nio.file.Path rules = java.nio.file.Files.writeString(dir.resolve("access"), "alice a rw\nbob * ro\n");
        TransportOptions o = TransportOptions.of(Map.ofEntries(Map.entry("tcp.tls", "true"),
                Map.entry("tcp.tlsCert", self[0].toString()), Map.entry("tcp.tlsKey", self[1].toString()),
                Map.entry("tcp.tlsCa", self[0].toString()), Map.entry("tcp.tlsVerifyClient", "true"), Map.entry("tcp.tlsEngine", "JDK"),
                Map.entry("tcp.ioThreads", "5"),
                Map.entry("tcp.spinMicros", "7"), Map.entry("tcp.pollMicros", "9"), Map.entry("tcp.spinYield", "false"),
                Map.entry("tcp.headerDigest", "true"), Map.entry("tcp.dataDigest", "true"),
                Map.entry("tcp.maxTransfer", "65536"), Map.entry("tcp.requestTimeoutMs", "11"),
                Map.entry("tcp.connectTimeoutMs", "12"), Map.entry("tcp.frameTimeoutMs", "13"),
                Map.entry("tcp.reconnect", "false"), Map.entry("tcp.reconnectDelayMs", "14"),
                Map.entry("tcp.reconnectMaxDelayMs", "15"), Map.entry("tcp.flushFrames", "0"),
                Map.entry("tcp.pathStates", "false"), Map.entry("tcp.access", rules.toString())));
        // every option but tcp.tlsPsk and tcp.tlsPskIdentity, which replace the certificates (TcpPskTest sets them)
        assertEquals(TcpConfig.OPTIONS.size() - 2, o.asMap().size(), "the test sets every option");
        TcpConfig c = TcpConfig.from(o);
        assertEquals("jdk", c.tls.engine());
        assertTrue(c.toString().contains("tls=TLSv1.3 engine=jdk"), c.toString());
        assertEquals(5, c.ioThreads);
        assertEquals(7, c.spinMicros);
        assertEquals(9, c.pollMicros);
        assertFalse(c.spinYield);
        assertTrue(c.headerDigest);
        assertTrue(c.dataDigest);
        assertEquals(65536, c.maxTransferBytes);
        assertEquals(11, c.requestTimeoutMillis);
        assertEquals(12, c.connectTimeoutMillis);
        assertEquals(13, c.frameTimeoutMillis);
        assertFalse(c.reconnect);
        assertEquals(14, c.reconnectDelayMillis);
        assertEquals(15, c.reconnectMaxDelayMillis);
        assertEquals(0, c.flushFrames);
        assertFalse(c.pathStates);
        assertTrue(c.tls.server().requiresClientCertificate());
        assertTrue(c.tls.server().toString().contains("CN=localhost"), c.tls.toString());
        assertEquals(2, c.access.size());
    }

    @Test
    void accessRulesNeedVerifiedClientCertificatesAndAFileThatParses() throws Exception {
        java.nio.file.Path[] self = io.pistore.security.tls.SelfSigned.create(dir);
        java.nio.file.Path good = java.nio.file.Files.writeString(dir.resolve("good"), "alice a rw\n");
        Map<String, String> tls = Map.of("tcp.tls", "true", "tcp.tlsCert", self[0].toString(), "tcp.tlsKey",
                self[1].toString(), "tcp.tlsCa", self[0].toString());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TcpConfig.from(TransportOptions.of(Map.of("tcp.access", good.toString()))));
        assertEquals("tcp.access needs tcp.tls=true with tcp.tlsVerifyClient=true or tcp.tlsPsk", e.getMessage());
        TransportOptions noVerify = TransportOptions.of(tls).with("tcp.access", good.toString());
        e = assertThrows(IllegalArgumentException.class, () -> TcpConfig.from(noVerify));
        assertEquals("tcp.access needs tcp.tls=true with tcp.tlsVerifyClient=true or tcp.tlsPsk", e.getMessage());
        TransportOptions verify = TransportOptions.of(tls).with("tcp.tlsVerifyClient", "true");
        java.nio.file.Path bad = java.nio.file.Files.writeString(dir.resolve("bad"), "alice a rw\nbob b\n");
        e = assertThrows(IllegalArgumentException.class, () -> TcpConfig.from(verify.with("tcp.access", bad.toString())));
        assertEquals("access file " + bad + " line 2: expected CLIENT VOLUMES ro|rw, not 'bob b'", e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> TcpConfig.from(verify.with("tcp.access", dir.resolve("absent").toString())));
        assertTrue(e.getMessage().startsWith("access file " + dir.resolve("absent") + " is not readable"), e.getMessage());
        assertEquals(1, TcpConfig.from(verify.with("tcp.access", good.toString())).access.size());
    }

    @Test
    void tlsFilesWithoutTlsAreAMistake() {
        IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> TcpConfig.from(TransportOptions.of(Map.of("tcp.tlsCert", "x.pem"))));
        assertEquals("tcp.tlsCert, tcp.tlsKey, tcp.tlsCa, tcp.tlsVerifyClient, tcp.tlsPsk and tcp.tlsEngine need tcp.tls=true",
                e.getMessage());
        e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> TcpConfig.from(TransportOptions.of(Map.of("tcp.tlsEngine", "jdk"))));
        assertTrue(e.getMessage().endsWith("need tcp.tls=true"), e.getMessage());
        e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> TcpConfig.from(TransportOptions.of(Map.of("tcp.tls", "true", "tcp.tlsEngine", "boring"))));
        assertEquals("tcp.tlsEngine must be auto, openssl or jdk, not 'boring'", e.getMessage());
        e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> TcpConfig.from(TransportOptions.of(Map.of("tcp.tls", "true", "tcp.tlsCert", dir.resolve("no.pem")
                        .toString(), "tcp.tlsKey", dir.resolve("no-key.pem").toString()))));
        assertEquals("certificate " + dir.resolve("no.pem") + " does not exist", e.getMessage());
    }

    @Test
    void withoutOptionsEveryFieldHasItsDocumentedDefault() {
        TcpConfig c = TcpConfig.from(TransportOptions.NONE);
        TcpConfig d = TcpConfig.defaults();
        assertEquals(d.toString(), c.toString());
        assertEquals(50, c.spinMicros);
        assertEquals(200, c.pollMicros);
        assertTrue(c.spinYield && c.reconnect && !c.headerDigest && !c.dataDigest);
        assertEquals(8 << 20, c.maxTransferBytes);
        assertEquals(30_000, c.requestTimeoutMillis);
        assertEquals(10_000, c.connectTimeoutMillis);
        assertEquals(-1, c.flushFrames);
        assertEquals(0, c.ioThreads, "auto: a thread per connection, at most one per CPU");
        assertEquals(null, c.tls, "plaintext unless tcp.tls=true");
        assertEquals(null, c.access, "every host may use every volume unless tcp.access names rules");
        assertEquals(provider.options(), TcpConfig.OPTIONS);
        Set<String> names = new HashSet<>();
        for (TransportOption<?> opt : TcpConfig.OPTIONS) {
            assertTrue(opt.name().startsWith("tcp."), opt.name());
            assertTrue(names.add(opt.name()), "one name once: " + opt.name());
        }
    }

    @Test
    void badSettingsAreRefusedInOneLineAndMakeTheTransportUnavailableWithThatReason() {
        TransportOptions typo = TransportOptions.NONE.with("tcp.iothreads", "4");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> provider.create(typo));
        assertTrue(e.getMessage().startsWith("unknown option 'tcp.iothreads' of transport tcp; it takes: tcp.ioThreads,"),
                e.getMessage());
        Availability a = provider.availability(TransportOptions.NONE.with("tcp.maxTransfer", "100"));
        assertFalse(a.isAvailable());
        assertEquals("tcp.maxTransfer must be 4224 to 67108864, not 100", a.cause());
        assertTrue(provider.availability(TransportOptions.NONE.with("rdma.pi", "whatever")).isAvailable(),
                "another transport's settings are not tcp's business");
    }

    @Test
    void capabilitiesAndThreadsFollowTheOptions() throws Exception {
        assertEquals(1 << 20, provider.capabilities(TransportOptions.NONE.with("tcp.maxTransfer", "1048576"))
                .maxTransferBytes());
        Set<String> before = ioThreads();
        try (BlockTransport t = provider.create(TransportOptions.NONE.with("tcp.ioThreads", "3"))) {
            Set<String> started = ioThreads();
            started.removeAll(before);
            assertEquals(3, started.size(), "tcp.ioThreads=3 starts three I/O threads: " + started);
        }
    }

    private static Set<String> ioThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.matches("pistore-tcp-\\d+-io-\\d+")).collect(Collectors.toCollection(HashSet::new));
    }

    @Test
    void optionNamesFollowOneScheme() {
        List<String> names = TcpConfig.OPTIONS.stream().map(TransportOption::name).collect(Collectors.toList());
        for (String n : names) {
            assertTrue(n.matches("tcp\\.[a-z][A-Za-z0-9]*"), n);
        }
    }
}
