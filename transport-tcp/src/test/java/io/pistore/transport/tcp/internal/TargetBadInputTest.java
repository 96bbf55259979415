package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetListener;
import io.pistore.transport.tcp.TcpConfig;
import io.pistore.testkit.Eventually;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bad input at the target: each case closes only the offending connection, with one warning line
 * naming the peer and the reason; a connection opened before goes on working, and new ones are
 * accepted.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class TargetBadInputTest {
    static final BlockFormat F = BlockFormat.of(4096, 8);
    static final int BS = F.blockSize();

    TcpTransport transport;
    /** The hosts' side, with the default timeouts: the short ones some tests set are the target's. */
    TcpTransport hosts;
    MemoryHandler handler;
    TargetListener listener;
    HostConnection bystander;
    LogCapture log;

    @BeforeEach
    void start() throws Exception {
        log = new LogCapture();
        TcpConfig cfg = TcpConfig.defaults();
        cfg.maxTransferBytes = 1 << 20;
        start(cfg);
    }

    void start(TcpConfig cfg) throws Exception {
        transport = new TcpTransport(cfg);
        handler = new MemoryHandler(F, 64);
        listener = transport.listen("127.0.0.1:0", handler);
        TcpConfig hostCfg = TcpConfig.defaults();
        hostCfg.maxTransferBytes = cfg.maxTransferBytes;
        hosts = new TcpTransport(hostCfg);
        bystander = hosts.connect(listener.address(), new ConnectOptions(1, 4));
        roundTrip(bystander, 1);
    }

    @AfterEach
    void stop() {
        hosts.close();
        transport.close();
        log.close();
    }

    /** A PRACT write and read through a real host connection. */
    static void roundTrip(HostConnection c, long lba) throws Exception {
        byte[] d = new byte[4096];
        new Random(lba).nextBytes(d);
        Completion w = c.queue(0).submit(BlockRequest.write(MemoryHandler.VOLUME, lba, 1, ScatterList.wrap(d), null,
                Protection.insertStrip(lba), false)).get(10, TimeUnit.SECONDS);
        assertEquals(Status.SUCCESS, w.status(), w.toString());
        byte[] back = new byte[4096];
        Completion r = c.queue(0).submit(BlockRequest.read(MemoryHandler.VOLUME, lba, 1, ScatterList.wrap(back), null,
                Protection.insertStrip(lba))).get(10, TimeUnit.SECONDS);
        assertEquals(Status.SUCCESS, r.status(), r.toString());
        assertArrayEquals(d, back);
    }

    /** The connection was closed with a warning naming the peer and the reason; everyone else goes on. */
    void assertClosedFor(RawPeer p, String reason) throws Exception {
        String peer = p.localName();
        assertTrue(p.closedByPeer(), "the target should close the connection");
        String line = log.awaitWarning(5000, peer, reason);
        assertNotNull(line, "no warning naming " + peer + " and '" + reason + "' in " + log.warnings());
        assertFalse(line.contains("\n"), "one line");
        assertTrue(handler.connections.contains("connected " + peer), handler.connections.toString());
        Eventually.await("the handler to hear why " + peer + " was disconnected (" + reason + ")",
                () -> handler.connections.stream().anyMatch(e -> e.startsWith("disconnected " + peer + " ")
                        && e.contains(reason)));
        roundTrip(bystander, 2);
        try (HostConnection fresh = hosts.connect(listener.address(), new ConnectOptions(1, 2))) {
            roundTrip(fresh, 3);
        }
    }

    RawPeer raw() throws Exception {
        return RawPeer.connect(listener.address());
    }

    @Test
    void badMagic() throws Exception {
        try (RawPeer p = raw()) {
            ByteBuffer h = RawPeer.hello(1 << 16, 4, 0);
            h.putInt(0, 0xDEADBEEF);
            p.sendFrame(h, null);
            assertClosedFor(p, "bad magic 0xdeadbeef");
        }
    }

    @Test
    void badVersion() throws Exception {
        try (RawPeer p = raw()) {
            ByteBuffer h = RawPeer.hello(1 << 16, 4, 0);
            h.put(Protocol.O_VERSION, (byte) 9);
            p.sendFrame(h, null);
            assertClosedFor(p, "unsupported protocol version 9");
        }
    }

    @Test
    void firstFrameMustBeHello() throws Exception {
        try (RawPeer p = raw()) {
            p.sendFrame(RawPeer.request(Protocol.OP_READ, 0, 1, 0, 1, 1, 0, 0, 0, 0), null);
            assertClosedFor(p, "the first frame must be HELLO");
        }
    }

    @Test
    void hugeLengthBeforeTheHandshakeAllocatesNothing() throws Exception {
        try (RawPeer p = raw()) {
            ByteBuffer h = RawPeer.hello(1 << 16, 4, 0);
            h.putInt(Protocol.O_PAYLOAD_LENGTH, 0xFFFFFFF0);
            p.sendFrame(h, null);
            assertClosedFor(p, "beyond the handshake limit");
        }
    }

    @Test
    void lengthBeyondTheNegotiatedMaximum() throws Exception {
        try (RawPeer p = raw()) {
            RawPeer.Frame reply = p.greet(1 << 16, 4, 0);
            assertEquals(Protocol.OP_HELLO_REPLY, reply.opcode());
            assertEquals(1 << 16, reply.header.getInt(Protocol.O_MAX_TRANSFER));
            p.sendFrame(RawPeer.request(Protocol.OP_WRITE, 0, 1, (1 << 16) + 1, 1, 16, 0, 0, 0, 0), null);
            assertClosedFor(p, "beyond the negotiated maximum of 65536");
        }
    }

    @Test
    void unknownOpcode() throws Exception {
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 4, 0);
            p.sendFrame(RawPeer.request(0x42, 0, 1, 0, 1, 1, 0, 0, 0, 0), null);
            assertClosedFor(p, "unknown opcode 0x42");
        }
    }

    @Test
    void secondHello() throws Exception {
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 4, 0);
            p.sendFrame(RawPeer.hello(1 << 16, 4, 0), null);
            assertClosedFor(p, "a second HELLO");
        }
    }

    @Test
    void unknownFlags() throws Exception {
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 4, 0);
            p.sendFrame(RawPeer.request(Protocol.OP_FLUSH, 0x8000, 1, 0, 1, 0, 0, 0, 0, 0), null);
            assertClosedFor(p, "unknown flags 0x8000");
        }
    }

    /** The metadata-only flag: only once HELLO got the feature, only on a READ, and alone. */
    @Test
    void metadataOnlyFlagWithoutTheFeature() throws Exception {
        misusedMetadataFlag(0, Protocol.OP_READ, 0, "a metadata-only READ without the metadata-only reads feature");
    }

    @Test
    void metadataOnlyFlagOnAWrite() throws Exception {
        misusedMetadataFlag(Protocol.FEATURE_METADATA_READS, Protocol.OP_WRITE, 0, "the metadata-only flag on WRITE");
    }

    @Test
    void metadataOnlyFlagWithAnotherFlag() throws Exception {
        misusedMetadataFlag(Protocol.FEATURE_METADATA_READS, Protocol.OP_READ, Protocol.F_CHECK_GUARD,
                "only a READ carries it, and no other flag");
    }

    /** VOLUMES: answered with the list at once, on the same connection; only with the feature, bare. */
    @Test
    void volumesIsAnsweredWithTheListAndTheConnectionGoesOn() throws Exception {
        try (RawPeer p = raw()) {
            RawPeer.Frame reply = p.greet(1 << 16, 4, 0, Protocol.FEATURE_VOLUME_LIST);
            assertEquals(Protocol.FEATURE_VOLUME_LIST, reply.header.get(Protocol.O_FEATURES), "granted what was asked");
            p.sendFrame(RawPeer.header(Protocol.OP_VOLUMES, 0, 0x77, 0), null);
            RawPeer.Frame f = p.readFrame(false);
            assertEquals(Protocol.OP_VOLUMES | Protocol.RESPONSE, f.opcode());
            assertEquals(0x77, f.commandId());
            assertEquals(Status.SUCCESS, Protocol.status(f.header.getShort(Protocol.O_STATUS)));
            assertArrayEquals(reply.payload, f.payload, "the list the greeting carried, ids included");
            p.sendFrame(RawPeer.request(Protocol.OP_FLUSH, 0, 0x78, 0, 1, 0, 0, 0, 0, 0), null);
            assertEquals(Status.SUCCESS, Protocol.status(p.readFrame(false).header.getShort(Protocol.O_STATUS)));
        }
    }

    @Test
    void volumesWithoutTheFeature() throws Exception {
        misusedVolumes(0, 0, 0, "VOLUMES without the volume list feature");
    }

    @Test
    void volumesWithAFlag() throws Exception {
        misusedVolumes(Protocol.FEATURE_VOLUME_LIST, Protocol.F_FUA, 0, "VOLUMES with flags 0x1");
    }

    @Test
    void volumesWithAPayload() throws Exception {
        misusedVolumes(Protocol.FEATURE_VOLUME_LIST, 0, 8, "and a payload of 8 bytes (it carries neither)");
    }

    /** A peer that asked for {@code features} sends VOLUMES with {@code flags} and a payload of {@code len}: closed for {@code reason}. */
    /**
     * A full store answers NO_SPACE to a host that asked for it (pistore's own), MEDIA_ERROR to one that
     * did not (it would close the connection on a code it does not know); either way the connection goes on.
     */
    @Test
    void aFullStoreIsNoSpaceToHostsThatKnowItAndMediaErrorToOthers() throws Exception {
        handler.full = true;
        byte[] d = new byte[4096];
        Completion c = bystander.queue(0).submit(BlockRequest.write(MemoryHandler.VOLUME, 2, 1, ScatterList.wrap(d),
                null, Protection.insertStrip(2), false)).get(10, TimeUnit.SECONDS);
        assertEquals(Status.NO_SPACE, c.status(), c.toString());
        assertTrue(c.message().endsWith("No space left on device"), c.message());
        try (RawPeer p = raw()) {
            RawPeer.Frame reply = p.greet(1 << 16, 4, 0, 0);
            assertEquals(0, reply.header.get(Protocol.O_FEATURES));
            p.sendFrame(RawPeer.request(Protocol.OP_WRITE, 0, 7, BS, 1, 1, 2, 2, 0, 0), new byte[BS]);
            RawPeer.Frame answer = p.readFrame(false);
            assertEquals(Protocol.statusCode(Status.MEDIA_ERROR), answer.header.getShort(Protocol.O_STATUS));
            assertTrue(new String(answer.payload, java.nio.charset.StandardCharsets.UTF_8)
                    .endsWith("No space left on device"), "the target's reason travels with it");
        }
        handler.full = false;
        roundTrip(bystander, 3); // the connection went on
    }

    private void misusedVolumes(int features, int flags, int len, String reason) throws Exception {
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 4, 0, features);
            p.sendFrame(RawPeer.header(Protocol.OP_VOLUMES, flags, 1, len), len == 0 ? null : new byte[len]);
            assertClosedFor(p, reason);
        }
    }

    /** A peer that asked for {@code features} sends {@code op} with the metadata-only flag and {@code more}: closed for {@code reason}. */
    private void misusedMetadataFlag(int features, int op, int more, String reason) throws Exception {
        handler.servesMetadataOnly = true;
        try (RawPeer p = raw()) {
            RawPeer.Frame reply = p.greet(1 << 16, 4, 0, features);
            assertEquals(features, reply.header.get(Protocol.O_FEATURES), "granted what was asked");
            p.sendFrame(RawPeer.request(op, Protocol.F_METADATA_ONLY | more, 1, 0, 1, 1, 0, 0, 0, 0), null);
            assertClosedFor(p, reason);
        }
    }

    @Test
    void truncatedHeader() throws Exception {
        try (RawPeer p = raw()) {
            p.sendRaw(Arrays.copyOf(RawPeer.hello(1 << 16, 4, 0).array(), 30));
            p.socket.shutdownOutput();
            assertClosedFor(p, "truncated frame: the connection ended after 30 of the 64 header bytes");
        }
    }

    /** Restarts the target with short timeouts (the frame timer runs once a second). */
    void restartWithShortTimeouts() throws Exception {
        hosts.close();
        transport.close();
        TcpConfig cfg = TcpConfig.defaults();
        cfg.frameTimeoutMillis = 300;
        cfg.connectTimeoutMillis = 300;
        start(cfg);
    }

    @Test
    void aPeerThatStallsMidPayloadIsClosed() throws Exception {
        restartWithShortTimeouts();
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 4, 0);
            p.sendFrame(RawPeer.request(Protocol.OP_WRITE, 0, 1, BS, 1, 1, 0, 0, 0, 0), null);
            p.sendRaw(new byte[1000]); // and then nothing, with the socket left open
            assertClosedFor(p, "stalled mid-frame");
            assertTrue(handler.requests.stream().noneMatch(r -> r.lba() == 0), "nothing reaches the handler");
        }
    }

    @Test
    void aPeerThatStallsMidHeaderIsClosed() throws Exception {
        restartWithShortTimeouts();
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 4, 0);
            p.sendRaw(Arrays.copyOf(RawPeer.request(Protocol.OP_FLUSH, 0, 1, 0, 1, 0, 0, 0, 0, 0).array(), 20));
            assertClosedFor(p, "stalled mid-frame: no byte for");
        }
    }

    @Test
    void aPeerThatNeverSaysHelloIsClosed() throws Exception {
        restartWithShortTimeouts();
        try (RawPeer p = raw()) {
            assertClosedFor(p, "no HELLO within 300 ms");
        }
    }

    @Test
    void truncatedPayload() throws Exception {
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 4, 0);
            p.sendFrame(RawPeer.request(Protocol.OP_WRITE, 0, 1, BS, 1, 1, 0, 0, 0, 0), null);
            p.sendRaw(new byte[1000]);
            p.socket.shutdownOutput();
            assertClosedFor(p, "truncated frame: the connection ended after 1000 of the 4104 payload bytes of a WRITE");
            assertTrue(handler.requests.stream().noneMatch(r -> r.lba() == 0), "nothing reaches the handler");
        }
    }

    @Test
    void headerDigestMismatch() throws Exception {
        try (RawPeer p = raw()) {
            RawPeer.Frame reply = p.greet(1 << 16, 4, Protocol.DIGEST_HEADER);
            assertEquals(Protocol.DIGEST_HEADER, reply.header.get(Protocol.O_DIGESTS));
            byte[] h = RawPeer.request(Protocol.OP_FLUSH, 0, 1, 0, 1, 0, 0, 0, 0, 0).array();
            p.sendRaw(h);
            p.sendRaw(ByteBuffer.allocate(4).putInt(RawPeer.crc(h, 0, h.length) ^ 1).array());
            assertClosedFor(p, "header digest mismatch");
        }
    }

    @Test
    void dataDigestMismatchStoresNothing() throws Exception {
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 4, Protocol.DIGEST_HEADER | Protocol.DIGEST_DATA);
            byte[] payload = wirePayload(20, 1, false);
            byte[] h = RawPeer.request(Protocol.OP_WRITE, Protocol.F_PRACT | Protocol.F_CHECK_GUARD, 1, BS, 1, 1, 20,
                    20, 0, 0).array();
            p.sendRaw(h);
            p.sendRaw(ByteBuffer.allocate(4).putInt(RawPeer.crc(h, 0, h.length)).array());
            p.sendRaw(payload);
            p.sendRaw(ByteBuffer.allocate(4).putInt(RawPeer.crc(payload, 0, payload.length) + 1).array());
            assertClosedFor(p, "data digest mismatch on a WRITE frame of 4104 bytes");
            assertTrue(handler.requests.stream().noneMatch(r -> r.lba() == 20), "the write never reached the handler");
        }
    }

    @Test
    void moreCommandsThanTheNegotiatedDepth() throws Exception {
        handler.hold = true;
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 1, 0);
            p.sendFrame(RawPeer.request(Protocol.OP_FLUSH, 0, 1, 0, 1, 0, 0, 0, 0, 0), null);
            p.sendFrame(RawPeer.request(Protocol.OP_FLUSH, 0, 2, 0, 1, 0, 0, 0, 0, 0), null);
            String peer = p.localName();
            assertTrue(p.closedByPeer());
            assertNotNull(log.awaitWarning(5000, peer, "more than the negotiated 1 commands outstanding"));
        } finally {
            handler.hold = false;
            handler.releaseReversed();
        }
        roundTrip(bystander, 4);
    }

    // ------------------------------------------------------------------ request errors keep the connection

    /** One block at {@code lba} as the wire carries it: data then PI (generated, or with a broken guard). */
    static byte[] wirePayload(long lba, int blocks, boolean badGuard) {
        byte[] b = new byte[blocks * BS];
        Random r = new Random(lba);
        for (int i = 0; i < blocks; i++) {
            byte[] d = new byte[4096];
            r.nextBytes(d);
            System.arraycopy(d, 0, b, i * BS, 4096);
        }
        Pi.generate(PiContext.builder(F).initialRefTag(lba).build(), ScatterList.wrap(b), blocks);
        if (badGuard) {
            b[BS + 4096] ^= 1; // block 1's guard
        }
        return b;
    }

    @Test
    void badPiOnWriteIsAnsweredWithTheErrorAndNeverStored() throws Exception {
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 4, 0);
            byte[] payload = wirePayload(30, 2, true);
            p.sendFrame(RawPeer.request(Protocol.OP_WRITE, Protocol.F_CHECK_GUARD | Protocol.F_CHECK_REF, 7,
                    payload.length, 1, 2, 30, 30, 0, 0), payload);
            RawPeer.Frame f = p.readFrame(true);
            assertEquals(Protocol.OP_WRITE | Protocol.RESPONSE, f.opcode());
            assertEquals(7, f.commandId());
            assertEquals(Protocol.statusCode(Status.GUARD_CHECK), f.header.getShort(Protocol.O_STATUS));
            assertEquals(1, f.header.getInt(Protocol.O_ERROR_BLOCK));
            assertEquals(31, f.header.getLong(Protocol.O_ERROR_LBA));
            assertTrue(handler.requests.stream().noneMatch(r -> r.lba() == 30), "the write never reached the handler");
            // the connection goes on: a good write
            byte[] good = wirePayload(30, 2, false);
            p.sendFrame(RawPeer.request(Protocol.OP_WRITE, Protocol.F_CHECK_GUARD | Protocol.F_CHECK_REF, 8,
                    good.length, 1, 2, 30, 30, 0, 0), good);
            f = p.readFrame(true);
            assertEquals(8, f.commandId());
            assertEquals(0, f.header.getShort(Protocol.O_STATUS));
        }
    }

    @Test
    void requestErrorsAreAnsweredAndTheConnectionGoesOn() throws Exception {
        try (RawPeer p = raw()) {
            p.greet(1 << 16, 4, 0);
            byte[] one = wirePayload(0, 1, false);
            p.sendFrame(RawPeer.request(Protocol.OP_WRITE, 0, 1, one.length, 99, 1, 0, 0, 0, 0), one);
            assertStatus(p.readFrame(true), 1, Status.NO_SUCH_VOLUME);
            p.sendFrame(RawPeer.request(Protocol.OP_WRITE, 0, 2, one.length, 1, 2, 0, 0, 0, 0), one);
            assertStatus(p.readFrame(true), 2, Status.INVALID_FIELD);
            p.sendFrame(RawPeer.request(Protocol.OP_READ, 0, 3, 0, 1, 1, 64, 0, 0, 0), null);
            assertStatus(p.readFrame(true), 3, Status.LBA_OUT_OF_RANGE);
            p.sendFrame(RawPeer.request(Protocol.OP_READ, 0, 4, 0, 1, 0, 0, 0, 0, 0), null);
            assertStatus(p.readFrame(true), 4, Status.INVALID_FIELD);
            p.sendFrame(RawPeer.request(Protocol.OP_READ, Protocol.F_CHECK_REF, 5, 0, 1, 1, 0, 1L << 33, 0, 0), null);
            assertStatus(p.readFrame(true), 5, Status.INVALID_FIELD);
            p.sendFrame(RawPeer.request(Protocol.OP_READ, 0, 6, 0, 1, 32, 0, 0, 0, 0), null);
            RawPeer.Frame f = p.readFrame(true);
            assertStatus(f, 6, Status.INVALID_FIELD);
            assertTrue(new String(f.payload).contains("exceed the largest transfer of 65536"),
                    new String(f.payload));
            p.sendFrame(RawPeer.request(Protocol.OP_READ, 0, 7, 0, 1, 1, 0, 0, 0, 0), null);
            f = p.readFrame(true);
            assertStatus(f, 7, Status.SUCCESS);
            assertEquals(BS, f.payload.length, "a read carries data and PI, interleaved");
        }
    }

    private static void assertStatus(RawPeer.Frame f, int cid, Status s) {
        assertEquals(cid, f.commandId());
        assertEquals(Protocol.statusCode(s), f.header.getShort(Protocol.O_STATUS),
                "status of command " + cid + ": " + new String(f.payload));
    }

    @Test
    void passWriteWithAllChecksIsCheckedOnceInTheTransport() throws Exception {
        try (HostConnection c = hosts.connect(listener.address(), new ConnectOptions(1, 4))) {
            byte[] d = new byte[2 * 4096];
            byte[] m = new byte[16];
            new Random(5).nextBytes(d);
            PiContext ctx = PiContext.builder(F).initialRefTag(40).appTag(0x77).build();
            Pi.generate(ctx, ScatterList.wrap(d), ScatterList.wrap(m), 2);
            handler.requests.clear();
            handler.duties.clear();
            Completion w = c.queue(0).submit(BlockRequest.write(MemoryHandler.VOLUME, 40, 2, ScatterList.wrap(d),
                    ScatterList.wrap(m), Protection.pass(CheckFlags.ALL, 40, 0x77, 0xFFFF), false)).get(10, TimeUnit.SECONDS);
            assertEquals(Status.SUCCESS, w.status(), w.toString());
            assertEquals(1, handler.requests.size());
            assertEquals(CheckFlags.ALL, handler.duties.get(0).checked(), "the transport checked the PI, the engine must not again");
            assertEquals(io.pistore.spi.PiDuty.Hop.WIRE, handler.duties.get(0).checker());
            assertArrayEquals(m, Arrays.copyOfRange(handler.meta, 40 * 8, 42 * 8));
        }
    }
}
