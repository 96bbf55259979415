package io.pistore.transport.tcp.internal;

import java.nio.ByteBuffer;

/** A frame waiting to be sent; its payload is produced in chunks as the socket takes them. */
interface OutFrame {
    /** Writes the 64 header bytes at {@code dst}'s position (advancing it). */
    void writeHeader(ByteBuffer dst);

    /** Payload bytes, without digests. */
    int payloadLength();

    /** Writes the next {@code n} payload bytes at {@code dst}'s position (advancing it). */
    default void fillPayload(ByteBuffer dst, int n) {
        throw new IllegalStateException("frame has no payload");
    }

    /** HELLO and HELLO_REPLY never carry digests. */
    default boolean isHandshake() {
        return false;
    }

    /** The last byte went into the socket buffer, or the connection closed first. */
    default void released() {
    }
}
