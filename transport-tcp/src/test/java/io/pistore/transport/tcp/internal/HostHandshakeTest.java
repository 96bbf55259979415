package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The host's handshake on its own: the HELLO's bytes and the checks of what a HELLO_REPLY grants. */
class HostHandshakeTest {
    private static final BlockFormat F = BlockFormat.of(4096, 8);
    private final HostHandshake h = new HostHandshake(1 << 20, 32, 3, Protocol.DIGEST_HEADER, 0x1122334455667788L);

    @Test
    void helloSaysWhatTheHostAsksFor() {
        OutFrame f = h.hello();
        assertTrue(f.isHandshake());
        assertEquals(0, f.payloadLength());
        ByteBuffer d = ByteBuffer.allocate(Protocol.HEADER_SIZE);
        f.writeHeader(d);
        assertEquals(Protocol.HEADER_SIZE, d.position());
        assertEquals(Protocol.MAGIC, d.getInt(Protocol.O_MAGIC));
        assertEquals(Protocol.VERSION, d.get(Protocol.O_VERSION));
        assertEquals(Protocol.OP_HELLO, d.get(Protocol.O_OPCODE));
        assertEquals(1 << 20, d.getInt(Protocol.O_MAX_TRANSFER));
        assertEquals(32, d.getShort(Protocol.O_QUEUE_DEPTH));
        assertEquals(3, d.getShort(Protocol.O_QUEUE_INDEX));
        assertEquals(Protocol.DIGEST_HEADER, d.get(Protocol.O_DIGESTS));
        assertEquals(0x1122334455667788L, d.getLong(Protocol.O_SESSION));
    }

    private static ByteBuffer reply(long maxTransfer, int depth, int digests) {
        ByteBuffer b = ByteBuffer.allocate(Protocol.HEADER_SIZE);
        b.putInt(Protocol.O_MAX_TRANSFER, (int) maxTransfer).putShort(Protocol.O_QUEUE_DEPTH, (short) depth)
                .put(Protocol.O_DIGESTS, (byte) digests);
        return b;
    }

    /** Feeds a HELLO_REPLY carrying {@code vols} and returns what it grants. */
    private HostHandshake.Grant receive(ByteBuffer header, List<WireVolume> vols) throws ProtocolException {
        byte[] list = WireVolume.encode(vols, Protocol.MAX_HANDSHAKE_PAYLOAD);
        PayloadSink sink = h.onReplyHeader(Protocol.OP_HELLO_REPLY, list.length);
        sink.accept(ByteBuffer.wrap(list));
        return h.onReply(header);
    }

    @Test
    void aReplyGrantingLessIsTakenWithItsVolumes() throws Exception {
        VolumeInfo a = new VolumeInfo("a", 100, F);
        VolumeInfo b = new VolumeInfo("b", 7, F);
        HostHandshake.Grant g = receive(reply(65536, 8, Protocol.DIGEST_HEADER),
                List.of(new WireVolume(4, a), new WireVolume(9, b)));
        assertEquals(65536, g.maxTransfer());
        assertEquals(8, g.depth());
        assertTrue(g.headerDigest());
        assertFalse(g.dataDigest());
        assertEquals(List.of(a, b), g.volumes());
        assertEquals(9, g.byName().get("b").id);
        assertThrows(UnsupportedOperationException.class, () -> g.volumes().add(a));
    }

    @Test
    void aReplyGrantingMoreThanAskedIsRefused() {
        List<WireVolume> none = List.of();
        assertEquals("HELLO_REPLY grants a max transfer of 1048577 bytes (asked 1048576)", assertThrows(
                ProtocolException.class, () -> receive(reply((1 << 20) + 1, 8, 0), none)).getMessage());
        assertEquals("HELLO_REPLY grants a max transfer of 0 bytes (asked 1048576)", assertThrows(
                ProtocolException.class, () -> receive(reply(0, 8, 0), none)).getMessage());
        assertEquals("HELLO_REPLY grants a queue depth of 33 (asked 32)", assertThrows(
                ProtocolException.class, () -> receive(reply(4096, 33, 0), none)).getMessage());
        assertEquals("HELLO_REPLY grants a queue depth of 0 (asked 32)", assertThrows(
                ProtocolException.class, () -> receive(reply(4096, 0, 0), none)).getMessage());
        assertEquals("HELLO_REPLY turns on digests 0x3 that were not asked for", assertThrows(
                ProtocolException.class, () -> receive(reply(4096, 8, 3), none)).getMessage());
    }

    @Test
    void theFirstFrameMustBeTheReply() {
        ProtocolException e = assertThrows(ProtocolException.class, () -> h.onReplyHeader(Protocol.OP_READ
                | Protocol.RESPONSE, 0));
        assertEquals("expected HELLO_REPLY, got opcode " + Protocol.opName(Protocol.OP_READ | Protocol.RESPONSE),
                e.getMessage());
    }
}
