package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.security.access.AccessRules;
import io.pistore.security.tls.TestPki;
import io.pistore.security.tls.TlsContext;
import io.pistore.security.tls.TlsEngine;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Operation;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.tcp.TcpConfig;
import io.pistore.transport.tcp.TcpTls;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The target's access rules (tcp.access) with real TLS and client certificates on loopback: a host
 * sees only the volumes granted to its certificate (by CN or subjectAltName), read-only ones are
 * listed read-only and refuse every kind of write, and a volume not granted is refused exactly as
 * an unknown id is.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpAccessTest {
    /** The engine of target and hosts: the default (openssl where it loads); a subclass runs the jdk one. */
    TlsEngine engine() {
        return TlsEngine.AUTO;
    }

    static final BlockFormat F = BlockFormat.of(4096, 0);
    static final int BLOCKS = 16;

    @TempDir
    static Path dir;

    static TestPki pki;

    TcpTransport target;
    TargetListener listener;
    VolumesHandler handler;
    LogCapture log;
    final List<TcpTransport> hosts = new ArrayList<>();

    @BeforeAll
    static void pki() throws Exception {
        pki = TestPki.create(dir.resolve("pki"), "alice");
        pki.leaf("bob", "/CN=bob", "extendedKeyUsage=clientAuth\n");
        pki.leaf("carol", "/CN=carol", "extendedKeyUsage=clientAuth\n");
        pki.leaf("replica", "/O=pistore/CN=host7", "subjectAltName=DNS:Replica7.Example\nextendedKeyUsage=clientAuth\n");
    }

    @BeforeEach
    void start() throws Exception {
        log = new LogCapture();
        TcpConfig cfg = TcpConfig.defaults();
        cfg.reconnect = false;
        cfg.tls = TcpTls.load(pki.serverCert(), pki.serverKey(), pki.ca(), true, engine());
        cfg.access = AccessRules.parse(List.of("# CLIENT VOLUMES ACCESS", "alice a,b rw", "bob b ro",
                "replica7.example c rw"), "test");
        target = new TcpTransport(cfg);
        handler = new VolumesHandler("a", "b", "c");
        listener = target.listen("127.0.0.1:0", handler);
    }

    @AfterEach
    void stop() {
        hosts.forEach(TcpTransport::close);
        target.close();
        log.close();
    }

    HostConnection connect(String who) throws IOException {
        return connect(TcpTls.load(cert(who), key(who), pki.ca(), false, engine()), listener, hosts);
    }

    /** A host with {@code tls} and no reconnects, kept in {@code hosts} to close, connected to {@code to}'s listener. */
    static HostConnection connect(TcpTls tls, TargetListener to, List<TcpTransport> hosts) throws IOException {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.reconnect = false;
        cfg.tls = tls;
        TcpTransport t = new TcpTransport(cfg);
        hosts.add(t);
        return t.connect(to.address(), new ConnectOptions(1, 4));
    }

    static Path cert(String who) {
        return who.equals("alice") ? pki.clientCert() : pki.dir.resolve(who + "-cert.pem");
    }

    static Path key(String who) {
        return who.equals("alice") ? pki.clientKey() : pki.dir.resolve(who + "-key.pem");
    }

    static Completion submit(HostConnection c, BlockRequest r) throws Exception {
        return c.queue(0).submit(r).get(10, TimeUnit.SECONDS);
    }

    static BlockRequest write(String volume, long lba, byte[] d) {
        return BlockRequest.write(volume, lba, 1, ScatterList.wrap(d), null, Protection.NONE, false);
    }

    static byte[] read(HostConnection c, String volume, long lba) throws Exception {
        byte[] back = new byte[4096];
        Completion r = submit(c, BlockRequest.read(volume, lba, 1, ScatterList.wrap(back), null, Protection.NONE));
        assertEquals(Status.SUCCESS, r.status(), r.toString());
        return back;
    }

    static byte[] random(long seed) {
        byte[] d = new byte[4096];
        new Random(seed).nextBytes(d);
        return d;
    }

    static List<String> names(HostConnection c) {
        return c.volumes().stream().map(VolumeInfo::name).toList();
    }

    @Test
    void aHostWithoutTlsOrWithoutACertificateIsToldTheLikelyCause() throws Exception {
        TcpConfig plain = TcpConfig.defaults();
        plain.reconnect = false;
        TcpTransport p = new TcpTransport(plain);
        hosts.add(p);
        IOException noTls = assertThrows(IOException.class,
                () -> p.connect(listener.address(), new ConnectOptions(1, 4)));
        assertTrue(noTls.getMessage().contains("set tcp.tls=true here too"), noTls.getMessage());

        TcpConfig anonymous = TcpConfig.defaults();
        anonymous.reconnect = false;
        anonymous.tls = TcpTls.load(null, null, pki.ca(), false, engine());
        TcpTransport a = new TcpTransport(anonymous);
        hosts.add(a);
        IOException noCert = assertThrows(IOException.class,
                () -> a.connect(listener.address(), new ConnectOptions(1, 4)));
        assertTrue(noCert.getMessage().contains("tcp.tlsCert"), noCert.getMessage());
    }

    @Test
    void aHostGrantedReadWriteSeesItsVolumesAndWritesThem() throws Exception {
        try (HostConnection c = connect("alice")) {
            assertEquals(List.of("a", "b"), names(c));
            assertTrue(c.volumes().stream().noneMatch(VolumeInfo::readOnly), c.volumes().toString());
            byte[] d = random(1);
            assertEquals(Status.SUCCESS, submit(c, write("b", 3, d)).status());
            assertArrayEquals(d, read(c, "b", 3));
            assertEquals(Status.SUCCESS, submit(c, BlockRequest.writeZeroes("a", 0, 2, false)).status());
            assertEquals(Status.SUCCESS, submit(c, BlockRequest.deallocate("a", 0, 2)).status());
        }
    }

    @Test
    void aReadOnlyVolumeIsListedReadOnlyAndRefusesEveryKindOfWrite() throws Exception {
        byte[] before = random(2);
        handler.put("b", 5, before);
        try (HostConnection c = connect("bob")) {
            assertEquals(List.of("b"), names(c));
            assertTrue(c.volumes().get(0).readOnly(), "reported read-only at connect");
            assertArrayEquals(before, read(c, "b", 5));
            for (int i = 0; i < 2; i++) {
                Completion w = submit(c, write("b", 5, random(3)));
                assertEquals(Status.ACCESS_DENIED, w.status(), w.toString());
                assertEquals("volume b is read-only to CN=bob", w.message());
            }
            assertEquals(Status.ACCESS_DENIED, submit(c, BlockRequest.writeZeroes("b", 5, 1, false)).status());
            assertEquals(Status.ACCESS_DENIED, submit(c, BlockRequest.deallocate("b", 5, 1)).status());
            assertEquals(Status.SUCCESS, submit(c, BlockRequest.flush("b")).status(), "a flush changes nothing");
            assertArrayEquals(before, read(c, "b", 5), "nothing was written");
        }
        assertTrue(handler.requests.stream().allMatch(r -> r.op() == Operation.READ || r.op() == Operation.FLUSH),
                "no write reached the handler: " + handler.requests);
        assertNotNull(log.awaitWarning(5000, "WRITE to volume b refused: read-only to CN=bob"), log.warnings().toString());
        assertEquals(1, log.warnings().stream().filter(l -> l.contains("to volume b refused")).count(),
                "logged once per connection and volume, whatever the kind of write: " + log.warnings());
    }

    @Test
    void aHostNoRuleNamesSeesNothingAndAVolumeNotGrantedIsRefusedAsUnknown() throws Exception {
        try (HostConnection c = connect("carol")) {
            assertEquals(List.of(), names(c));
            assertEquals(Status.NO_SUCH_VOLUME, submit(c, write("a", 0, random(4))).status());
        }
        // By hand, with the id the volume has on this listener: the answer is word for word that of
        // an id no volume has, so the host cannot tell a volume it may not use from none.
        TlsContext carol = TlsContext.client(pki.ca(), cert("carol"), key("carol"));
        try (RawPeer p = RawPeer.connectTls(listener.address(), carol)) {
            RawPeer.Frame hello = p.greet(1 << 16, 4, 0);
            assertEquals(4, hello.payload.length, "an empty volume list: the count alone");
            p.sendFrame(RawPeer.request(Protocol.OP_WRITE, 0, 7, 4096, 1, 1, 0, 0, 0, 0), random(5));
            String granted = refusal(p.readFrame(true));
            p.sendFrame(RawPeer.request(Protocol.OP_READ, 0, 8, 0, 1, 1, 0, 0, 0, 0), null);
            String grantedRead = refusal(p.readFrame(true));
            p.sendFrame(RawPeer.request(Protocol.OP_READ, 0, 9, 0, 99, 1, 0, 0, 0, 0), null);
            String unknown = refusal(p.readFrame(true));
            assertEquals("3 no volume with id 1", granted);
            assertEquals(granted, grantedRead);
            assertEquals("3 no volume with id 99", unknown);
            assertNotNull(log.awaitWarning(5000, p.localName(), "volume a refused: not granted to CN=carol"),
                    log.warnings().toString());
        }
        assertTrue(handler.requests.isEmpty(), "nothing reached the handler: " + handler.requests);
        assertArrayEquals(new byte[BLOCKS * 4096], handler.volumes.get("a"), "nothing was written");
    }

    /** A response's status code and message. */
    private static String refusal(RawPeer.Frame f) {
        return (f.header.getShort(Protocol.O_STATUS) & 0xFFFF) + " " + new String(f.payload, StandardCharsets.UTF_8);
    }

    @Test
    void aRuleMayNameADnsSubjectAltNameInAnyCase() throws Exception {
        try (HostConnection c = connect("replica")) {
            assertEquals(List.of("c"), names(c));
            assertFalse(c.volumes().get(0).readOnly());
            byte[] d = random(6);
            assertEquals(Status.SUCCESS, submit(c, write("c", 1, d)).status());
            assertArrayEquals(d, read(c, "c", 1));
        }
    }

    @Test
    void rulesWithoutVerifiedClientCertificatesCannotListen() {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.tls = TcpTls.load(pki.serverCert(), pki.serverKey(), pki.ca(), false, engine());
        cfg.access = AccessRules.parse(List.of("* * rw"), "test");
        try (TcpTransport t = new TcpTransport(cfg)) {
            IOException e = assertThrows(IOException.class, () -> t.listen("127.0.0.1:0", handler));
            assertEquals("cannot listen with access rules: tcp.access needs tcp.tls=true with tcp.tlsVerifyClient=true or tcp.tlsPsk",
                    e.getMessage());
        }
    }

    /** Volumes of {@link #BLOCKS} blocks of 4096 bytes without PI, in memory, recording every request. */
    static final class VolumesHandler implements TargetHandler {
        final Map<String, byte[]> volumes = new ConcurrentHashMap<>();
        final List<String> order = new ArrayList<>();
        final List<BlockRequest> requests = new CopyOnWriteArrayList<>();

        VolumesHandler(String... names) {
            for (String n : names) {
                volumes.put(n, new byte[BLOCKS * 4096]);
                order.add(n);
            }
        }

        void put(String volume, long lba, byte[] d) {
            System.arraycopy(d, 0, volumes.get(volume), (int) lba * 4096, 4096);
        }

        @Override
        public List<VolumeInfo> volumes() {
            return order.stream().map(n -> new VolumeInfo(n, BLOCKS, F)).toList();
        }

        @Override
        public synchronized void execute(BlockRequest r, io.pistore.spi.PiDuty checked, Consumer<Completion> done) {
            requests.add(r);
            byte[] v = volumes.get(r.volume());
            int at = (int) r.lba() * 4096;
            switch (r.op()) {
                case WRITE -> System.arraycopy(r.data().toArray(), 0, v, at, r.blocks() * 4096);
                case READ -> r.data().write(0, v, at, r.blocks() * 4096);
                case WRITE_ZEROES, DEALLOCATE -> java.util.Arrays.fill(v, at, at + r.blocks() * 4096, (byte) 0);
                default -> { }
            }
            done.accept(Completion.success());
        }

        @Override
        public void connected(String peer) {
        }

        @Override
        public void disconnected(String peer, String reason) {
        }
    }
}
