package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.GatheringByteChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The input side of {@link PduChannel}: PDUs framed independently (length, padding, digests with the
 * JDK's CRC32C) are read back whole, whatever the socket gives per call; a data segment the reader
 * places ({@link PduChannel.Placement}) lands in its buffer, between the position and limit the
 * reader set, which stay as they were, and the bytes around it are untouched; the data digest covers
 * the padding (segments of every length modulo 4), and a wrong one is a protocol error whether the
 * segment was placed or not.
 */
class PduChannelInputTest {
    private static final int MAX_RECV = 262_144;
    private static final int[] LENGTHS = {0, 1, 3, 4097, 16_383, 16_384, 16_385, 65_536, 131_072, 200_001, MAX_RECV};

    /** Gives {@code bytes} at most {@code most} at a time, as a socket may. */
    private static InputStream pieces(byte[] bytes, int most) {
        return new InputStream() {
            private int at;

            @Override
            public int read() {
                return at < bytes.length ? bytes[at++] & 0xff : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (at == bytes.length) {
                    return -1;
                }
                int n = Math.min(Math.min(len, most), bytes.length - at);
                System.arraycopy(bytes, at, b, off, n);
                at += n;
                return n;
            }
        };
    }

    private static PduChannel channel(InputStream in, boolean digests) {
        PduChannel c = new PduChannel(in, Channels.newChannel(in), (GatheringByteChannel) null, MAX_RECV, b -> { });
        c.digests(digests, digests);
        return c;
    }

    private static byte[] header(int opcode, int itt) {
        byte[] h = new byte[Pdu.BHS];
        h[0] = (byte) opcode;
        h[1] = (byte) 0x80;
        h[16] = (byte) (itt >>> 24);
        h[17] = (byte) (itt >>> 16);
        h[18] = (byte) (itt >>> 8);
        h[19] = (byte) itt;
        return h;
    }

    @ParameterizedTest(name = "digests {0}, at most {1} bytes a read")
    @CsvSource({"false, 1000000", "true, 1000000", "false, 7777", "true, 7777", "true, 1"})
    void everySegmentArrivesWholeWhereverItIsPlaced(boolean digests, int most) throws IOException {
        Random r = new Random(most * 31L + (digests ? 1 : 0));
        int count = most == 1 ? 12 : 60;
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        List<byte[]> sent = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] d = new byte[LENGTHS[r.nextInt(LENGTHS.length)]];
            r.nextBytes(d);
            sent.add(d);
            PduChannelTest.frame(wire, header(i % 2 == 0 ? Pdu.SCSI_COMMAND : Pdu.DATA_OUT, i), d, digests);
        }
        PduChannel c = channel(pieces(wire.toByteArray(), most), digests);
        Map<Integer, ByteBuffer> placed = new HashMap<>();
        List<Integer> asked = new ArrayList<>();
        c.placeDataWith((p, len) -> {
            asked.add(len);
            if (p.itt() % 3 == 0) {
                return null; // this one goes to an array after all
            }
            ByteBuffer b = ByteBuffer.allocateDirect(len + 100);
            b.position(37).limit(37 + len);
            placed.put(p.itt(), b);
            return b;
        });
        for (int i = 0; i < count; i++) {
            Pdu p = c.read();
            byte[] want = sent.get(i);
            assertEquals(i, p.itt());
            assertEquals(want.length, p.dataLength(), "segment " + i);
            ByteBuffer b = placed.get(i);
            if (b == null) {
                assertNull(p.placed);
                assertArrayEquals(want, p.data, "segment " + i + " in an array");
                continue;
            }
            assertSame(b, p.placed);
            assertEquals(0, p.data.length);
            assertEquals(37, b.position(), "the position is left as it was");
            assertEquals(37 + want.length, b.limit(), "the limit is left as it was");
            byte[] got = new byte[want.length];
            b.get(37, got);
            assertArrayEquals(want, got, "segment " + i + " placed");
            ByteBuffer whole = b.duplicate().clear();
            for (int k = 0; k < 37; k++) {
                assertEquals(0, whole.get(k), "nothing before the position");
            }
            for (int k = 37 + want.length; k < whole.capacity(); k++) {
                assertEquals(0, whole.get(k), "nothing after the limit");
            }
        }
        assertNull(c.read(), "then the end of the stream");
        long large = sent.stream().filter(d -> d.length >= 16_384).count();
        assertEquals(large, asked.size(), "the reader is asked for each segment of 16 KiB or more, and only those");
        assertTrue(asked.stream().allMatch(n -> n >= 16_384));
    }

    @ParameterizedTest(name = "placed {0}")
    @CsvSource({"true", "false"})
    void aWrongDataDigestIsAProtocolError(boolean place) throws IOException {
        byte[] d = new byte[65_536];
        new Random(5).nextBytes(d);
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        PduChannelTest.frame(wire, header(Pdu.SCSI_COMMAND, 1), d, true);
        byte[] bytes = wire.toByteArray();
        bytes[Pdu.BHS + 4 + 1000] ^= 0x10; // one bit of the data segment, after the header and its digest
        PduChannel c = channel(pieces(bytes, 5000), true);
        c.placeDataWith((p, len) -> place ? ByteBuffer.allocateDirect(len) : null);
        IscsiProtocolException e = assertThrows(IscsiProtocolException.class, c::read);
        assertTrue(e.getMessage().startsWith("data digest error"), e.getMessage());
    }
}
