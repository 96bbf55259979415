package io.pistore.transport.tcp.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A host queue's VOLUMES requests: at most one on the wire, callers arriving meanwhile share its
 * answer. Its answer is told from block responses by its opcode, and from a stale answer by its
 * command id (a counter of its own: VOLUMES takes no command slot). Loop thread only.
 */
final class VolumeRelist {
    private final List<CompletableFuture<List<WireVolume>>> waiting = new ArrayList<>();
    private int commandId;
    private ByteBuffer rx;
    /** When the VOLUMES on the wire was sent (0: none). */
    private long sentNanos;

    /** Queues {@code f} for the next answer; the frame to send when none is on the wire, else null. */
    OutFrame ask(CompletableFuture<List<WireVolume>> f) {
        waiting.add(f);
        if (waiting.size() > 1) {
            return null;
        }
        int cid = ++commandId;
        sentNanos = System.nanoTime();
        return new OutFrame() {
            @Override
            public void writeHeader(ByteBuffer d) {
                d.putInt(Protocol.MAGIC).put((byte) Protocol.VERSION).put((byte) Protocol.OP_VOLUMES).putShort((short) 0)
                        .putInt(cid).putInt(0).put(new byte[48]);
            }

            @Override
            public int payloadLength() {
                return 0;
            }
        };
    }

    /** A VOLUMES answer's header arrived: the sink for its list, or bad input. */
    PayloadSink onHeader(int cid, long len, ByteBuffer header) throws ProtocolException {
        if (waiting.isEmpty() || cid != commandId) {
            throw new ProtocolException("a VOLUMES answer to command 0x" + Integer.toHexString(cid) + ", which was not asked");
        }
        int code = header.getShort(Protocol.O_STATUS) & 0xFFFF;
        if (Protocol.status(code) != io.pistore.spi.Status.SUCCESS) {
            throw new ProtocolException("VOLUMES answered with status " + code);
        }
        rx = ByteBuffer.allocate((int) len);
        return rx::put;
    }

    /** The answer arrived whole: the list it carries (the waiting callers get it once the caller adopted it). */
    List<WireVolume> onFrame() throws ProtocolException {
        ByteBuffer b = rx;
        rx = null;
        b.flip();
        return WireVolume.decode(b);
    }

    /** Whether the VOLUMES on the wire has waited more than {@code limitNanos} at {@code now}. */
    boolean overdue(long now, long limitNanos) {
        return !waiting.isEmpty() && now - sentNanos > limitNanos;
    }

    /** Completes every waiting caller with {@code list}. */
    void answer(List<WireVolume> list) {
        List<CompletableFuture<List<WireVolume>>> w = new ArrayList<>(waiting);
        waiting.clear();
        for (CompletableFuture<List<WireVolume>> f : w) {
            f.complete(list);
        }
    }

    /** The connection closed: every waiting caller fails with {@code reason}. */
    void fail(String reason) {
        List<CompletableFuture<List<WireVolume>>> w = new ArrayList<>(waiting);
        waiting.clear();
        for (CompletableFuture<List<WireVolume>> f : w) {
            f.completeExceptionally(new IOException(reason));
        }
    }
}
