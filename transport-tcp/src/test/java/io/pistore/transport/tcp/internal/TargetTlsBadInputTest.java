package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.security.tls.TestPki;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.transport.tcp.TcpConfig;
import io.pistore.transport.tcp.TcpTls;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile and mistaken peers of a target that requires TLS with client certificates: plaintext
 * HELLO (a downgrade), garbage instead of a handshake, a stalled handshake, a host with a
 * certificate of another CA or none, and a target the host does not trust. Each ends that
 * connection with a warning; a TLS host connected before goes on, and nothing is written.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TargetTlsBadInputTest {
    @TempDir
    static Path dir;

    static TestPki pki;
    static TestPki other;

    TcpTransport transport;
    MemoryHandler handler;
    TargetListener listener;
    HostConnection bystander;
    LogCapture log;

    @BeforeAll
    static void pki() throws Exception {
        pki = TestPki.create(dir.resolve("pki"), "host1");
        other = TestPki.create(dir.resolve("other"), "mallory");
    }

    @BeforeEach
    void start() throws Exception {
        log = new LogCapture();
        TcpConfig cfg = TcpConfig.defaults();
        cfg.connectTimeoutMillis = 1500;
        cfg.reconnect = false;
        cfg.tls = TcpTls.load(pki.serverCert(), pki.serverKey(), pki.ca(), true);
        transport = new TcpTransport(cfg);
        handler = new MemoryHandler(TcpTransportTest.F, 64);
        listener = transport.listen("127.0.0.1:0", handler);
        bystanderTransport = hostWith(TcpTls.load(pki.clientCert(), pki.clientKey(), pki.ca(), false));
        hostTransport = null;
        bystander = bystanderTransport.connect(listener.address(), new ConnectOptions(1, 4));
        TargetBadInputTest.roundTrip(bystander, 1);
    }

    TcpTransport hostTransport;
    TcpTransport bystanderTransport;

    TcpTransport hostWith(TcpTls tls) {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.connectTimeoutMillis = 3000;
        cfg.reconnect = false;
        cfg.tls = tls;
        if (hostTransport != null) {
            hostTransport.close();
        }
        hostTransport = new TcpTransport(cfg);
        return hostTransport;
    }

    @AfterEach
    void stop() {
        bystander.close();
        bystanderTransport.close();
        if (hostTransport != null) {
            hostTransport.close();
        }
        transport.close();
        log.close();
    }

    void assertOthersCarryOn() throws Exception {
        TargetBadInputTest.roundTrip(bystander, 2);
        long writes = handler.requests.stream().filter(r -> r.op() == io.pistore.spi.Operation.WRITE).count();
        assertEquals(2, writes, "only the good host wrote");
    }

    @Test
    void aPlaintextHelloIsRefused() throws Exception {
        try (RawPeer p = RawPeer.connect(listener.address())) {
            p.sendFrame(RawPeer.hello(1 << 16, 4, 0), null);
            assertTrue(p.closedByPeer());
            assertNotNull(log.awaitWarning(5000, p.localName(), "TLS handshake failed"), log.warnings().toString());
        }
        assertOthersCarryOn();
    }

    @Test
    void garbageInsteadOfAHandshakeIsRefused() throws Exception {
        try (RawPeer p = RawPeer.connect(listener.address())) {
            byte[] junk = new byte[2048];
            new Random(5).nextBytes(junk);
            junk[0] = 0x16;
            p.sendRaw(junk);
            assertTrue(p.closedByPeer());
            assertNotNull(log.awaitWarning(5000, p.localName(), "TLS handshake failed"), log.warnings().toString());
        }
        assertOthersCarryOn();
    }

    @Test
    void aStalledHandshakeIsCutOff() throws Exception {
        try (RawPeer p = RawPeer.connect(listener.address())) {
            // connects and says nothing
            assertNotNull(log.awaitWarning(10_000, p.localName(), "TLS handshake not finished within 1500 ms"),
                    log.warnings().toString());
            assertTrue(p.closedByPeer());
        }
        assertOthersCarryOn();
    }

    @Test
    void aHostWithACertificateOfAnotherCaIsRefused() throws Exception {
        TcpTransport mallory = hostWith(TcpTls.load(other.clientCert(), other.clientKey(), pki.ca(), false));
        IOException e = assertThrows(IOException.class,
                () -> mallory.connect(listener.address(), new ConnectOptions(1, 4)));
        assertTrue(e.getMessage().startsWith("cannot connect to tcp target"), e.getMessage());
        assertNotNull(log.awaitWarning(5000, "TLS handshake failed"), log.warnings().toString());
        assertOthersCarryOn();
    }

    @Test
    void aHostWithoutACertificateIsRefused() throws Exception {
        TcpTransport anonymous = hostWith(TcpTls.load(null, null, pki.ca(), false));
        assertThrows(IOException.class, () -> anonymous.connect(listener.address(), new ConnectOptions(1, 4)));
        assertOthersCarryOn();
    }

    @Test
    void aHostDoesNotTrustATargetOfAnotherCa() throws Exception {
        TcpTransport careful = hostWith(TcpTls.load(pki.clientCert(), pki.clientKey(), other.ca(), false));
        IOException e = assertThrows(IOException.class,
                () -> careful.connect(listener.address(), new ConnectOptions(1, 4)));
        assertTrue(e.getMessage().contains("TLS") || e.getMessage().contains("closed"), e.getMessage());
        assertOthersCarryOn();
    }

    @Test
    void aPlaintextHostGetsNothing() throws Exception {
        TcpTransport plain = hostWith(null);
        assertThrows(IOException.class, () -> plain.connect(listener.address(), new ConnectOptions(1, 4)));
        assertOthersCarryOn();
    }
}
