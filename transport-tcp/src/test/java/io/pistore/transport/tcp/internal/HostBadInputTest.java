package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.tcp.TcpConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bad input at the host, from a scripted fake target: the queue's connection closes with one
 * warning naming the target and the reason, its requests fail with TRANSPORT_ERROR (no hang), and
 * the transport can connect again.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HostBadInputTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);

    TcpTransport transport;
    LogCapture log;
    ServerSocket server;
    Thread fake;

    interface Script {
        void run(RawPeer target) throws Exception;
    }

    @BeforeEach
    void start() throws Exception {
        log = new LogCapture();
        TcpConfig cfg = TcpConfig.defaults();
        cfg.maxTransferBytes = 1 << 16;
        cfg.connectTimeoutMillis = 3000;
        transport = new TcpTransport(cfg);
        server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void stop() throws Exception {
        transport.close();
        server.close();
        if (fake != null) {
            fake.join(5000);
        }
        log.close();
    }

    String address() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    void fakeTarget(Script s) {
        fake = new Thread(() -> {
            try (RawPeer t = new RawPeer(server.accept())) {
                s.run(t);
                t.closedByPeer(); // keep the socket until the host closes it
            } catch (Exception e) {
                // the host closed first
            }
        });
        fake.start();
    }

    /** Reads HELLO and answers with a proper HELLO_REPLY listing volume "v" (id 1). */
    static void greet(RawPeer t, int digests) throws IOException {
        greet(t, digests, 0);
    }

    /** As above, granting the {@link Protocol} feature bits {@code features}. */
    static void greet(RawPeer t, int digests, int features) throws IOException {
        RawPeer.Frame hello = t.readFrame(false);
        assertEquals(Protocol.OP_HELLO, hello.opcode());
        byte[] list = WireVolume.encode(List.of(new WireVolume(1, new VolumeInfo("v", 64, F))), 1 << 20);
        ByteBuffer h = RawPeer.header(Protocol.OP_HELLO_REPLY, 0, 0, list.length);
        h.putInt(Protocol.O_MAX_TRANSFER, 1 << 16).putShort(Protocol.O_QUEUE_DEPTH, (short) 4)
                .put(Protocol.O_DIGESTS, (byte) digests).put(Protocol.O_FEATURES, (byte) features);
        t.sendFrame(h, list);
        t.headerDigest = (digests & Protocol.DIGEST_HEADER) != 0;
        t.dataDigest = (digests & Protocol.DIGEST_DATA) != 0;
    }

    static ByteBuffer response(RawPeer.Frame req, Status s, int payloadLength) {
        ByteBuffer h = RawPeer.header(req.opcode() | Protocol.RESPONSE, 0, req.commandId(), payloadLength);
        h.putShort(Protocol.O_STATUS, (short) Protocol.statusCode(s));
        return h;
    }

    CompletableFuture<Completion> read(HostConnection c, long lba) {
        return c.queue(0).submit(BlockRequest.read("v", lba, 1, ScatterList.wrap(new byte[4096]), null,
                Protection.insertStrip(lba)));
    }

    void assertFailsWith(Script s, String reason) throws Exception {
        fakeTarget(s);
        try (HostConnection c = transport.connect(address(), new ConnectOptions(1, 4))) {
            Completion done = read(c, 3).get(10, TimeUnit.SECONDS);
            assertEquals(Status.TRANSPORT_ERROR, done.status(), done.toString());
            assertTrue(done.message().contains(reason), done.message());
            assertNotNull(log.awaitWarning(5000, "127.0.0.1:" + server.getLocalPort(), reason), log.warnings().toString());
            assertEquals(Status.TRANSPORT_ERROR, read(c, 4).get(10, TimeUnit.SECONDS).status(),
                    "a closed queue refuses new requests");
        }
        assertCanConnectAgain();
    }

    /** The same transport reaches a real target afterwards. */
    void assertCanConnectAgain() throws Exception {
        MemoryHandler h = new MemoryHandler(F, 64);
        try (TargetListener l = transport.listen("127.0.0.1:0", h);
             HostConnection c = transport.connect(l.address(), new ConnectOptions(2, 4))) {
            byte[] d = new byte[4096];
            d[7] = 7;
            assertEquals(Status.SUCCESS, c.queue(1).submit(BlockRequest.write(MemoryHandler.VOLUME, 9, 1,
                    ScatterList.wrap(d), null, Protection.insertStrip(9), false)).get(10, TimeUnit.SECONDS).status());
            byte[] back = new byte[4096];
            assertEquals(Status.SUCCESS, c.queue(0).submit(BlockRequest.read(MemoryHandler.VOLUME, 9, 1,
                    ScatterList.wrap(back), null, Protection.insertStrip(9))).get(10, TimeUnit.SECONDS).status());
            assertArrayEquals(d, back);
        }
    }

    @Test
    void badMagicInTheReplyFailsTheConnect() throws Exception {
        fakeTarget(t -> {
            t.readFrame(false);
            ByteBuffer h = RawPeer.header(Protocol.OP_HELLO_REPLY, 0, 0, 0);
            h.putInt(0, 0x12345678);
            t.sendFrame(h, null);
        });
        IOException e = assertThrows(IOException.class, () -> transport.connect(address(), new ConnectOptions(1, 4)));
        assertTrue(e.getMessage().contains("bad magic 0x12345678"), e.getMessage());
        assertNotNull(log.awaitWarning(5000, "127.0.0.1:" + server.getLocalPort(), "bad magic 0x12345678"));
        assertCanConnectAgain();
    }

    @Test
    void aVolumeListThatLiesAboutItsCountFailsTheConnect() throws Exception {
        fakeTarget(t -> {
            t.readFrame(false);
            byte[] list = ByteBuffer.allocate(8).putInt(1_000_000).putInt(0).array();
            ByteBuffer h = RawPeer.header(Protocol.OP_HELLO_REPLY, 0, 0, list.length);
            h.putInt(Protocol.O_MAX_TRANSFER, 1 << 16).putShort(Protocol.O_QUEUE_DEPTH, (short) 4);
            t.sendFrame(h, list);
        });
        IOException e = assertThrows(IOException.class, () -> transport.connect(address(), new ConnectOptions(1, 4)));
        assertTrue(e.getMessage().contains("volume list claims 1000000 volumes"), e.getMessage());
    }

    @Test
    void aTargetThatNeverAnswersTheHelloTimesOut() throws Exception {
        fakeTarget(t -> t.readFrame(false));
        IOException e = assertThrows(IOException.class, () -> transport.connect(address(), new ConnectOptions(1, 4)));
        assertTrue(e.getMessage().contains("cannot connect"), e.getMessage());
    }

    @Test
    void responseToAnUnknownCommandId() throws Exception {
        assertFailsWith(t -> {
            greet(t, 0);
            RawPeer.Frame req = t.readFrame(true);
            ByteBuffer h = response(req, Status.SUCCESS, 0);
            h.putInt(Protocol.O_COMMAND_ID, req.commandId() + 1);
            t.sendFrame(h, null);
        }, "response to unknown command id");
    }

    @Test
    void responseLengthBeyondTheNegotiatedMaximum() throws Exception {
        assertFailsWith(t -> {
            greet(t, 0);
            RawPeer.Frame req = t.readFrame(true);
            t.sendFrame(response(req, Status.SUCCESS, (1 << 16) + 1), null);
        }, "beyond the negotiated maximum of 65536");
    }

    @Test
    void readResponseOfTheWrongLength() throws Exception {
        assertFailsWith(t -> {
            greet(t, 0);
            RawPeer.Frame req = t.readFrame(true);
            t.sendFrame(response(req, Status.SUCCESS, 4096), new byte[4096]);
        }, "carries 4096 payload bytes, the command needs 4104");
    }

    @Test
    void unknownOpcodeFromTheTarget() throws Exception {
        assertFailsWith(t -> {
            greet(t, 0);
            t.readFrame(true);
            t.sendFrame(RawPeer.header(0x99, 0, 0, 0), null);
        }, "unknown opcode 0x99");
    }

    @Test
    void aVolumesAnswerThatWasNotAskedFor() throws Exception {
        assertFailsWith(t -> {
            greet(t, 0);
            t.readFrame(true);
            byte[] list = WireVolume.encode(List.of(new WireVolume(1, new VolumeInfo("v", 64, F))), 1 << 20);
            ByteBuffer h = RawPeer.header(Protocol.OP_VOLUMES | Protocol.RESPONSE, 0, 1, list.length);
            h.putShort(Protocol.O_STATUS, (short) Protocol.statusCode(Status.SUCCESS));
            t.sendFrame(h, list);
        }, "a VOLUMES answer to command 0x1, which was not asked");
    }

    @Test
    void unknownStatusCode() throws Exception {
        assertFailsWith(t -> {
            greet(t, 0);
            RawPeer.Frame req = t.readFrame(true);
            ByteBuffer h = response(req, Status.SUCCESS, 0);
            h.putShort(Protocol.O_STATUS, (short) 999);
            t.sendFrame(h, null);
        }, "unknown status code 999");
    }

    @Test
    void truncatedResponse() throws Exception {
        assertFailsWith(t -> {
            greet(t, 0);
            RawPeer.Frame req = t.readFrame(true);
            t.sendFrame(response(req, Status.SUCCESS, 4104), null);
            t.sendRaw(new byte[100]);
            t.close();
        }, "truncated frame: the connection ended after 100 of the 4104 payload bytes");
    }

    @Test
    void dataDigestMismatchOnARead() throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.dataDigest = true;
        cfg.headerDigest = true;
        cfg.maxTransferBytes = 1 << 16;
        transport.close();
        transport = new TcpTransport(cfg);
        assertFailsWith(t -> {
            greet(t, Protocol.DIGEST_DATA | Protocol.DIGEST_HEADER);
            RawPeer.Frame req = t.readFrame(true);
            byte[] h = response(req, Status.SUCCESS, 4104).array();
            t.sendRaw(h);
            t.sendRaw(ByteBuffer.allocate(4).putInt(RawPeer.crc(h, 0, 64)).array());
            t.sendRaw(new byte[4104]);
            t.sendRaw(new byte[] {1, 2, 3, 4});
        }, "data digest mismatch");
    }

    @Test
    void aTargetThatVanishesFailsEveryOutstandingRequest() throws Exception {
        fakeTarget(t -> {
            greet(t, 0);
            for (int i = 0; i < 4; i++) {
                t.readFrame(true);
            }
            t.socket.setSoLinger(true, 0); // reset, as a crashed process would
            t.close();
        });
        try (HostConnection c = transport.connect(address(), new ConnectOptions(1, 4))) {
            List<CompletableFuture<Completion>> all = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                all.add(read(c, i));
            }
            for (CompletableFuture<Completion> f : all) {
                Completion done = f.get(10, TimeUnit.SECONDS);
                assertEquals(Status.TRANSPORT_ERROR, done.status(), done.toString());
            }
            assertNotNull(log.awaitWarning(5000, "127.0.0.1:" + server.getLocalPort()), log.warnings().toString());
        }
        assertCanConnectAgain();
    }

    @Test
    void aSilentTargetHitsTheRequestTimeout() throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.requestTimeoutMillis = 300;
        transport.close();
        transport = new TcpTransport(cfg);
        fakeTarget(t -> {
            greet(t, 0);
            t.readFrame(true);
        });
        try (HostConnection c = transport.connect(address(), new ConnectOptions(1, 4))) {
            Completion done = read(c, 1).get(10, TimeUnit.SECONDS);
            assertEquals(Status.TRANSPORT_ERROR, done.status());
            assertTrue(done.message().contains("no response to READ command"), done.message());
        }
    }

    @Test
    void aTargetSilentOnVolumesHitsTheRequestTimeout() throws Exception {
        TcpConfig cfg = TcpConfig.defaults();
        cfg.requestTimeoutMillis = 300;
        transport.close();
        transport = new TcpTransport(cfg);
        fakeTarget(t -> {
            greet(t, 0, Protocol.FEATURE_VOLUME_LIST);
            assertEquals(Protocol.OP_VOLUMES, t.readFrame(false).opcode()); // and never answered
        });
        try (HostConnection c = transport.connect(address(), new ConnectOptions(1, 4))) {
            java.util.concurrent.CompletableFuture<List<VolumeInfo>> f = c.relistVolumes();
            assertEquals(List.of(new VolumeInfo("v", 64, F)), f.get(10, TimeUnit.SECONDS),
                    "the list known, once the silent connection is closed");
            assertNotNull(log.awaitWarning(5000, "no answer to VOLUMES within 300 ms"), log.warnings().toString());
        }
    }
}
