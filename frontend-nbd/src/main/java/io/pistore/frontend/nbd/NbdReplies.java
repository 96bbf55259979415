package io.pistore.frontend.nbd;

import static io.pistore.frontend.nbd.NbdProtocol.*;

import java.nio.ByteBuffer;

/**
 * The transmission phase's replies on the wire: simple replies, and the structured chunks this
 * server sends (one per request, each with NBD_REPLY_FLAG_DONE): OFFSET_DATA for a read,
 * BLOCK_STATUS, and ERROR / ERROR_OFFSET for a failure.
 */
final class NbdReplies {
    private NbdReplies() {
    }

    /** Bytes before the data of a read reply: a simple reply, or a structured chunk's header and offset. */
    static int readHeaderLength(boolean structured) {
        return structured ? STRUCTURED_REPLY_HEADER + 8 : SIMPLE_REPLY_HEADER;
    }

    /**
     * Writes a successful read's header in front of its {@code len} data bytes, which {@code reply}
     * holds after {@link #readHeaderLength} bytes from position 0; leaves the position at 0.
     */
    static void putReadHeader(ByteBuffer reply, boolean structured, long cookie, long offset, int len) {
        if (structured) {
            reply.putInt(STRUCTURED_REPLY_MAGIC).putShort((short) REPLY_FLAG_DONE)
                    .putShort((short) REPLY_TYPE_OFFSET_DATA).putLong(cookie).putInt(8 + len)
                    .putLong(offset);
        } else {
            reply.putInt(SIMPLE_REPLY_MAGIC).putInt(0).putLong(cookie);
        }
        reply.position(0);
    }

    static ByteBuffer simple(long cookie, int error) {
        ByteBuffer b = ByteBuffer.allocate(SIMPLE_REPLY_HEADER);
        b.putInt(SIMPLE_REPLY_MAGIC).putInt(error).putLong(cookie).flip();
        return b;
    }

    /** One NBD_REPLY_TYPE_BLOCK_STATUS chunk for {@code base:allocation}. */
    static ByteBuffer blockStatus(long cookie, NbdExport.Extents x) {
        int len = 4 + 8 * x.count;
        ByteBuffer reply = ByteBuffer.allocate(STRUCTURED_REPLY_HEADER + len);
        reply.putInt(STRUCTURED_REPLY_MAGIC).putShort((short) REPLY_FLAG_DONE)
                .putShort((short) REPLY_TYPE_BLOCK_STATUS).putLong(cookie).putInt(len).putInt(BASE_ALLOCATION_ID);
        for (int i = 0; i < x.count; i++) {
            reply.putInt(x.lengths[i]).putInt(x.flags[i]);
        }
        return reply.flip();
    }

    /**
     * The reply to a failed request: with structured replies an ERROR_OFFSET chunk when the failing
     * offset is known (a PI check failure, say), else an ERROR chunk, both with the message; else a
     * simple reply with the error value.
     */
    static ByteBuffer error(long cookie, Outcome o, boolean structured) {
        if (!structured) {
            return simple(cookie, o.error);
        }
        byte[] msg = NbdProtocol.message(o.message == null ? "" : o.message);
        boolean at = o.offset >= 0;
        int len = 6 + msg.length + (at ? 8 : 0);
        ByteBuffer reply = ByteBuffer.allocate(STRUCTURED_REPLY_HEADER + len);
        reply.putInt(STRUCTURED_REPLY_MAGIC).putShort((short) REPLY_FLAG_DONE)
                .putShort((short) (at ? REPLY_TYPE_ERROR_OFFSET : REPLY_TYPE_ERROR)).putLong(cookie).putInt(len)
                .putInt(o.error).putShort((short) msg.length).put(msg);
        if (at) {
            reply.putLong(o.offset);
        }
        return reply.flip();
    }
}
