package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The output side of {@link PduChannel}: what reaches the socket is, byte for byte, the PDUs in the
 * order written (framed here independently: length, padding, digests with the JDK's CRC32C), whether
 * a data segment was copied or passed by reference, whatever the socket takes per call; and data
 * segments passed by reference leave with the next flush, all in one gathering write.
 */
class PduChannelTest {
    /** A socket stand-in that keeps what it is given and takes at most {@code most} bytes per call. */
    private static final class Sink implements GatheringByteChannel {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final int most;
        int calls;

        Sink(int most) {
            this.most = most;
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) {
            calls++;
            long n = 0;
            for (int i = offset; i < offset + length && n < most; i++) {
                while (srcs[i].hasRemaining() && n < most) {
                    bytes.write(srcs[i].get());
                    n++;
                }
            }
            return n;
        }

        @Override
        public long write(ByteBuffer[] srcs) {
            return write(srcs, 0, srcs.length);
        }

        @Override
        public int write(ByteBuffer src) {
            return (int) write(new ByteBuffer[] {src}, 0, 1);
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    private final List<ByteBuffer> givenBack = new ArrayList<>();

    private PduChannel channel(Sink sink, boolean digests) {
        PduChannel c = new PduChannel(new ByteArrayInputStream(new byte[0]), sink, 8192, givenBack::add);
        c.digests(digests, digests);
        return c;
    }

    private static Pdu dataIn(int tag) {
        Pdu p = Pdu.target(Pdu.DATA_IN, 0x80);
        p.set32(16, tag);
        return p;
    }

    /** The wire bytes of a PDU with data segment {@code data}, framed as RFC 7143 says. */
    static void frame(ByteArrayOutputStream out, byte[] bhs, byte[] data, boolean digests) {
        byte[] h = bhs.clone();
        h[4] = 0;
        h[5] = (byte) (data.length >>> 16);
        h[6] = (byte) (data.length >>> 8);
        h[7] = (byte) data.length;
        out.writeBytes(h);
        if (digests) {
            digest(out, h, h.length);
        }
        if (data.length > 0) {
            byte[] padded = new byte[(data.length + 3) & ~3];
            System.arraycopy(data, 0, padded, 0, data.length);
            out.writeBytes(padded);
            if (digests) {
                digest(out, padded, padded.length);
            }
        }
    }

    private static void digest(ByteArrayOutputStream out, byte[] b, int len) {
        CRC32C c = new CRC32C();
        c.update(b, 0, len);
        int v = (int) c.getValue();
        out.write(v);
        out.write(v >>> 8);
        out.write(v >>> 16);
        out.write(v >>> 24);
    }

    private static byte[] random(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    @ParameterizedTest(name = "digests {0}")
    @CsvSource({"false", "true"})
    void largeSegmentsWaitForTheFlushAndLeaveInOneGatheringWrite(boolean digests) throws Exception {
        Sink sink = new Sink(Integer.MAX_VALUE);
        PduChannel c = channel(sink, digests);
        Random r = new Random(7);
        ByteArrayOutputStream want = new ByteArrayOutputStream();
        int[] lengths = {131_072, 4_096, 20_001, 65_536, 16_384, 16_383, 0, 131_070};
        List<ByteBuffer> direct = new ArrayList<>();
        for (int i = 0; i < lengths.length; i++) {
            byte[] data = random(r, lengths[i]);
            Pdu p = dataIn(i);
            ByteBuffer b = ByteBuffer.allocateDirect(data.length + 10).position(5);
            b.put(data).flip().position(5);
            direct.add(b);
            c.write(p, b, false);
            assertEquals(5, b.position(), "the segment is not moved");
            frame(want, p.bhs, data, digests);
        }
        assertEquals(0, sink.calls, "nothing leaves before the flush");
        assertTrue(c.hasPending());
        c.giveBackOnceWritten(direct.get(0));
        assertTrue(givenBack.isEmpty(), "a buffer whose segment waits is not given back");
        c.flush();
        assertFalse(c.hasPending());
        assertEquals(List.of(direct.get(0)), givenBack, "given back once written");
        c.giveBackOnceWritten(direct.get(1));
        assertEquals(List.of(direct.get(0), direct.get(1)), givenBack, "nothing waits: given back at once");
        assertEquals(1, sink.calls, "one gathering write");
        assertArrayEquals(want.toByteArray(), sink.bytes.toByteArray());
    }

    @ParameterizedTest(name = "digests {0}, at most {1} bytes a call")
    @CsvSource({"false, 7777", "true, 7777", "true, 65536", "false, 1"})
    void aSocketThatTakesPiecesGetsEveryByteInOrder(boolean digests, int most) throws Exception {
        Sink sink = new Sink(most);
        PduChannel c = channel(sink, digests);
        Random r = new Random(most);
        ByteArrayOutputStream want = new ByteArrayOutputStream();
        for (int i = 0; i < 12; i++) {
            byte[] data = random(r, most == 1 ? r.nextInt(40_000) : r.nextInt(300_000));
            Pdu p = dataIn(i);
            c.write(p, ByteBuffer.wrap(data), i % 5 == 4);
            frame(want, p.bhs, data, digests);
        }
        c.flush();
        assertArrayEquals(want.toByteArray(), sink.bytes.toByteArray());
    }

    /** More segments or bytes than a gathering write takes at once: written on the way, in order, nothing lost. */
    @ParameterizedTest(name = "{0} segments of {1} bytes")
    @CsvSource({"100, 16384", "40, 262144"})
    void manySegmentsAreWrittenOnTheWay(int count, int length) throws Exception {
        Sink sink = new Sink(Integer.MAX_VALUE);
        PduChannel c = channel(sink, true);
        Random r = new Random(count);
        ByteArrayOutputStream want = new ByteArrayOutputStream();
        for (int i = 0; i < count; i++) {
            byte[] data = random(r, length);
            Pdu p = dataIn(i);
            c.write(p, ByteBuffer.wrap(data), false);
            frame(want, p.bhs, data, true);
            byte[] small = random(r, 100);
            Pdu q = dataIn(10_000 + i);
            c.write(q, ByteBuffer.wrap(small), false);
            frame(want, q.bhs, small, true);
        }
        assertTrue(sink.calls > 0, "bounded: some left before the flush");
        c.flush();
        assertArrayEquals(want.toByteArray(), sink.bytes.toByteArray());
    }
}
