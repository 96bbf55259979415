package io.pistore.frontend.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.security.access.AccessRules;
import io.pistore.security.tls.PskKeys;
import io.pistore.security.tls.PskTestClient;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.bouncycastle.tls.CipherSuite;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * NBD_OPT_STARTTLS with pre-shared keys, as a Bouncy Castle PSK client sees it: data and PI
 * failures cross TLS 1.3 and 1.2, the identity is the access rules' client, and the hostile
 * clients (unknown identity, wrong key, a stalled handshake, garbage instead of a ClientHello) each
 * end their own connection with a log line while the server goes on and nothing is written.
 */
@Timeout(60)
class NbdTlsPskTest extends NbdTlsKit {
    static final int EIO = 5;
    static final byte[] ALICE = HexFormat.of().parseHex("8f2c1d0e3b4a59687766554433221100ffeeddccbbaa99887766554433221100");
    static final byte[] BOB = HexFormat.of().parseHex("0123456789abcdef0123456789abcdef");

    final PskKeys keys = PskKeys.parse(List.of("alice:" + HexFormat.of().formatHex(ALICE),
            "bob:" + HexFormat.of().formatHex(BOB)), "test");

    void start(NbdTls mode, AccessRules access) throws IOException {
        // generous: the first handshake of a JVM loads and compiles Bouncy Castle's classes
        start(mode, access, 30_000);
    }

    void start(NbdTls mode, AccessRules access, long handshakeTimeoutMillis) throws IOException {
        server = NbdServer.start("127.0.0.1:0", host, new NbdServer.Options().handshakeTimeoutMillis(handshakeTimeoutMillis)
                .tls(mode, keys).access(access).log(log::add));
    }

    NbdTestClient pskClient(PskTestClient as) throws IOException {
        NbdTestClient c = NbdTestClient.open(server.address());
        try {
            assertEquals(REP_ACK, c.startTls(as));
        } catch (IOException e) {
            throw new IOException(e + " " + log, e);
        }
        return c;
    }

    /** STARTTLS as alice (TLS 1.3), GO "a". */
    @Override
    NbdTestClient tlsSession() throws IOException {
        NbdTestClient c = pskClient(PskTestClient.tls13("alice", ALICE));
        List<NbdTestClient.OptionReply> r = c.go("a");
        assertEquals(REP_ACK, r.get(r.size() - 1).type(), log.toString());
        return c;
    }

    /** Flips a bit of block {@code lba}'s stored guard, after a checkpoint moved every block to the metadata file. */
    void corruptStoredPi(String volume, long lba) throws IOException {
        store.checkpoint(volume);
        try (FileChannel m = FileChannel.open(dir.resolve("data").resolve(volume + ".meta"), StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            m.read(b, lba * 8);
            b.put(0, (byte) (b.get(0) ^ 0x01)).rewind();
            m.write(b, lba * 8);
        }
    }

    @Test
    void dataAndPiFailuresCrossTls13WithAPreSharedKey() throws Exception {
        start(NbdTls.REQUIRE, null);
        byte[] d = new byte[256 * 1024];
        new Random(3).nextBytes(d);
        try (NbdTestClient c = tlsSession()) {
            assertEquals(0, c.write(4096, d));
            assertArrayEquals(d, c.read(4096, d.length), "read back with its PI checked by the server");
            for (int i = 0; i < 64; i++) {
                c.request(0, 0, i * 4096L, 4096, null); // pipelined
            }
            for (int i = 0; i < 64; i++) {
                assertEquals(0, c.reply(4096).error());
            }
            assertEquals(0, c.command(3, 0, 0, 0), "FLUSH");
        }
        corruptStoredPi("a", 2);
        try (NbdTestClient c = tlsSession()) {
            c.request(0, 0, 2 * 4096, 4096, null);
            NbdTestClient.Reply r = c.reply(4096);
            assertEquals(EIO, r.error(), "a PI check failure reaches the client as EIO, inside TLS");
            assertArrayEquals(java.util.Arrays.copyOfRange(d, 0, 4096), c.read(4096, 4096), "the stream is in step");
        }
        awaitLogged("TLS TLSv1.3 TLS_AES_128_GCM_SHA256, PSK identity alice");
        awaitLogged("PI check failed");
    }

    @Test
    void tls12DhePskWorksToo() throws Exception {
        start(NbdTls.ON, null);
        try (NbdTestClient c = pskClient(PskTestClient.tls12("bob", BOB, CipherSuite.TLS_DHE_PSK_WITH_AES_128_GCM_SHA256))) {
            assertEquals(REP_ACK, c.go("b").get(2).type());
            byte[] d = new byte[8192];
            new Random(4).nextBytes(d);
            assertEquals(0, c.write(0, d));
            assertArrayEquals(d, c.read(0, d.length));
        }
        awaitLogged("TLS TLSv1.2 TLS_DHE_PSK_WITH_AES_128_GCM_SHA256, PSK identity bob");
    }

    /** A client whose handshake fails: the connection ends, the good client carries on, one log line says why. */
    void refused(PskTestClient as, String why) throws Exception {
        start(NbdTls.REQUIRE, null);
        try (NbdTestClient good = tlsSession();
             NbdTestClient bad = NbdTestClient.open(server.address())) {
            assertThrows(IOException.class, () -> {
                bad.startTls(as);
                bad.go("a"); // TLS 1.3: the client may finish its side before the server's verdict reaches it
                bad.write(0, new byte[4096]);
            });
            assertEquals(0, good.command(3, 0, 0, 0), "the other client carries on");
        }
        awaitLogged("TLS handshake failed: " + why);
        assertEquals(1, log.stream().filter(l -> l.contains(why)).count(), log.toString());
        assertNothingWritten();
    }

    @Test
    void anUnknownIdentityIsRefused() throws Exception {
        refused(PskTestClient.tls13("mallory", ALICE), "unknown PSK identity 'mallory'");
    }

    @Test
    void aWrongKeyIsRefused() throws Exception {
        byte[] wrong = ALICE.clone();
        wrong[31] ^= 0x40;
        refused(PskTestClient.tls13("alice", wrong), "wrong key for PSK identity 'alice'");
    }

    @Test
    void aWrongKeyIsRefusedInTls12() throws Exception {
        refused(PskTestClient.tls12("bob", ALICE, CipherSuite.TLS_DHE_PSK_WITH_AES_128_GCM_SHA256),
                "wrong key for PSK identity 'bob'");
    }

    @Test
    void garbageInsteadOfAClientHelloEndsThatConnectionOnly() throws Exception {
        start(NbdTls.REQUIRE, null);
        garbageInsteadOfAClientHelloEndsThatConnectionOnly("TLS handshake failed: no TLS ClientHello from the client");
    }

    @Test
    void aStalledHandshakeTimesOut() throws Exception {
        start(NbdTls.REQUIRE, null, 1000); // nothing in this test needs longer than the stall
        try (NbdTestClient bad = NbdTestClient.open(server.address())) {
            bad.option(OPT_STARTTLS, new byte[0]);
            assertEquals(REP_ACK, bad.optionReply().type());
            bad.out.write(new byte[] {0x16, 3, 1}); // the start of a record header, then silence
            bad.out.flush();
            assertTrue(bad.closedByServer());
        }
        awaitLogged("TLS handshake timed out after 1000 ms");
        assertNothingWritten();
    }

    @Test
    void aPlaintextClientOfARequireServerSeesNothing() throws Exception {
        start(NbdTls.REQUIRE, null);
        aPlaintextExportNameEndsTheSession();
    }

    @Test
    void thePskIdentityIsTheAccessRulesClient() throws Exception {
        start(NbdTls.REQUIRE, AccessRules.parse(List.of("alice a rw", "bob b ro"), "test"));
        try (NbdTestClient c = pskClient(PskTestClient.tls13("alice", ALICE))) {
            assertEquals(List.of("a"), listed(c));
            assertEquals(REP_ERR_UNKNOWN, c.go("b").get(0).type(), "another client's export is unknown");
            assertEquals(REP_ACK, c.go("a").get(2).type());
            assertEquals(0, c.write(0, new byte[4096]));
        }
        try (NbdTestClient c = pskClient(PskTestClient.tls13("bob", BOB))) {
            assertEquals(List.of("b"), listed(c));
            List<NbdTestClient.OptionReply> r = c.go("b");
            assertEquals(2, ByteBuffer.wrap(r.get(0).data()).getShort(10) & 2, "NBD_FLAG_READ_ONLY");
            assertEquals(1, c.write(0, new byte[4096]), "EPERM");
        }
        awaitLogged("export b refused: not granted to alice");
    }

    @Test
    void accessRulesNeedTlsRequired() {
        AccessRules access = AccessRules.parse(List.of("* * ro"), "test");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NbdServer.start("127.0.0.1:0",
                host, new NbdServer.Options().tls(NbdTls.ON, keys).access(access)));
        assertEquals("an access file needs TLS required with client certificates or pre-shared keys", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new NbdServer.Options().tls(NbdTls.ON, (PskKeys) null));
    }
}
