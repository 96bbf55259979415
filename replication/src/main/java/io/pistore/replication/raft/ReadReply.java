package io.pistore.replication.raft;

import java.nio.ByteBuffer;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * A replica's answer to a read: the index of the last log entry it had applied when it read (so a
 * second replica can be asked for the same block at least that fresh), then data and metadata.
 * Layout: {@code appliedIndex(8) dataBytes(4) metadataBytes(4) data metadata}.
 */
public final class ReadReply {
    public final long appliedIndex;
    public final ByteBuffer data;
    public final ByteBuffer metadata;

    ReadReply(long appliedIndex, ByteBuffer data, ByteBuffer metadata) {
        this.appliedIndex = appliedIndex;
        this.data = data;
        this.metadata = metadata;
    }

    static Message encode(long appliedIndex, byte[] data, byte[] metadata) {
        byte[] a = new byte[16 + data.length + metadata.length];
        ByteBuffer.wrap(a).putLong(appliedIndex).putInt(data.length).putInt(metadata.length).put(data).put(metadata);
        return Message.valueOf(UnsafeByteOperations.unsafeWrap(a));
    }

    public static ReadReply decode(ByteString bytes) {
        ByteBuffer b = bytes.asReadOnlyByteBuffer();
        long applied = b.getLong();
        int dl = b.getInt();
        int ml = b.getInt();
        if (b.remaining() != (long) dl + ml) {
            throw new IllegalArgumentException("read reply says " + dl + "+" + ml + " bytes, carries " + b.remaining());
        }
        ByteBuffer data = b.slice().limit(dl);
        b.position(b.position() + dl);
        ByteBuffer meta = b.slice().limit(ml);
        return new ReadReply(applied, data, meta);
    }
}
