package io.pistore.transport.tcp.internal;

import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiStream;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.Protection;
import io.pistore.spi.WriteFence;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * A request between submit and completion, and its frame on the way out: the header, and for a
 * write the interleaved payload built on the way by the connection's {@link WriteEncoder} (one
 * object per request besides its future).
 */
final class HostCommand implements OutFrame {
    final BlockRequest request;
    final WireVolume volume;
    /** The PI context of a READ or WRITE on a PI format, else null. */
    final PiContext ctx;
    final CompletableFuture<Completion> future = new CompletableFuture<>();
    /** Set when the command takes a slot (loop thread). */
    int commandId;
    long sentNanos;
    private final WriteEncoder encoder;
    private boolean started;
    private PiStream generator;

    /** The connection's fence, carried by writes, zero writes and deallocations; null: none. */
    private final WriteFence fence;

    HostCommand(BlockRequest request, WireVolume volume, PiContext ctx, WriteEncoder encoder,
                WriteFence fence) {
        this.request = request;
        this.fence = fence;
        this.volume = volume;
        this.ctx = ctx;
        this.encoder = encoder;
    }

    @Override
    public void writeHeader(ByteBuffer d) {
        BlockRequest r = request;
        Protection pr = r.protection();
        int flags = r.isMetadataOnly() ? Protocol.F_METADATA_ONLY
                : (r.fua() ? Protocol.F_FUA : 0) | (pr.pract() ? Protocol.F_PRACT : 0) | Protocol.checkFlags(pr.checks());
        d.putInt(Protocol.MAGIC).put((byte) Protocol.VERSION).put((byte) Protocol.opcode(r.op()))
                .putShort((short) flags).putInt(commandId).putInt(payloadLength())
                .putInt(volume.id).putInt(r.blocks()).putLong(r.lba()).putLong(pr.initialRefTag())
                .putShort((short) pr.appTag()).putShort((short) pr.appMask());
        WriteFence f = r.op() == Operation.READ || r.op() == Operation.FLUSH ? null : fence;
        // the connection's fence, and the number the host queue gave the write (every copy keeps it)
        d.putInt(f == null ? 0 : (int) f.epoch()).putLong(f == null ? 0 : f.key()).putLong(r.seqIn(f));
    }

    @Override
    public int payloadLength() {
        return request.op() == Operation.WRITE ? request.blocks() * volume.info.format().blockSize() : 0;
    }

    @Override
    public void fillPayload(ByteBuffer d, int n) {
        if (!started) {
            started = true;
            generator = encoder.begin(this);
        }
        encoder.fill(d, n, generator);
    }
}
