package io.pistore.transport.tcp.internal;

import io.pistore.integrity.PiStream;
import java.nio.ByteBuffer;

/**
 * Builds a command's payload while it is copied into the socket buffer: the application's data (and
 * metadata, or zeroes) interleaved block by block, and with PRACT the PI generated into each block's
 * tuple in the same pass. One per connection, restarted per command: payloads go out one frame at a
 * time (TcpConnection.fill finishes a frame before it takes the next). Loop thread only.
 */
final class WriteEncoder {
    private final BlockShuttle shuttle = new BlockShuttle();
    private PiStream generator;

    /** Aims the encoder at {@code c}; returns the PI generator for it (PRACT on a PI format), else null. */
    PiStream begin(HostCommand c) {
        shuttle.reset(c.volume.info.format(), c.request.data(), c.request.metadata());
        if (c.ctx != null && c.request.protection().pract()) {
            return generator == null ? generator = PiStream.generator(c.ctx, c.request.blocks())
                    : generator.restart(c.ctx, c.request.blocks());
        }
        return null;
    }

    /** Writes the next {@code n} payload bytes at {@code d}'s position, generating PI with {@code pi} (or not). */
    void fill(ByteBuffer d, int n, PiStream pi) {
        int at = d.position();
        shuttle.toWire(d, n);
        if (pi != null) {
            pi.update(d, at, n);
        }
    }
}
