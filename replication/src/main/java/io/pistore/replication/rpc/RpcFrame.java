package io.pistore.replication.rpc;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.BytesValue;
import org.apache.ratis.thirdparty.com.google.protobuf.CodedInputStream;
import org.apache.ratis.thirdparty.com.google.protobuf.CodedOutputStream;
import org.apache.ratis.thirdparty.com.google.protobuf.MessageLite;
import org.apache.ratis.thirdparty.com.google.protobuf.Parser;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;
import org.apache.ratis.util.ProtoUtils;

/**
 * One message of the peers' RPC: {@code length(4) id(8) kind(1) body}, the length counting what
 * follows it, the body one of Ratis's protocol messages (which one the kind says). A reply carries
 * its request's id, so replies may come in any order. A body is parsed with aliasing: the byte
 * strings it holds (a log entry's data) are views of the frame's own array, never copied again.
 */
record RpcFrame(long id, byte kind, byte[] frame) {
    /** The bytes of a frame before its body: id and kind. */
    static final int HEADER = 9;
    /** A frame larger than this is refused: an entry is at most a few MiB, a snapshot chunk 4 MiB. */
    static final int MAX_BYTES = 64 << 20;

    // Requests.
    static final byte APPEND = 1;
    static final byte READ_INDEX = 2;
    static final byte VOTE = 3;
    static final byte START_ELECTION = 4;
    static final byte INSTALL_SNAPSHOT = 5;
    static final byte CLIENT = 6;
    static final byte SET_CONFIGURATION = 7;
    static final byte GROUP_MANAGEMENT = 8;
    static final byte GROUP_LIST = 9;
    static final byte GROUP_INFO = 10;
    static final byte TRANSFER_LEADERSHIP = 11;
    static final byte SNAPSHOT_MANAGEMENT = 12;
    static final byte ELECTION_MANAGEMENT = 13;
    // Replies: the reply message, or the request's failure (a serialized exception).
    static final byte DONE = 64;
    static final byte FAILED = 65;

    /** The whole frame of {@code body} (length prefix included), ready to write. */
    static ByteBuffer encode(long id, byte kind, MessageLite body) {
        ByteBuffer b = ByteBuffer.allocate(frameSize(body));
        encode(id, kind, body, b);
        return b;
    }

    /** The bytes of {@code body}'s whole frame, length prefix included. */
    static int frameSize(MessageLite body) {
        return 4 + HEADER + body.getSerializedSize();
    }

    /**
     * Puts {@code body}'s whole frame into {@code b} from its position, which must leave exactly
     * {@link #frameSize} bytes to its limit; {@code b} is then flipped, ready to write.
     */
    static void encode(long id, byte kind, MessageLite body, ByteBuffer b) {
        int size = b.remaining() - 4 - HEADER;
        b.putInt(HEADER + size).putLong(id).put(kind);
        CodedOutputStream out = CodedOutputStream.newInstance(b);
        try {
            body.writeTo(out);
            out.flush();
            out.checkNoSpaceLeft();
        } catch (IOException e) {
            throw new IllegalStateException("a message changed while it was serialized: " + e, e);
        }
        b.flip();
    }

    /** The {@link #FAILED} reply to request {@code id}: {@code t} serialized, for the caller to throw as it was thrown. */
    static ByteBuffer failure(long id, Throwable t) {
        ByteString thrown;
        try {
            thrown = ProtoUtils.writeObject2ByteString(t);
        } catch (RuntimeException e) { // an exception holding something that does not serialize
            thrown = ProtoUtils.writeObject2ByteString(new IOException(t.toString()));
        }
        return encode(id, FAILED, BytesValue.of(thrown));
    }

    /** What a {@link #FAILED} reply says was thrown. */
    Throwable thrown() {
        try {
            Object o = ProtoUtils.toObject(body(BytesValue.parser()).getValue());
            return o instanceof Throwable t ? t : new IOException("the peer failed the call: " + o);
        } catch (IOException | RuntimeException e) {
            return new IOException("the peer failed the call, and its reason could not be read: " + e, e);
        }
    }

    /**
     * The body, parsed by {@code parser}, its byte strings views of this frame's array. The input
     * comes from a byte string wrapping the array: protobuf aliases only input it was told is
     * immutable, and a stream made from a bare array would copy every byte string out of it.
     */
    <T> T body(Parser<T> parser) throws IOException {
        CodedInputStream in = UnsafeByteOperations.unsafeWrap(frame, HEADER, frame.length - HEADER).newCodedInput();
        in.enableAliasing(true);
        return parser.parseFrom(in);
    }
}
