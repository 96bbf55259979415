package io.pistore.transport.tcp.internal;

import io.pistore.integrity.PiContext;
import io.pistore.spi.AnswerScreen;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.PeerConnection;
import io.pistore.spi.Operation;
import io.pistore.spi.Protection;
import io.pistore.spi.RequestCheck;
import io.pistore.spi.Status;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.tcp.TcpConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Collections;
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
 * (so nothing malformed is sent), then the loop thread gives it a command slot ({@link CommandSlots})
 * and streams it out ({@link HostCommand}, its write payload built by the {@link WriteEncoder}).
 * Responses may come in any order; the {@link ResponseDecoder} matches them by command id and turns
 * them into completions. The handshake is the {@link HostHandshake}'s; this class applies what it
 * grants, keeps the request and handshake timeouts, and fails what is outstanding when the
 * connection closes.
 */
final class TcpHostQueue extends TcpClientConnection implements PeerConnection {
    /** Stamped on every write, zero write and deallocation ({@link io.pistore.spi.WriteFence}); set before the first. */
    private volatile io.pistore.spi.WriteFence fence;

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
    /** Whether the target granted metadata-only reads; without, {@link #submit} reads such a request whole. */
    private volatile boolean metadataReads;
    /** Whether the target granted VOLUMES: without, {@link #relist} answers the list of the greeting. */
    private volatile boolean relists;
    private final VolumeRelist relisting = new VolumeRelist();
    private boolean greeted;
    private volatile boolean userClosed;
    /** Closed by {@link #drop}: the host's queue says why in its own line. */
    private volatile boolean dropped;
    /** Sees each answer before its request completes (a host given a list of peers), or null. */
    private volatile AnswerScreen screen;
    private boolean quietHandshake;
    private final long startNanos = System.nanoTime();

    /** Null until the handshake sizes it. */
    private CommandSlots<HostCommand> slots;
    private final WriteEncoder writes = new WriteEncoder();
    private final ResponseDecoder responses = new ResponseDecoder();

    TcpHostQueue(EventLoop loop, SocketChannel ch, TcpConfig cfg, InetSocketAddress address, String peer,
                        int queueIndex, int depth, long session) {
        super(loop, ch, peer, cfg, address, new HostHandshake(cfg.maxTransferBytes, depth, queueIndex,
                (cfg.headerDigest ? Protocol.DIGEST_HEADER : 0) | (cfg.dataDigest ? Protocol.DIGEST_DATA : 0), session,
                Protocol.FEATURE_METADATA_READS | Protocol.FEATURE_VOLUME_LIST | Protocol.FEATURE_NO_SPACE));
        this.depth = depth;
        this.frameTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(cfg.frameTimeoutMillis);
    }

    static TcpHostQueue open(EventLoop loop, TcpConfig cfg, InetSocketAddress address, String peer,
                                    int queueIndex, int depth, long session) throws IOException {
        return open(loop, cfg, address, peer, queueIndex, depth, session, false);
    }

    /**
     * Opens a queue connection; the handshake completes {@link #ready}. With {@code quietHandshake}
     * (reconnect attempts, whose caller reports failures in its own words) a failure before the
     * handshake completes is not logged, unless the target sent bad input.
     */
    static TcpHostQueue open(EventLoop loop, TcpConfig cfg, InetSocketAddress address, String peer,
                                    int queueIndex, int depth, long session, boolean quietHandshake) throws IOException {
        SocketChannel ch = newChannel();
        TcpHostQueue q = new TcpHostQueue(loop, ch, cfg, address, peer, queueIndex, depth, session);
        q.quietHandshake = quietHandshake;
        q.start();
        return q;
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
        } else if (r.isMetadataOnly()) {
            bad = RequestCheck.validate(r, v.info, maxTransfer, true);
            if (bad == null && !metadataReads) {
                inFlight.decrementAndGet();
                return readWhole(r, v.info.format());
            }
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
        HostCommand p = new HostCommand(r, v, ctx, writes, fence);
        if (loop.inLoop()) {
            start(p);
        } else if (!loop.execute(() -> start(p))) {
            finish(p, Completion.failure(Status.TRANSPORT_ERROR, "the transport is closed"));
        }
        return p.future;
    }

    /**
     * A metadata-only read where the target did not grant them (an older target): the blocks are read
     * whole, data and metadata, with no PI check asked, and the data is dropped. The target still
     * refuses a block with the unwritten pattern whose data is not zeros, as for any read.
     */
    private CompletableFuture<Completion> readWhole(BlockRequest r, io.pistore.integrity.BlockFormat f) {
        return submit(r.wholeReadInstead(f));
    }

    @Override
    public void fence(io.pistore.spi.WriteFence f) {
        fence = f;
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

    private void start(HostCommand p) {
        if (closed || !greeted) {
            finish(p, Completion.failure(Status.TRANSPORT_ERROR, "connection to " + peer + " is closed"));
            return;
        }
        p.commandId = slots.claim(p);
        p.sentNanos = System.nanoTime();
        loop.awaitingChanged(1);
        send(p);
    }

    private void finish(HostCommand p, Completion c) {
        inFlight.decrementAndGet();
        p.future.complete(c);
    }

    /** Frees the slot of a pending request (before its future completes, so a callback can reuse it). */
    private void release(HostCommand p) {
        slots.release(p.commandId);
        loop.awaitingChanged(-1);
    }

    @Override
    PayloadSink onHeader(int op, int flags, int cid, long len) throws ProtocolException {
        if (!greeted) {
            return handshake.onReplyHeader(op, len);
        }
        if (op == (Protocol.OP_VOLUMES | Protocol.RESPONSE)) {
            return relisting.onHeader(cid, len, header);
        }
        return responses.onHeader(op, cid, len, header, slots);
    }

    @Override
    void onFrame(int op) throws ProtocolException {
        if (!greeted) {
            onHelloReply();
            return;
        }
        if (op == (Protocol.OP_VOLUMES | Protocol.RESPONSE)) {
            List<WireVolume> list = relisting.onFrame();
            adoptList(list);
            relisting.answer(list);
            return;
        }
        HostCommand p = responses.command();
        Completion c = responses.complete();
        release(p);
        AnswerScreen s = screen;
        if (s != null) {
            c = s.screen(p.request.volume(), c);
        }
        finish(p, c);
    }

    private void onHelloReply() throws ProtocolException {
        HostHandshake.Grant g = handshake.onReply(header);
        slots = new CommandSlots<>(g.depth());
        maxTransfer = g.maxTransfer();
        maxPayload = g.maxTransfer();
        rxHeaderDigest = txHeaderDigest = g.headerDigest();
        rxDataDigest = txDataDigest = g.dataDigest();
        byName = g.byName();
        volumes = g.volumes();
        relists = (g.features() & Protocol.FEATURE_VOLUME_LIST) != 0;
        metadataReads = (g.features() & Protocol.FEATURE_METADATA_READS) != 0;
        depth = g.depth();
        flushEvery(cfg.flushFrames, g.depth());
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
        if (relisting.overdue(now, limit)) {
            close("no answer to VOLUMES within " + cfg.requestTimeoutMillis + " ms", false);
            return;
        }
        for (int s = 0; s < slots.capacity(); s++) {
            HostCommand p = slots.at(s);
            if (p != null && now - p.sentNanos > limit) {
                close("no response to " + p.request.op() + " command 0x" + Integer.toHexString(p.commandId) + " within "
                        + cfg.requestTimeoutMillis + " ms", false);
                return;
            }
        }
    }

    @Override
    String eofReason() {
        if (greeted) {
            return "the target closed the connection";
        }
        // before the greeting: the likely cause is a TLS setting that differs between the two ends
        return cfg.tls == null
                ? "the target closed the connection during the handshake (a target with tcp.tls=true closes a host "
                        + "without TLS: set tcp.tls=true here too)"
                : "the target closed the connection during the TLS handshake (a target with tcp.tlsVerifyClient=true "
                        + "closes a host without a certificate it trusts: tcp.tlsCert, tcp.tlsKey)";
    }

    @Override
    System.Logger.Level closeLevel() {
        return userClosed || dropped || (quietHandshake && !greeted) ? null : System.Logger.Level.WARNING;
    }

    @Override
    public List<VolumeInfo> listed() {
        return volumes;
    }

    /**
     * Asks the target for its volumes again (VOLUMES); once answered, requests may name the volumes
     * it lists and {@link #listed} returns them. Ids come from the same connection's target, so they
     * are the ones its requests must carry. A target that did not grant the feature: the greeting's list.
     */
    @Override
    public CompletableFuture<List<VolumeInfo>> relist() {
        if (!relists) {
            return CompletableFuture.completedFuture(volumes);
        }
        CompletableFuture<List<WireVolume>> f = new CompletableFuture<>();
        if (!loop.execute(() -> {
            if (closed) {
                f.completeExceptionally(new IOException("connection to " + peer + " is closed"));
                return;
            }
            OutFrame frame = relisting.ask(f);
            if (frame != null) {
                send(frame);
            }
        })) {
            f.completeExceptionally(new IOException("the transport is closed"));
        }
        return f.thenApply(list -> volumes);
    }

    /** Takes up a list the target sent again: its names and ids replace the greeting's (loop thread). */
    private void adoptList(List<WireVolume> list) {
        WireVolume.Listed listed = WireVolume.Listed.of(list);
        byName = listed.byName();
        volumes = listed.infos();
    }

    /** Has every answer of the target pass through {@code s} before its request completes. */
    @Override
    public void screen(AnswerScreen s) {
        screen = s;
    }

    /**
     * Closes the connection as lost, with {@code reason}, from any thread without waiting: after the
     * frame being handled, on the loop thread. Its requests fail and the lost listener is told.
     */
    @Override
    public void drop(String reason) {
        loop.execute(() -> {
            if (!closed) {
                dropped = true;
                close(reason, false);
            }
        });
    }

    /** Whether the connection is closed (or closing): submit then fails at once. */
    @Override
    public boolean isShut() {
        return shut;
    }

    /**
     * Runs {@code listener} with the reason once, when this connection closes other than by
     * {@link #shutdown} (at once if that has already happened).
     */
    @Override
    public void onLost(Consumer<String> listener) {
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
        relisting.fail("connection to " + peer + " closed: " + reason);
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
        for (int s = 0; s < slots.capacity(); s++) {
            HostCommand p = slots.at(s);
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
    @Override
    public void shutdown() {
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
