package io.pistore.transport.tcp.internal;

import io.pistore.spi.PathReport;
import io.pistore.spi.PeerPaths;
import io.pistore.spi.PeerWatches;
import io.pistore.spi.Status;
import io.pistore.spi.wire.PathReportCodec;
import io.pistore.spi.wire.VolumeListCodec;
import io.pistore.transport.tcp.TcpConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * A host's watch of one peer's path states: its own connection (depth 1, greeted asking for the
 * path states feature) on which one PATH_STATES query is always outstanding, held by the peer until
 * its change counter moves or {@link #WAIT_MS} pass; each answer goes to the host's {@link PeerPaths}.
 * A peer that does not answer a query within {@link #WAIT_MS} and {@link #MARGIN_MS} (frozen, or cut
 * off) is closed and, like one whose connection is lost, is gone ({@link PeerWatches}: unreachable,
 * watched again later). A peer that does not grant the feature (an older pistore) is left unwatched:
 * the host's queues use it as before.
 */
final class TcpPathWatch extends TcpClientConnection implements PeerWatches.Watch {
    /** How long a peer may hold one query. */
    static final int WAIT_MS = 1_000;
    /** How much later than that its answer may come before the peer counts as unreachable. */
    static final long MARGIN_MS = 1_000;
    private static final int MAX_REPORT = 1 << 20;

    private final int peerIndex;
    private final PeerPaths paths;
    private final Runnable onGone;
    private final long startNanos = System.nanoTime();
    private boolean greeted;
    /** Whether the peer granted path states: only then does losing it say anything about its paths. */
    private volatile boolean watching;
    private volatile boolean stopped;
    private long known;
    private long sentNanos;
    private int commandId;
    private ByteBuffer rx;

    private TcpPathWatch(EventLoop loop, SocketChannel ch, TcpConfig cfg, InetSocketAddress address, String peer,
                         int peerIndex, PeerPaths paths, long session, Runnable onGone) {
        super(loop, ch, peer, cfg, address,
                new HostHandshake(MAX_REPORT, 1, 0xFFFF, 0, session, Protocol.FEATURE_PATH_STATES));
        this.peerIndex = peerIndex;
        this.paths = paths;
        this.onGone = onGone;
        this.frameTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(cfg.frameTimeoutMillis);
    }

    /**
     * Opens a watch of peer {@code peerIndex}; {@code onGone} runs once when it closes other than by
     * {@link #stop} (its owner opens a new one later).
     */
    static TcpPathWatch open(EventLoop loop, TcpConfig cfg, InetSocketAddress address, String peer, int peerIndex,
                             PeerPaths paths, long session, Runnable onGone) throws IOException {
        SocketChannel ch = newChannel();
        TcpPathWatch w = new TcpPathWatch(loop, ch, cfg, address, peer, peerIndex, paths, session, onGone);
        w.start();
        return w;
    }

    @Override
    PayloadSink onHeader(int op, int flags, int cid, long len) throws ProtocolException {
        if (!greeted) {
            return handshake.onReplyHeader(op, len);
        }
        if (op != (Protocol.OP_PATH_STATES | Protocol.RESPONSE) || cid != commandId || sentNanos == 0) {
            throw new ProtocolException("unexpected " + Protocol.opName(op) + " command 0x" + Integer.toHexString(cid)
                    + " on a path state watch");
        }
        int code = header.getShort(Protocol.O_STATUS) & 0xFFFF;
        if (Protocol.status(code) != Status.SUCCESS) {
            throw new ProtocolException("PATH_STATES answered with status " + code);
        }
        rx = ByteBuffer.allocate((int) len);
        return len > 0 ? rx::put : null;
    }

    @Override
    void onFrame(int op) throws ProtocolException {
        if (!greeted) {
            HostHandshake.Grant g = handshake.onReply(header);
            greeted = true;
            maxPayload = g.maxTransfer();
            if ((g.features() & Protocol.FEATURE_PATH_STATES) == 0) {
                stopped = true; // an older peer: nothing to watch there
                close("the peer does not report path states", false);
                return;
            }
            watching = true;
            ask();
            return;
        }
        rx.flip();
        PathReport r;
        try {
            r = PathReportCodec.decode(rx);
        } catch (VolumeListCodec.MalformedListException e) {
            throw new ProtocolException(e.getMessage());
        }
        rx = null;
        sentNanos = 0;
        known = r.counter();
        paths.report(peerIndex, r);
        ask();
    }

    private void ask() {
        commandId++;
        sentNanos = System.nanoTime();
        int cid = commandId;
        long k = known;
        send(new OutFrame() {
            @Override
            public void writeHeader(ByteBuffer d) {
                d.putInt(Protocol.MAGIC).put((byte) Protocol.VERSION).put((byte) Protocol.OP_PATH_STATES)
                        .putShort((short) 0).putInt(cid).putInt(0)
                        .putInt(0).putInt(WAIT_MS).putLong(k).putLong(0).putLong(0).putLong(0).putLong(0);
            }

            @Override
            public int payloadLength() {
                return 0;
            }
        });
    }

    @Override
    public void onTimer(long now) {
        super.onTimer(now);
        if (closed) {
            return;
        }
        if (!greeted && now - startNanos > TimeUnit.MILLISECONDS.toNanos(cfg.connectTimeoutMillis)) {
            close("no HELLO_REPLY within " + cfg.connectTimeoutMillis + " ms", false);
        } else if (sentNanos != 0 && now - sentNanos > TimeUnit.MILLISECONDS.toNanos(WAIT_MS + MARGIN_MS)) {
            close("no path states within " + (WAIT_MS + MARGIN_MS) + " ms", false);
        }
    }

    @Override
    System.Logger.Level closeLevel() {
        return null; // the queues' own lines say what a host sees
    }

    @Override
    void onClosed(String reason) {
        if (!stopped) {
            onGone.run();
        }
    }

    /** Closes the watch for good, from any thread. */
    @Override
    public void stop() {
        stopped = true;
        loop.execute(() -> close("closed by the host", false));
    }

    /** Whether the peer granted path states and the watch runs. */
    boolean watching() {
        return watching && !closed;
    }
}
