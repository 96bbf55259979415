package io.pistore.transport.tcp.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Response decoding on its own: each header check, and what completion a response becomes. */
class ResponseDecoderTest {
    private static final BlockFormat F = BlockFormat.of(512, 0);
    private static final int READ_RESPONSE = Protocol.OP_READ | Protocol.RESPONSE;
    private final CommandSlots<HostCommand> slots = new CommandSlots<>(4);
    private final ResponseDecoder d = new ResponseDecoder();
    private final byte[] data = new byte[2 * 512];
    private final HostCommand read = new HostCommand(BlockRequest.read("v", 10, 2, ScatterList.wrap(data), null,
            Protection.NONE), new WireVolume(1, new VolumeInfo("v", 100, F)), null, new WriteEncoder(), null);
    private final int cid = slots.claim(read);

    private static ByteBuffer header(Status st) {
        return ByteBuffer.allocate(Protocol.HEADER_SIZE).putShort(Protocol.O_STATUS, (short) Protocol.statusCode(st));
    }

    private String refused(int op, int id, long len, ByteBuffer header) {
        return assertThrows(ProtocolException.class, () -> d.onHeader(op, id, len, header, slots)).getMessage();
    }

    @Test
    void aSuccessfulReadCopiesItsPayloadOut() throws Exception {
        PayloadSink sink = d.onHeader(READ_RESPONSE, cid, data.length, header(Status.SUCCESS), slots);
        byte[] wire = new byte[data.length];
        for (int i = 0; i < wire.length; i++) {
            wire[i] = (byte) (i * 7);
        }
        sink.accept(ByteBuffer.wrap(wire, 0, 100));
        sink.accept(ByteBuffer.wrap(wire, 100, wire.length - 100));
        assertSame(read, d.command());
        Completion c = d.complete();
        assertEquals(Status.SUCCESS, c.status());
        assertArrayEquals(wire, data);
        assertNull(d.command(), "ready for the next response");
    }

    /** A metadata-only read's response carries its metadata alone: exactly that many bytes, copied as they come. */
    @Test
    void aMetadataOnlyReadTakesTheMetadataAlone() throws Exception {
        BlockFormat pi = BlockFormat.of(512, 8);
        byte[] meta = new byte[3 * 8];
        HostCommand m = new HostCommand(BlockRequest.readMetadata("p", 4, 3, ScatterList.wrap(meta)),
                new WireVolume(2, new VolumeInfo("p", 100, pi)), null, new WriteEncoder(), null);
        int id = slots.claim(m);
        assertEquals("READ_RESPONSE carries 1560 payload bytes, the command needs 24",
                refused(READ_RESPONSE, id, 3 * 520, header(Status.SUCCESS)));
        PayloadSink sink = d.onHeader(READ_RESPONSE, id, meta.length, header(Status.SUCCESS), slots);
        byte[] wire = new byte[meta.length];
        for (int i = 0; i < wire.length; i++) {
            wire[i] = (byte) (i * 11 + 3);
        }
        sink.accept(ByteBuffer.wrap(wire, 0, 5));
        sink.accept(ByteBuffer.wrap(wire, 5, wire.length - 5));
        assertSame(m, d.command());
        assertEquals(Status.SUCCESS, d.complete().status());
        assertArrayEquals(wire, meta);
    }

    @Test
    void anErrorCarriesItsMessageOrElseTheStatusName() throws Exception {
        byte[] m = "disk on fire".getBytes(StandardCharsets.UTF_8);
        d.onHeader(READ_RESPONSE, cid, m.length, header(Status.MEDIA_ERROR), slots).accept(ByteBuffer.wrap(m));
        Completion c = d.complete();
        assertEquals(Status.MEDIA_ERROR, c.status());
        assertEquals("disk on fire", c.message());
        assertNull(d.onHeader(READ_RESPONSE, cid, 0, header(Status.MEDIA_ERROR), slots));
        assertEquals(Status.MEDIA_ERROR.toString(), d.complete().message());
    }

    @Test
    void aPiErrorIsReportedAtItsBlock() throws Exception {
        ByteBuffer h = header(Status.REF_TAG_CHECK).putInt(Protocol.O_ERROR_BLOCK, 1)
                .putLong(Protocol.O_EXPECTED, 11).putLong(Protocol.O_ACTUAL, 99);
        assertNull(d.onHeader(READ_RESPONSE, cid, 0, h, slots));
        Completion c = d.complete();
        assertEquals(Status.REF_TAG_CHECK, c.status());
        assertEquals(PiErrorKind.REF_TAG, c.piError().kind());
        assertEquals(1, c.piError().blockIndex());
        assertEquals(11, c.piError().expected());
        assertEquals(99, c.piError().actual());
        assertEquals(11, c.errorLba());
    }

    @Test
    void badHeadersAreRefusedWithTheReason() {
        assertEquals("unknown opcode 0x10", refused(Protocol.OP_READ, cid, 0, header(Status.SUCCESS)));
        assertEquals("response to unknown command id 0x10001", refused(READ_RESPONSE, cid + 1, 0,
                header(Status.SUCCESS)));
        assertEquals("response to unknown command id 0x20000", refused(READ_RESPONSE, cid + 0x10000, 0,
                header(Status.SUCCESS)));
        int write = Protocol.OP_WRITE | Protocol.RESPONSE;
        assertEquals("response opcode " + Protocol.opName(write) + " to a " + Protocol.opName(Protocol.OP_READ)
                + " command 0x10000", refused(write, cid, 0, header(Status.SUCCESS)));
        assertEquals("unknown status code 65535", refused(READ_RESPONSE, cid, 0,
                ByteBuffer.allocate(Protocol.HEADER_SIZE).putShort(Protocol.O_STATUS, (short) 0xFFFF)));
        assertEquals(Protocol.opName(READ_RESPONSE) + " carries 512 payload bytes, the command needs 1024",
                refused(READ_RESPONSE, cid, 512, header(Status.SUCCESS)));
        assertEquals("error message of " + (Protocol.MAX_MESSAGE + 1) + " bytes (at most " + Protocol.MAX_MESSAGE
                + ")", refused(READ_RESPONSE, cid, Protocol.MAX_MESSAGE + 1, header(Status.MEDIA_ERROR)));
        assertEquals("PI error in block 2 of a 2-block command", refused(READ_RESPONSE, cid, 0,
                header(Status.GUARD_CHECK).putInt(Protocol.O_ERROR_BLOCK, 2)));
    }
}
