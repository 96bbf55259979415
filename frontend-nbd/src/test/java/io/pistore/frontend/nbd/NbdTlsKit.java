package io.pistore.frontend.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TargetListener;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the NBD_OPT_STARTTLS tests share, whatever the credentials (X.509 certificates or
 * pre-shared keys): two 1 MiB volumes "a" and "b" behind a local transport, the server's log lines,
 * and the hostile clients every TLS server must survive (garbage instead of a ClientHello, a
 * plaintext NBD_OPT_EXPORT_NAME on a server that requires TLS), each ending its own connection
 * with a log line while nothing is written.
 */
abstract class NbdTlsKit {
    static final int OPT_EXPORT_NAME = 1;
    static final int OPT_LIST = 3;
    static final int OPT_STARTTLS = 5;
    static final int REP_ACK = 1;
    static final int REP_ERR_UNSUP = 0x80000001;
    static final int REP_ERR_INVALID = 0x80000003;
    static final int REP_ERR_TLS_REQD = 0x80000005;
    static final int REP_ERR_UNKNOWN = 0x80000006;
    static final long SIZE = 1 << 20;

    @TempDir
    Path dir;

    VolumeStore store;
    BlockTransport transport;
    TargetListener listener;
    HostConnection host;
    NbdServer server;
    final List<String> log = new CopyOnWriteArrayList<>();

    @BeforeEach
    void volumes() throws Exception {
        store = VolumeStore.open(dir.resolve("data"));
        store.create("a", BlockFormat.of(4096, 8), SIZE / 4096);
        store.create("b", BlockFormat.of(4096, 8), SIZE / 4096);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        host = transport.connect(listener.address(), new ConnectOptions(2, 64));
    }

    @AfterEach
    void stop() throws IOException {
        if (server != null) {
            server.close();
        }
        host.close();
        listener.close();
        transport.close();
        store.close();
    }

    /** A session that has done STARTTLS with good credentials and GO "a". */
    abstract NbdTestClient tlsSession() throws IOException;

    /** Every block of "a" still reads as zeroes through a new TLS session. */
    void assertNothingWritten() throws IOException {
        try (NbdTestClient c = tlsSession()) {
            assertArrayEquals(new byte[(int) SIZE], c.read(0, (int) SIZE));
        }
    }

    /** Waits for a log line with {@code part} (a connection logs its end after closing). */
    void awaitLogged(String part) {
        try {
            Eventually.await("a log line with \"" + part + "\"", () -> log.stream().anyMatch(l -> l.contains(part)));
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; the log: " + log, e);
        }
    }

    /** LIST as a client sees it: the export names. */
    static List<String> listed(NbdTestClient c) throws IOException {
        c.option(OPT_LIST, new byte[0]);
        List<String> names = new ArrayList<>();
        for (NbdTestClient.OptionReply r : c.optionReplies()) {
            if (r.type() == 2) {
                names.add(new String(r.data(), 4, r.data().length - 4, StandardCharsets.UTF_8));
            }
        }
        return names;
    }

    /**
     * A client that answers the STARTTLS acknowledgement with a handshake record header and
     * nonsense: its connection ends with {@code logLine}, a good client carries on, nothing is written.
     */
    void garbageInsteadOfAClientHelloEndsThatConnectionOnly(String logLine) throws Exception {
        try (NbdTestClient good = tlsSession();
             NbdTestClient bad = NbdTestClient.open(server.address())) {
            bad.option(OPT_STARTTLS, new byte[0]);
            assertEquals(REP_ACK, bad.optionReply().type());
            byte[] junk = new byte[4096];
            new Random(9).nextBytes(junk);
            junk[0] = 0x16; // a handshake record type, then nonsense
            bad.out.write(junk);
            bad.out.flush();
            assertTrue(bad.closedByServer());
            assertEquals(0, good.write(0, new byte[4096]), "the other client carries on");
        }
        awaitLogged(logLine);
        // the good client's write was zeroes
        assertNothingWritten();
    }

    /** A plaintext NBD_OPT_EXPORT_NAME on a server that requires TLS ends the session; nothing is written. */
    void aPlaintextExportNameEndsTheSession() throws Exception {
        try (NbdTestClient c = NbdTestClient.open(server.address())) {
            c.option(OPT_EXPORT_NAME, "a".getBytes(StandardCharsets.UTF_8));
            assertTrue(c.closedByServer());
        }
        awaitLogged("NBD_OPT_EXPORT_NAME without TLS");
        assertNothingWritten();
    }
}
