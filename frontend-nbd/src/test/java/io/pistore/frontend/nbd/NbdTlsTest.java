package io.pistore.frontend.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.security.access.AccessRules;
import io.pistore.security.tls.TestPki;
import io.pistore.security.tls.TlsContext;
import io.pistore.security.tls.TlsEngine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import javax.net.ssl.SSLException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * NBD_OPT_STARTTLS as a client sees it (a JDK TLS client, certificates made by openssl at test
 * time), in each mode, and the hostile clients of a TLS server: garbage instead of a handshake, a
 * stalled handshake, a certificate of another CA, a plaintext client of a server that requires TLS.
 * Each ends its own connection with a log line; the server goes on serving, and nothing is written.
 */
@Timeout(60)
class NbdTlsTest extends NbdTlsKit {
    /** The server's engine: the default (openssl where it loads); a subclass runs the jdk one. */
    TlsEngine engine() {
        return TlsEngine.AUTO;
    }

    TestPki pki;
    TlsContext client;

    @BeforeEach
    void pki() throws Exception {
        pki = TestPki.create(dir.resolve("pki"), "alice");
        client = TlsContext.client(pki.ca(), pki.clientCert(), pki.clientKey());
    }

    void start(NbdTls mode, boolean clientCertificates) throws IOException {
        start(mode, clientCertificates, 3000);
    }

    void start(NbdTls mode, boolean clientCertificates, long handshakeTimeoutMillis) throws IOException {
        TlsContext tls = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), clientCertificates, engine());
        server = NbdServer.start("127.0.0.1:0", host,
                new NbdServer.Options().handshakeTimeoutMillis(handshakeTimeoutMillis).tls(mode, tls).log(log::add));
    }

    /** Opens a session, STARTTLS, GO "a". */
    @Override
    NbdTestClient tlsSession() throws IOException {
        NbdTestClient c = NbdTestClient.open(server.address());
        assertEquals(REP_ACK, c.startTls(client));
        List<NbdTestClient.OptionReply> r;
        try {
            r = c.go("a");
        } catch (IOException e) {
            throw new IOException(e + " " + log, e);
        }
        assertEquals(REP_ACK, r.get(r.size() - 1).type());
        return c;
    }

    @Test
    void dataCrossesTlsBothWays() throws Exception {
        start(NbdTls.REQUIRE, false);
        byte[] d = new byte[256 * 1024];
        new Random(3).nextBytes(d);
        try (NbdTestClient c = tlsSession()) {
            assertEquals(0, c.write(4096, d));
            assertArrayEquals(d, c.read(4096, d.length));
            // pipelined: many requests before the first reply
            for (int i = 0; i < 64; i++) {
                c.request(0, 0, i * 4096L, 4096, null);
            }
            for (int i = 0; i < 64; i++) {
                assertEquals(0, c.reply(4096).error());
            }
            c.out.write(new byte[28]); // a request with a bad magic number ends the session
            c.out.flush();
            assertTrue(c.closedByServer());
        }
        awaitLogged("TLS TLSv1.3");
    }

    @Test
    void requireRefusesEveryOptionBeforeStartTls() throws Exception {
        start(NbdTls.REQUIRE, false);
        try (NbdTestClient c = NbdTestClient.open(server.address())) {
            c.option(OPT_LIST, new byte[0]);
            assertEquals(REP_ERR_TLS_REQD, c.optionReply().type());
            assertEquals(REP_ERR_TLS_REQD, c.go("a").get(0).type());
            assertEquals(REP_ACK, c.startTls(client));
            c.option(OPT_STARTTLS, new byte[0]);
            assertEquals(REP_ERR_INVALID, c.optionReply().type(), "a second STARTTLS");
            assertEquals(REP_ACK, c.go("a").get(2).type());
        }
        awaitLogged("refused: TLS required");
    }

    @Test
    void aPlaintextExportNameOnARequireServerEndsTheSession() throws Exception {
        start(NbdTls.REQUIRE, false);
        aPlaintextExportNameEndsTheSession();
    }

    @Test
    void onLetsEachClientChoose() throws Exception {
        start(NbdTls.ON, false);
        try (NbdTestClient plain = NbdTestClient.open(server.address())) {
            assertEquals(REP_ACK, plain.go("a").get(2).type());
            assertEquals(0, plain.write(0, new byte[4096]));
        }
        try (NbdTestClient c = tlsSession()) {
            assertEquals(0, c.write(0, new byte[4096]));
        }
    }

    @Test
    void startTlsWithDataIsInvalidAndOffRefusesIt() throws Exception {
        start(NbdTls.ON, false);
        try (NbdTestClient c = NbdTestClient.open(server.address())) {
            c.option(OPT_STARTTLS, new byte[] {1});
            assertEquals(REP_ERR_INVALID, c.optionReply().type());
        }
        server.close();
        server = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().log(log::add));
        try (NbdTestClient c = NbdTestClient.open(server.address())) {
            assertEquals(REP_ERR_UNSUP, c.startTls(client));
        }
    }

    @Test
    void structuredRepliesAgreedBeforeStartTlsAreForgotten() throws Exception {
        start(NbdTls.ON, false);
        try (NbdTestClient c = NbdTestClient.open(server.address())) {
            assertTrue(c.structuredReplies());
            assertEquals(REP_ACK, c.startTls(client));
            assertEquals(REP_ACK, c.go("a").get(2).type());
            c.request(0, 0, 0, 4096, null);
            assertTrue(!c.reply(4096).structured(), "a simple reply: structured replies were not asked inside TLS");
        }
    }

    @Test
    void garbageInsteadOfAHandshakeEndsThatConnectionOnly() throws Exception {
        start(NbdTls.REQUIRE, false);
        garbageInsteadOfAClientHelloEndsThatConnectionOnly("TLS handshake failed");
    }

    @Test
    void garbageBeforeStartTlsEndsThatConnection() throws Exception {
        start(NbdTls.REQUIRE, false);
        try (NbdTestClient bad = NbdTestClient.open(server.address())) {
            bad.out.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            bad.out.flush();
            assertTrue(bad.closedByServer());
        }
        awaitLogged("bad option magic");
        assertNothingWritten();
    }

    @Test
    void aStalledHandshakeTimesOut() throws Exception {
        start(NbdTls.REQUIRE, false, 1000); // nothing in this test needs longer than the stall
        try (NbdTestClient bad = NbdTestClient.open(server.address())) {
            bad.option(OPT_STARTTLS, new byte[0]);
            assertEquals(REP_ACK, bad.optionReply().type());
            // says nothing more: the server gives up after its handshake timeout
            assertTrue(bad.closedByServer());
        }
        awaitLogged("TLS handshake timed out after 1000 ms");
    }

    @Test
    void aCertificateOfAnotherCaIsRefused() throws Exception {
        start(NbdTls.REQUIRE, true);
        TestPki other = TestPki.create(dir.resolve("other"), "mallory");
        TlsContext mallory = TlsContext.client(pki.ca(), other.clientCert(), other.clientKey());
        try (NbdTestClient bad = NbdTestClient.open(server.address())) {
            // TLS 1.3: the client may finish its side before the server's verdict reaches it
            assertThrows(IOException.class, () -> {
                bad.startTls(mallory);
                bad.go("a");
            });
        }
        TlsContext none = TlsContext.client(pki.ca(), null, null);
        try (NbdTestClient bad = NbdTestClient.open(server.address())) {
            assertThrows(IOException.class, () -> {
                bad.startTls(none);
                bad.go("a");
            });
        }
        try (NbdTestClient good = tlsSession()) {
            assertEquals(0, good.command(3, 0, 0, 0));
        }
        awaitLogged("TLS handshake failed");
        awaitLogged("client CN=alice");
        assertNothingWritten();
    }

    NbdTestClient tlsClient(TlsContext as) throws IOException {
        NbdTestClient c = NbdTestClient.open(server.address());
        assertEquals(REP_ACK, c.startTls(as));
        return c;
    }

    @Test
    void theAccessFileDecidesWhichExportsAClientSeesAndWhetherItMayWrite() throws Exception {
        TlsContext tls = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), true, engine());
        AccessRules access = AccessRules.parse(List.of("# client exports access", "alice a rw", "bob b ro  # backups"),
                "test");
        server = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().handshakeTimeoutMillis(3000)
                .tls(NbdTls.REQUIRE, tls).access(access).log(log::add));
        pki.leaf("bob", "/CN=bob", "extendedKeyUsage=clientAuth\n");
        pki.leaf("carol", "/CN=carol", "extendedKeyUsage=clientAuth\n");
        TlsContext bob = TlsContext.client(pki.ca(), pki.dir.resolve("bob-cert.pem"), pki.dir.resolve("bob-key.pem"));
        TlsContext carol = TlsContext.client(pki.ca(), pki.dir.resolve("carol-cert.pem"),
                pki.dir.resolve("carol-key.pem"));
        byte[] d = new byte[4096];
        new Random(11).nextBytes(d);
        try (NbdTestClient c = tlsClient(client)) {
            assertEquals(List.of("a"), listed(c));
            assertEquals(REP_ERR_UNKNOWN, c.go("b").get(0).type(), "another client's export is unknown");
            List<NbdTestClient.OptionReply> r = c.go("a");
            assertEquals(REP_ACK, r.get(r.size() - 1).type());
            assertEquals(0, java.nio.ByteBuffer.wrap(r.get(0).data()).getShort(10) & 2, "read-write");
            assertEquals(0, c.write(0, d));
        }
        try (NbdTestClient c = tlsClient(bob)) {
            assertEquals(List.of("b"), listed(c));
            assertEquals(REP_ERR_UNKNOWN, c.go("a").get(0).type());
            List<NbdTestClient.OptionReply> r = c.go("b");
            assertEquals(2, java.nio.ByteBuffer.wrap(r.get(0).data()).getShort(10) & 2, "NBD_FLAG_READ_ONLY");
            assertEquals(1, c.write(0, d), "EPERM");
            assertEquals(1, c.command(4, 0, 0, 4096), "TRIM: EPERM");
            assertEquals(1, c.command(6, 0, 0, 4096), "WRITE_ZEROES: EPERM");
            assertArrayEquals(new byte[4096], c.read(0, 4096), "nothing was written");
            assertEquals(0, c.command(3, 0, 0, 0), "FLUSH is allowed");
        }
        try (NbdTestClient c = tlsClient(carol)) {
            assertEquals(List.of(), listed(c), "a client no rule names sees nothing");
            assertEquals(REP_ERR_UNKNOWN, c.go("a").get(0).type());
            c.option(OPT_EXPORT_NAME, "a".getBytes(StandardCharsets.UTF_8));
            assertTrue(c.closedByServer());
        }
        awaitLogged("export b refused: not granted to CN=alice");
        awaitLogged("export a refused: not granted to CN=carol");
    }

    @Test
    void accessRulesNeedClientCertificates() throws Exception {
        TlsContext tls = TlsContext.server(pki.serverCert(), pki.serverKey(), pki.ca(), false, engine());
        AccessRules access = AccessRules.parse(List.of("* * ro"), "test");
        assertThrows(IllegalArgumentException.class, () -> NbdServer.start("127.0.0.1:0", host,
                new NbdServer.Options().tls(NbdTls.REQUIRE, tls).access(access)));
    }

    @Test
    void aServerCertificateTheClientDoesNotTrustFailsTheClient() throws Exception {
        start(NbdTls.REQUIRE, false);
        TestPki other = TestPki.create(dir.resolve("other"), "bob");
        TlsContext distrustful = TlsContext.client(other.ca(), null, null);
        try (NbdTestClient c = NbdTestClient.open(server.address())) {
            assertThrows(SSLException.class, () -> c.startTls(distrustful));
        }
    }
}
