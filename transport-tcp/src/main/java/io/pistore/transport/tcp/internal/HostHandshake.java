package io.pistore.transport.tcp.internal;

import io.pistore.spi.VolumeInfo;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;

/**
 * The host's half of a queue's handshake: the HELLO it sends (what it asks for) and the checks of
 * the HELLO_REPLY (the target may grant less than asked, never more, and no digest it was not asked
 * for), with the volume list the reply carries. Loop thread only.
 */
final class HostHandshake {
    /** What the target granted, checked against what was asked. */
    record Grant(long maxTransfer, int depth, boolean headerDigest, boolean dataDigest,
                 Map<String, WireVolume> byName, List<VolumeInfo> volumes, int features) {
    }

    private final int maxTransferBytes;
    private final int requestedDepth;
    private final int queueIndex;
    private final int digests;
    private final long session;
    private final int features;
    /** The HELLO_REPLY's payload (the volume list) as it arrives. */
    private ByteBuffer reply;

    /** Asks for {@code maxTransferBytes}, {@code requestedDepth} and the {@link Protocol} digest bits {@code digests}. */
    HostHandshake(int maxTransferBytes, int requestedDepth, int queueIndex, int digests, long session) {
        this(maxTransferBytes, requestedDepth, queueIndex, digests, session, 0);
    }

    /** As above, asking also for the {@link Protocol} feature bits {@code features}. */
    HostHandshake(int maxTransferBytes, int requestedDepth, int queueIndex, int digests, long session, int features) {
        this.features = features;
        this.maxTransferBytes = maxTransferBytes;
        this.requestedDepth = requestedDepth;
        this.queueIndex = queueIndex;
        this.digests = digests;
        this.session = session;
    }

    /** The HELLO frame. */
    OutFrame hello() {
        return new OutFrame() {
            @Override
            public void writeHeader(ByteBuffer d) {
                d.putInt(Protocol.MAGIC).put((byte) Protocol.VERSION).put((byte) Protocol.OP_HELLO).putShort((short) 0)
                        .putInt(0).putInt(0)
                        .putInt(maxTransferBytes).putShort((short) requestedDepth).putShort((short) queueIndex)
                        .put((byte) digests).put((byte) features).put(new byte[6]).putLong(session).put(new byte[24]);
            }

            @Override
            public int payloadLength() {
                return 0;
            }

            @Override
            public boolean isHandshake() {
                return true;
            }
        };
    }

    /**
     * The first frame's header arrived: it must be a HELLO_REPLY; returns the sink for its volume list
     * ({@code len} is within the handshake payload limit, which TcpConnection checked).
     */
    PayloadSink onReplyHeader(int op, long len) throws ProtocolException {
        if (op != Protocol.OP_HELLO_REPLY) {
            throw new ProtocolException("expected HELLO_REPLY, got opcode " + Protocol.opName(op));
        }
        reply = ByteBuffer.allocate((int) len);
        return reply::put;
    }

    /** The HELLO_REPLY arrived whole ({@code header} is its header): what it grants, or why it is refused. */
    Grant onReply(ByteBuffer header) throws ProtocolException {
        long maxT = header.getInt(Protocol.O_MAX_TRANSFER) & 0xFFFFFFFFL;
        int d = header.getShort(Protocol.O_QUEUE_DEPTH) & 0xFFFF;
        int granted = header.get(Protocol.O_DIGESTS) & 0xFF;
        if (maxT == 0 || maxT > maxTransferBytes) {
            throw new ProtocolException("HELLO_REPLY grants a max transfer of " + maxT + " bytes (asked "
                    + maxTransferBytes + ")");
        }
        if (d == 0 || d > requestedDepth) {
            throw new ProtocolException("HELLO_REPLY grants a queue depth of " + d + " (asked " + requestedDepth + ")");
        }
        if ((granted & ~digests) != 0) {
            throw new ProtocolException("HELLO_REPLY turns on digests 0x" + Integer.toHexString(granted)
                    + " that were not asked for");
        }
        int grantedFeatures = header.get(Protocol.O_FEATURES) & 0xFF;
        if ((grantedFeatures & ~features) != 0) {
            throw new ProtocolException("HELLO_REPLY grants features 0x" + Integer.toHexString(grantedFeatures)
                    + " that were not asked for");
        }
        reply.flip();
        WireVolume.Listed listed = WireVolume.Listed.of(WireVolume.decode(reply));
        reply = null;
        return new Grant(maxT, d, (granted & Protocol.DIGEST_HEADER) != 0, (granted & Protocol.DIGEST_DATA) != 0,
                listed.byName(), listed.infos(), grantedFeatures);
    }
}
