package io.pistore.transport.tcp.internal;

import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.PiStream;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Operation;
import io.pistore.spi.Protection;
import io.pistore.spi.RequestCheck;
import io.pistore.spi.Status;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.tcp.TcpConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The host end of one queue: one TCP connection. Any thread submits; the request is validated here
 * (so nothing malformed is sent), then the loop thread gives it a command slot and streams it out.
 * For a write, the payload is built while it is copied into the socket buffer: the application's
 * data (and metadata, or zeroes) interleaved block by block, and with PRACT the PI generated into
 * each block's tuple in the same pass. A read response is verified while it is copied out of the
 * socket buffer into the application's lists, and its metadata dropped when the application has no
 * metadata list (strip). Responses may come in any order; they are matched by command id.
 */
final class HostQueueConnection extends Connection implements HostQueue {
    private final TcpConfig cfg;
    private final InetSocketAddress address;
    private final int queueIndex;
    private final int requestedDepth;
    private final long session;
    final CompletableFuture<Void> ready = new CompletableFuture<>();

    private volatile boolean shut;
    private volatile Consumer<String> lostListener;
    private final AtomicBoolean lostReported = new AtomicBoolean();
    private volatile String closeReason;
    private volatile int depth;
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile Map<String, WireVolume> byName = Collections.emptyMap();
    volatile List<VolumeInfo> volumes = Collections.emptyList();
    private volatile long maxTransfer;
    private boolean greeted;
    private volatile boolean userClosed;
    private boolean quietHandshake;
    private final long startNanos = System.nanoTime();

    private Pending[] slots;
    private int[] generation;
    private int[] free;
    private int freeTop;

    // the response being received
    private Pending rx;
    private Status rxStatus;
    private PiError rxPiError;
    private ByteBuffer rxMessage;
    private ReadSink rxRead;
    /**
     * One PI stream per direction, restarted per request (loop thread only): payloads go out one
     * frame at a time (Connection.fill finishes a frame before it takes the next) and come in one
     * response at a time (the verifier is read in onFrame before the next header).
     */
    private PiStream txGenerator;
    private PiStream rxVerifier;
    /** The same for the shuttles that interleave request payloads and de-interleave read responses. */
    private final BlockShuttle txShuttle = new BlockShuttle();
    private final ReadSink readSink = new ReadSink();

    /**
     * A request between submit and completion, and its frame on the way out: the header, and for a
     * write the interleaved payload built on the way (one object per request besides its future).
     */
    final class Pending implements OutFrame {
        final BlockRequest request;
        final WireVolume volume;
        final PiContext ctx;
        final CompletableFuture<Completion> future = new CompletableFuture<>();
        int slot = -1;
        int commandId;
        long sentNanos;
        private boolean started;
        private PiStream generator;

        Pending(BlockRequest request, WireVolume volume, PiContext ctx) {
            this.request = request;
            this.volume = volume;
            this.ctx = ctx;
        }

        @Override
        public void writeHeader(ByteBuffer d) {
            BlockRequest r = request;
            Protection pr = r.protection();
            int flags = (r.fua() ? Protocol.F_FUA : 0) | (pr.pract() ? Protocol.F_PRACT : 0)
                    | Protocol.checkFlags(pr.checks());
            d.putInt(Protocol.MAGIC).put((byte) Protocol.VERSION).put((byte) Protocol.opcode(r.op()))
                    .putShort((short) flags).putInt(commandId).putInt(payloadLength())
                    .putInt(volume.id).putInt(r.blocks()).putLong(r.lba()).putLong(pr.initialRefTag())
                    .putShort((short) pr.appTag()).putShort((short) pr.appMask()).putInt(0).putLong(0).putLong(0);
        }

        @Override
        public int payloadLength() {
            return request.op() == Operation.WRITE ? request.blocks() * volume.info.format().blockSize() : 0;
        }

        @Override
        public void fillPayload(ByteBuffer d, int n) {
            if (!started) {
                started = true;
                txShuttle.reset(volume.info.format(), request.data(), request.metadata());
                if (ctx != null && request.protection().pract()) {
                    generator = txGenerator == null ? txGenerator = PiStream.generator(ctx, request.blocks())
                            : txGenerator.restart(ctx, request.blocks());
                }
            }
            int at = d.position();
            txShuttle.toWire(d, n);
            if (generator != null) {
                generator.update(d, at, n);
            }
        }
    }

    HostQueueConnection(EventLoop loop, SocketChannel ch, TcpConfig cfg, InetSocketAddress address, String peer,
                        int queueIndex, int depth, long session) {
        super(loop, ch, "host", peer);
        this.cfg = cfg;
        this.address = address;
        this.queueIndex = queueIndex;
        this.requestedDepth = depth;
        this.depth = depth;
        this.session = session;
        this.frameTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(cfg.frameTimeoutMillis);
    }

    static HostQueueConnection open(EventLoop loop, TcpConfig cfg, InetSocketAddress address, String peer,
                                    int queueIndex, int depth, long session) throws IOException {
        return open(loop, cfg, address, peer, queueIndex, depth, session, false);
    }

    /**
     * Opens a queue connection; the handshake completes {@link #ready}. With {@code quietHandshake}
     * (reconnect attempts, whose caller reports failures in its own words) a failure before the
     * handshake completes is not logged, unless the target sent bad input.
     */
    static HostQueueConnection open(EventLoop loop, TcpConfig cfg, InetSocketAddress address, String peer,
                                    int queueIndex, int depth, long session, boolean quietHandshake) throws IOException {
        SocketChannel ch = SocketChannel.open();
        try {
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        HostQueueConnection q = new HostQueueConnection(loop, ch, cfg, address, peer, queueIndex, depth, session);
        q.quietHandshake = quietHandshake;
        if (!loop.execute(q::begin)) {
            ch.close();
            throw new IOException("the transport is closed");
        }
        return q;
    }

    private void begin() {
        try {
            key = loop.register(ch, SelectionKey.OP_CONNECT, this);
            if (ch.connect(address)) {
                onConnectable();
            }
        } catch (IOException e) {
            close("cannot connect: " + ioReason(e), false);
        }
    }

    @Override
    void onConnectable() throws IOException {
        if (ch.isConnectionPending() && !ch.finishConnect()) {
            return;
        }
        key.interestOps(SelectionKey.OP_READ);
        send(new HelloFrame());
    }

    /** HELLO: what this host asks for. */
    private final class HelloFrame implements OutFrame {
        @Override
        public void writeHeader(ByteBuffer d) {
            int digests = (cfg.headerDigest ? Protocol.DIGEST_HEADER : 0) | (cfg.dataDigest ? Protocol.DIGEST_DATA : 0);
            d.putInt(Protocol.MAGIC).put((byte) Protocol.VERSION).put((byte) Protocol.OP_HELLO).putShort((short) 0)
                    .putInt(0).putInt(0)
                    .putInt(cfg.maxTransferBytes).putShort((short) requestedDepth).putShort((short) queueIndex)
                    .put((byte) digests).put(new byte[7]).putLong(session).put(new byte[24]);
        }

        @Override
        public int payloadLength() {
            return 0;
        }

        @Override
        public boolean isHandshake() {
            return true;
        }
    }

    // ------------------------------------------------------------------ submit (any thread)

    @Override
    public CompletableFuture<Completion> submit(BlockRequest r) {
        if (shut) {
            return CompletableFuture.completedFuture(Completion.failure(Status.TRANSPORT_ERROR,
                    "connection to " + peer + " is closed"));
        }
        int d = depth;
        if (inFlight.incrementAndGet() > d) {
            inFlight.decrementAndGet();
            return CompletableFuture.completedFuture(Completion.failure(Status.QUEUE_FULL, "queue depth " + d + " reached"));
        }
        WireVolume v = byName.get(r.volume());
        Completion bad;
        PiContext ctx = null;
        if (v == null) {
            bad = Completion.failure(Status.NO_SUCH_VOLUME, "no volume named '" + r.volume() + "'");
        } else {
            bad = RequestCheck.validate(r, v.info, maxTransfer);
            if (bad == null && v.info.format().hasPi() && (r.op() == Operation.READ || r.op() == Operation.WRITE)) {
                Protection p = r.protection();
                ctx = p.context(v.info.format());
            }
        }
        if (bad != null) {
            inFlight.decrementAndGet();
            return CompletableFuture.completedFuture(bad);
        }
        Pending p = new Pending(r, v, ctx);
        if (loop.inLoop()) {
            start(p);
        } else if (!loop.execute(() -> start(p))) {
            finish(p, Completion.failure(Status.TRANSPORT_ERROR, "the transport is closed"));
        }
        return p.future;
    }

    /** The checks of the target service, in its order, so that nothing malformed goes on the wire. */
    @Override
    public int depth() {
        return depth;
    }

    @Override
    public int inFlight() {
        return inFlight.get();
    }

    /** Volumes by name, as the target listed them. */
    Map<String, WireVolume> volumesByName() {
        return byName;
    }

    // ------------------------------------------------------------------ loop thread

    private void start(Pending p) {
        if (closed || !greeted) {
            finish(p, Completion.failure(Status.TRANSPORT_ERROR, "connection to " + peer + " is closed"));
            return;
        }
        int s = free[--freeTop];
        generation[s] = (generation[s] + 1) & 0xFFFF;
        p.slot = s;
        p.commandId = generation[s] << 16 | s;
        p.sentNanos = System.nanoTime();
        slots[s] = p;
        loop.awaitingChanged(1);
        send(p);
    }

    private void finish(Pending p, Completion c) {
        inFlight.decrementAndGet();
        p.future.complete(c);
    }

    /** Frees the slot of a pending request (before its future completes, so a callback can reuse it). */
    private void release(Pending p) {
        slots[p.slot] = null;
        free[freeTop++] = p.slot;
        loop.awaitingChanged(-1);
    }

    /**
     * A read response's payload: verified (as the check flags say) while it is copied to the
     * application. Responses arrive one at a time, so one sink serves the connection, re-aimed per
     * response.
     */
    private static final class ReadSink implements PayloadSink {
        final BlockShuttle shuttle = new BlockShuttle();
        PiStream verifier;

        ReadSink reset(Pending p, PiStream verifier) {
            shuttle.reset(p.volume.info.format(), p.request.data(), p.request.metadata());
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

    @Override
    PayloadSink onHeader(int op, int flags, int cid, long len) throws ProtocolException {
        if (!greeted) {
            if (op != Protocol.OP_HELLO_REPLY) {
                throw new ProtocolException("expected HELLO_REPLY, got opcode " + Protocol.opName(op));
            }
            rxMessage = ByteBuffer.allocate((int) len); // len <= MAX_HANDSHAKE_PAYLOAD, checked
            return rxMessage::put;
        }
        if ((op & Protocol.RESPONSE) == 0 || !Protocol.isRequest(op & ~Protocol.RESPONSE)) {
            throw new ProtocolException("unknown opcode 0x" + Integer.toHexString(op));
        }
        int s = cid & 0xFFFF;
        Pending p = s < slots.length ? slots[s] : null;
        if (p == null || p.commandId != cid) {
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
            long expected = p.request.op() == Operation.READ
                    ? (long) p.request.blocks() * p.volume.info.format().blockSize() : 0;
            if (len != expected) {
                throw new ProtocolException(Protocol.opName(op) + " carries " + len + " payload bytes, the command needs "
                        + expected);
            }
            if (len > 0) {
                PiStream v = null;
                if (p.ctx != null && !p.ctx.checks().isNone()) {
                    v = rxVerifier == null ? rxVerifier = PiStream.verifier(p.ctx, p.request.blocks())
                            : rxVerifier.restart(p.ctx, p.request.blocks());
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

    @Override
    void onFrame(int op) throws ProtocolException {
        if (!greeted) {
            onHelloReply();
            return;
        }
        Pending p = rx;
        rx = null;
        Completion c;
        if (rxStatus == Status.SUCCESS) {
            PiError e = rxRead != null && rxRead.verifier != null ? rxRead.verifier.firstError() : null;
            c = e == null ? Completion.success() : Completion.piError(p.request.lba(), e);
        } else if (rxPiError != null) {
            c = Completion.piError(p.request.lba(), rxPiError);
        } else {
            String m = new String(rxMessage.array(), 0, rxMessage.position(), StandardCharsets.UTF_8);
            c = Completion.failure(rxStatus, m.isEmpty() ? rxStatus.toString() : m);
        }
        rxRead = null;
        rxMessage = null;
        release(p);
        finish(p, c);
    }

    private void onHelloReply() throws ProtocolException {
        long maxT = header.getInt(Protocol.O_MAX_TRANSFER) & 0xFFFFFFFFL;
        int d = header.getShort(Protocol.O_QUEUE_DEPTH) & 0xFFFF;
        int digests = header.get(Protocol.O_DIGESTS) & 0xFF;
        int asked = (cfg.headerDigest ? Protocol.DIGEST_HEADER : 0) | (cfg.dataDigest ? Protocol.DIGEST_DATA : 0);
        if (maxT == 0 || maxT > cfg.maxTransferBytes) {
            throw new ProtocolException("HELLO_REPLY grants a max transfer of " + maxT + " bytes (asked "
                    + cfg.maxTransferBytes + ")");
        }
        if (d == 0 || d > requestedDepth) {
            throw new ProtocolException("HELLO_REPLY grants a queue depth of " + d + " (asked " + requestedDepth + ")");
        }
        if ((digests & ~asked) != 0) {
            throw new ProtocolException("HELLO_REPLY turns on digests 0x" + Integer.toHexString(digests)
                    + " that were not asked for");
        }
        rxMessage.flip();
        List<WireVolume> vols = WireVolume.decode(rxMessage);
        rxMessage = null;
        Map<String, WireVolume> m = new HashMap<>();
        List<VolumeInfo> infos = new ArrayList<>();
        for (WireVolume v : vols) {
            m.put(v.info.name(), v);
            infos.add(v.info);
        }
        slots = new Pending[d];
        generation = new int[d];
        free = new int[d];
        for (int i = 0; i < d; i++) {
            free[i] = d - 1 - i;
        }
        freeTop = d;
        maxTransfer = maxT;
        maxPayload = maxT;
        rxHeaderDigest = txHeaderDigest = (digests & Protocol.DIGEST_HEADER) != 0;
        rxDataDigest = txDataDigest = (digests & Protocol.DIGEST_DATA) != 0;
        byName = m;
        volumes = Collections.unmodifiableList(infos);
        depth = d;
        flushEvery(cfg.flushFrames, d);
        greeted = true;
        ready.complete(null);
    }

    @Override
    public void onTimer(long now) {
        super.onTimer(now);
        if (closed) {
            return;
        }
        if (!greeted) {
            if (now - startNanos > TimeUnit.MILLISECONDS.toNanos(cfg.connectTimeoutMillis)) {
                close("no HELLO_REPLY within " + cfg.connectTimeoutMillis + " ms", false);
            }
            return;
        }
        long limit = TimeUnit.MILLISECONDS.toNanos(cfg.requestTimeoutMillis);
        for (Pending p : slots) {
            if (p != null && now - p.sentNanos > limit) {
                close("no response to " + p.request.op() + " command 0x" + Integer.toHexString(p.commandId) + " within "
                        + cfg.requestTimeoutMillis + " ms", false);
                return;
            }
        }
    }

    @Override
    String eofReason() {
        return "the target closed the connection";
    }

    @Override
    System.Logger.Level closeLevel() {
        return userClosed || (quietHandshake && !greeted) ? null : System.Logger.Level.WARNING;
    }

    /** Whether the connection is closed (or closing): submit then fails at once. */
    boolean isShut() {
        return shut;
    }

    /**
     * Runs {@code listener} with the reason once, when this connection closes other than by
     * {@link #shutdown} (at once if that has already happened).
     */
    void onLost(Consumer<String> listener) {
        lostListener = listener;
        if (shut && !userClosed) {
            reportLost();
        }
    }

    private void reportLost() {
        Consumer<String> l = lostListener;
        if (l != null && lostReported.compareAndSet(false, true)) {
            l.accept(closeReason);
        }
    }

    @Override
    void onClosed(String reason) {
        closeReason = reason;
        shut = true;
        if (!ready.isDone()) {
            ready.completeExceptionally(new IOException(reason));
        }
        if (slots == null) {
            if (!userClosed) {
                reportLost();
            }
            return;
        }
        Completion c = Completion.failure(Status.TRANSPORT_ERROR, "connection to " + peer + " closed: " + reason);
        for (int s = 0; s < slots.length; s++) {
            Pending p = slots[s];
            if (p != null) {
                release(p);
                finish(p, c);
            }
        }
        if (!userClosed) {
            reportLost();
        }
    }

    /** Closes from any thread; returns once every outstanding request has failed (or after 10 s). */
    void shutdown() {
        shut = true;
        if (loop.inLoop()) {
            userClose();
            return;
        }
        CountDownLatch done = new CountDownLatch(1);
        if (loop.execute(() -> {
            userClose();
            done.countDown();
        })) {
            try {
                done.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void userClose() {
        if (!closed) {
            userClosed = true;
            close("closed by the host", false);
        }
    }
}
