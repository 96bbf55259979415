package io.pistore.replication.raft;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteOutput;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.thirdparty.com.google.protobuf.UnsafeByteOperations;

/**
 * The bytes of a protobuf {@link ByteString} as a {@link ByteBuffer} that the PI kernels can take as
 * they are: {@code ByteString.asReadOnlyByteBuffer} gives a read-only heap buffer, whose array a
 * native kernel cannot reach, so every guard of a replicated write was computed by the Java kernel.
 * Here a string of one piece (what a parsed message or a wrapped array is) comes out as a view of
 * its own array or buffer, not a copy; only a string of several pieces (a rope) is copied. The
 * caller must never write through the view: the string is immutable and may be shared.
 */
final class ProtoBytes {
    private ProtoBytes() {
    }

    static ByteBuffer view(ByteString s) {
        Collector c = new Collector();
        try {
            UnsafeByteOperations.unsafeWriteTo(s, c);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // the collector throws none
        }
        return c.pieces == 1 ? c.one : ByteBuffer.wrap(s.toByteArray());
    }

    /** Keeps the one piece a string hands over; counts pieces, so a rope is noticed. */
    private static final class Collector extends ByteOutput {
        ByteBuffer one; // set by the first piece; used only when it was the only one
        int pieces;

        @Override
        public void write(byte value) {
            pieces += 2; // never a view
        }

        @Override
        public void write(byte[] value, int offset, int length) {
            pieces += 2;
        }

        @Override
        public void writeLazy(byte[] value, int offset, int length) {
            if (length > 0 && pieces++ == 0) {
                one = ByteBuffer.wrap(value, offset, length).slice();
            }
        }

        @Override
        public void write(ByteBuffer value) {
            pieces += 2;
        }

        @Override
        public void writeLazy(ByteBuffer value) {
            if (value.hasRemaining() && pieces++ == 0) {
                one = value.slice();
            }
        }
    }
}
