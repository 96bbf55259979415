package io.pistore.transport.tcp.internal;

import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.PiStream;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.Status;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Turns the responses a host queue receives into completions. A response header is checked against
 * the command it names (a known command id, the command's opcode, a known status, a payload of
 * exactly the read's size, an error message within the limit, a PI error inside the command's
 * blocks) before anything is sized from it. A read's payload is verified (as the check flags say)
 * while it is copied out of the socket buffer into the application's lists, and its metadata dropped
 * when the application has no metadata list (strip). Responses arrive one at a time, so one decoder
 * (and one read sink and PI verifier, restarted per response) serves the connection. Loop thread only.
 */
final class ResponseDecoder {
    private final ReadSink readSink = new ReadSink();
    private final MetadataSink metadataSink = new MetadataSink();
    private PiStream verifier;

    // the response being received
    private HostCommand rx;
    private Status rxStatus;
    private PiError rxPiError;
    private ByteBuffer rxMessage;
    private ReadSink rxRead;

    /**
     * A read response's payload: verified while it is copied to the application. Re-aimed per response.
     */
    private static final class ReadSink implements PayloadSink {
        final BlockShuttle shuttle = new BlockShuttle();
        PiStream verifier;

        ReadSink reset(HostCommand c, PiStream verifier) {
            shuttle.reset(c.volume.info.format(), c.request.data(), c.request.metadata());
            this.verifier = verifier;
            return this;
        }

        @Override
        public void accept(ByteBuffer chunk) {
            if (verifier != null) {
                verifier.update(chunk, chunk.position(), chunk.remaining());
            }
            shuttle.fromWire(chunk);
        }
    }

    /** A metadata-only read's payload: the stored metadata, copied as it comes. Re-aimed per response. */
    private static final class MetadataSink implements PayloadSink {
        io.pistore.integrity.ScatterList out;
        long at;

        MetadataSink reset(HostCommand c) {
            out = c.request.metadata();
            at = 0;
            return this;
        }

        @Override
        public void accept(ByteBuffer chunk) {
            int n = chunk.remaining();
            out.write(at, chunk, chunk.position(), n);
            chunk.position(chunk.position() + n);
            at += n;
        }
    }

    /**
     * A response header arrived ({@code header} holds it; TcpConnection checked the common prefix):
     * returns the sink for its payload (null when there is none), or throws for bad input.
     */
    PayloadSink onHeader(int op, int cid, long len, ByteBuffer header, CommandSlots<HostCommand> slots)
            throws ProtocolException {
        if ((op & Protocol.RESPONSE) == 0 || !Protocol.isRequest(op & ~Protocol.RESPONSE)) {
            throw new ProtocolException("unknown opcode 0x" + Integer.toHexString(op));
        }
        HostCommand p = slots.find(cid);
        if (p == null) {
            throw new ProtocolException("response to unknown command id 0x" + Integer.toHexString(cid));
        }
        int reqOp = Protocol.opcode(p.request.op());
        if ((op & ~Protocol.RESPONSE) != reqOp) {
            throw new ProtocolException("response opcode " + Protocol.opName(op) + " to a " + Protocol.opName(reqOp)
                    + " command 0x" + Integer.toHexString(cid));
        }
        int code = header.getShort(Protocol.O_STATUS) & 0xFFFF;
        Status st = Protocol.status(code);
        if (st == null) {
            throw new ProtocolException("unknown status code " + code);
        }
        rx = p;
        rxStatus = st;
        rxPiError = null;
        rxMessage = null;
        rxRead = null;
        if (st == Status.SUCCESS) {
            boolean metadataOnly = p.request.isMetadataOnly();
            io.pistore.integrity.BlockFormat f = p.volume.info.format();
            long expected = p.request.op() != Operation.READ ? 0
                    : (long) p.request.blocks() * (metadataOnly ? f.metadataSize() : f.blockSize());
            if (len != expected) {
                throw new ProtocolException(Protocol.opName(op) + " carries " + len + " payload bytes, the command needs "
                        + expected);
            }
            if (len > 0 && metadataOnly) {
                return metadataSink.reset(p);
            }
            if (len > 0) {
                PiStream v = null;
                if (p.ctx != null && !p.ctx.checks().isNone()) {
                    v = verifier == null ? verifier = PiStream.verifier(p.ctx, p.request.blocks())
                            : verifier.restart(p.ctx, p.request.blocks());
                }
                rxRead = readSink.reset(p, v);
                return rxRead;
            }
            return null;
        }
        if (len > Protocol.MAX_MESSAGE) {
            throw new ProtocolException("error message of " + len + " bytes (at most " + Protocol.MAX_MESSAGE + ")");
        }
        if (st.isPiError()) {
            PiErrorKind kind = st.piErrorKind();
            long block = header.getInt(Protocol.O_ERROR_BLOCK) & 0xFFFFFFFFL;
            if (block >= p.request.blocks()) {
                throw new ProtocolException("PI error in block " + block + " of a " + p.request.blocks() + "-block command");
            }
            rxPiError = new PiError(kind, block, header.getLong(Protocol.O_EXPECTED), header.getLong(Protocol.O_ACTUAL));
        }
        rxMessage = ByteBuffer.allocate((int) len);
        return len > 0 ? rxMessage::put : null;
    }

    /** The command the response being received answers. */
    HostCommand command() {
        return rx;
    }

    /** The response arrived whole: its command's completion (the decoder is then ready for the next). */
    Completion complete() {
        HostCommand p = rx;
        rx = null;
        Completion c;
        if (rxStatus == Status.SUCCESS) {
            PiError e = rxRead != null && rxRead.verifier != null ? rxRead.verifier.firstError() : null;
            // the target answered success: the host's own check of the arriving bytes caught it
            c = e == null ? Completion.success() : Completion.piErrorCaughtByHost(p.request.lba(), e);
        } else if (rxPiError != null) {
            c = Completion.piError(p.request.lba(), rxPiError);
        } else {
            String m = new String(rxMessage.array(), 0, rxMessage.position(), StandardCharsets.UTF_8);
            c = Completion.failure(rxStatus, m.isEmpty() ? rxStatus.toString() : m);
        }
        rxRead = null;
        rxMessage = null;
        return c;
    }
}
