package io.pistore.replication.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.BytesValue;
import org.junit.jupiter.api.Test;

class RpcFrameTest {
    /** The frame as its reader gets it: the length prefix taken off. */
    private static RpcFrame read(ByteBuffer encoded) {
        int n = encoded.getInt();
        byte[] body = new byte[n];
        encoded.get(body);
        return new RpcFrame(ByteBuffer.wrap(body).getLong(0), body[8], body);
    }

    @Test
    void aBodyRoundTripsWithItsIdAndKind() throws Exception {
        byte[] data = new byte[70_000];
        new Random(7).nextBytes(data);
        RpcFrame f = read(RpcFrame.encode(0x1234_5678_9abcL, RpcFrame.APPEND, BytesValue.of(ByteString.copyFrom(data))));
        assertEquals(0x1234_5678_9abcL, f.id());
        assertEquals(RpcFrame.APPEND, f.kind());
        assertEquals(ByteString.copyFrom(data), f.body(BytesValue.parser()).getValue());
    }

    /**
     * A log entry's data is a view of the frame's array, not a copy: each follower would otherwise
     * copy every entry's data once more as it reads it. Seen through a change to the array.
     */
    @Test
    void aParsedByteStringIsAViewOfTheFramesArray() throws Exception {
        byte[] data = new byte[4096];
        Arrays.fill(data, (byte) 0x5a);
        RpcFrame f = read(RpcFrame.encode(1, RpcFrame.APPEND, BytesValue.of(ByteString.copyFrom(data))));
        ByteString parsed = f.body(BytesValue.parser()).getValue();
        int at = f.frame().length - 1; // the last byte of the frame is the last byte of the data
        f.frame()[at] = 0x11;
        assertEquals(0x11, parsed.byteAt(parsed.size() - 1));
        assertNotEquals(ByteString.copyFrom(data), parsed);
    }

    /** A frame put together in a direct buffer (a channel's own) holds the same bytes as one in a heap array. */
    @Test
    void aFrameInADirectBufferIsTheSameFrame() {
        byte[] data = new byte[10_000];
        new Random(3).nextBytes(data);
        BytesValue body = BytesValue.of(ByteString.copyFrom(data));
        ByteBuffer heap = RpcFrame.encode(99, RpcFrame.CLIENT, body);
        ByteBuffer direct = ByteBuffer.allocateDirect(RpcFrame.frameSize(body) + 100);
        direct.limit(RpcFrame.frameSize(body));
        RpcFrame.encode(99, RpcFrame.CLIENT, body, direct);
        assertEquals(0, direct.position());
        assertEquals(heap.remaining(), direct.remaining());
        assertEquals(heap, direct);
    }
}
