package io.pistore.frontend.nbd;

import java.nio.ByteBuffer;

/** One transmission-phase request header (28 bytes, big-endian). */
final class NbdRequest {
    final int flags;
    final int type;
    final long cookie;
    /** Unsigned on the wire: a value past 2^63 reads as negative and is out of range. */
    final long offset;
    /** Unsigned 32-bit length. */
    final long length;
    /** {@link System#nanoTime} by which the header had arrived whole (0: not known). */
    final long receivedNanos;

    private NbdRequest(int flags, int type, long cookie, long offset, long length, long receivedNanos) {
        this.flags = flags;
        this.type = type;
        this.cookie = cookie;
        this.offset = offset;
        this.length = length;
        this.receivedNanos = receivedNanos;
    }

    /**
     * Consumes one header from {@code in}, which holds at least {@link NbdProtocol#REQUEST_HEADER} bytes
     * and had them by {@code receivedNanos}.
     */
    static NbdRequest parse(ByteBuffer in, long receivedNanos) throws NbdProtocolException {
        int magic = in.getInt();
        if (magic != NbdProtocol.REQUEST_MAGIC) {
            throw new NbdProtocolException("bad request magic 0x" + Integer.toHexString(magic));
        }
        int flags = Short.toUnsignedInt(in.getShort());
        int type = Short.toUnsignedInt(in.getShort());
        long cookie = in.getLong();
        long offset = in.getLong();
        long length = Integer.toUnsignedLong(in.getInt());
        return new NbdRequest(flags, type, cookie, offset, length, receivedNanos);
    }

    /** Whether {@code [offset, offset+length)} lies inside an export of {@code size} bytes. */
    boolean inside(long size) {
        return offset >= 0 && length <= size && offset <= size - length;
    }

    @Override
    public String toString() {
        return NbdProtocol.commandName(type) + " offset=" + Long.toUnsignedString(offset) + " length=" + length
                + (flags != 0 ? " flags=0x" + Integer.toHexString(flags) : "");
    }
}
