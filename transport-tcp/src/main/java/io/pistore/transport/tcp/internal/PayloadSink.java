package io.pistore.transport.tcp.internal;

import java.nio.ByteBuffer;

/** Takes the payload of the frame being received, chunk by chunk, in order. */
interface PayloadSink {
    /**
     * Consumes every remaining byte of {@code chunk}; must not keep a reference to it. The chunk may be
     * a window of the connection's receive buffer: the sink must not change its limit.
     */
    void accept(ByteBuffer chunk);

    PayloadSink DISCARD = chunk -> chunk.position(chunk.limit());
}
