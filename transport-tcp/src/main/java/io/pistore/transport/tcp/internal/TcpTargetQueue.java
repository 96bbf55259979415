package io.pistore.transport.tcp.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.PiError;
import io.pistore.integrity.PiStream;
import io.pistore.security.access.AccessRules;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.PiDuty;
import io.pistore.spi.Protection;
import io.pistore.spi.RequestCheck;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The target end of one queue. A write's payload is checked while it is copied out of the socket
 * buffer into the request's separate data and metadata buffers (one pass over each chunk while it
 * is in cache, the PI verified as the request's check flags say); the request's {@link PiDuty} then
 * says the wire checked them (and, with PRACT, that the host generated the PI), so the engine
 * neither checks nor generates it again, and a write that fails its check is answered with the error
 * and never reaches the handler. A read hands the handler data and metadata buffers, so it returns
 * the stored PI, which travels interleaved to the host; the host checks it (and strips it for PRACT
 * reads), which the duty says, so the engine does not check it either.
 */
final class TcpTargetQueue extends TcpConnection {
    private final TcpTargetListener listener;
    private final TargetHandler handler;
    private final BufferPool pool = new BufferPool(16);
    private boolean greeted;
    private boolean announced;
    private int depth;
    private int outstanding;
    private TargetRequest rx;
    /** Whether this host asked for path states and was granted them (HELLO features). */
    private boolean pathStates;
    /** Whether this host asked for metadata-only reads and was granted them (HELLO features). */
    private boolean metadataReads;
    /** Whether HELLO got the volume list feature: VOLUMES may come. */
    private boolean volumeList;
    /** Whether the host asked for status NO_SPACE (else a full file system is MEDIA_ERROR to it). */
    private boolean noSpace;
    /** The command id of the VOLUMES being received. */
    private int volumesCid;
    /** The PATH_STATES query whose header arrived (loop thread). */
    private int pathCid;
    private long pathKnown;
    private long pathWaitMs;
    /** What this host may do with each volume, once TLS named it; null without access rules. */
    private HostAccess access;
    /** The PI verifier of the write payload being received (loop thread only). */
    private PiStream rxVerifier;
    /**
     * The shuttles of the payload being received and of the read reply being sent: payloads pass
     * one at a time in each direction, so one of each serves the connection, re-aimed per frame.
     */
    private final BlockShuttle rxShuttle = new BlockShuttle();
    private final BlockShuttle txShuttle = new BlockShuttle();
    /** The sink of every write payload: checked (as the request's flags say) and copied in one pass. */
    private final PayloadSink writeSink = chunk -> {
        if (rx.verifier != null) {
            rx.verifier.update(chunk, chunk.position(), chunk.remaining());
        }
        rxShuttle.fromWire(chunk);
    };

    /**
     * One request from its header to the end of its response, which it also is (the response frame
     * and the handler's callback): pooled per connection, so a request allocates only what the
     * handler is given. Loop thread only, except {@link #accept} (the handler's completion).
     */
    private final class TargetRequest implements OutFrame, java.util.function.Consumer<Completion> {
        int opcode;
        int commandId;
        int flags;
        /** A READ of metadata alone ({@link Protocol#F_METADATA_ONLY}): the response carries {@link #meta} only. */
        boolean metadataOnly;
        long lba;
        long blocks;
        Protection protection;
        /** The request's {@link Protocol#O_FENCE_KEY} and {@link Protocol#O_FENCE_EPOCH} (0: none). */
        long fenceKey;
        long fenceEpoch;
        long fenceSeq;
        WireVolume volume;
        Completion error;
        BufferPool.Buf data;
        BufferPool.Buf meta;
        PiStream verifier;
        // the response
        private Completion c;
        private byte[] message;
        private int payloadLength;
        private boolean started;
        private int messageAt;

        TargetRequest init(int opcode, int commandId, int flags, long lba, long blocks, Protection protection) {
            this.opcode = opcode;
            this.commandId = commandId;
            this.flags = flags & ~Protocol.F_METADATA_ONLY;
            this.metadataOnly = (flags & Protocol.F_METADATA_ONLY) != 0;
            this.lba = lba;
            this.blocks = blocks;
            this.protection = protection;
            volume = null;
            error = null;
            verifier = null;
            c = null;
            message = null;
            started = false;
            messageAt = 0;
            return this;
        }

        boolean fua() {
            return (flags & Protocol.F_FUA) != 0;
        }

        /** The handler's completion, on whatever thread it finishes. */
        @Override
        public void accept(Completion c) {
            done(this, c);
        }

        /** Becomes the response; a successful read streams the stored data and PI, interleaved, from its buffers. */
        TargetRequest respondWith(Completion c, boolean payload) {
            // a host that did not ask for NO_SPACE would close the connection on a code it does not know
            this.c = c.status() == Status.NO_SPACE && !noSpace ? Completion.failure(Status.MEDIA_ERROR, c.message()) : c;
            if (payload) {
                message = null;
                BlockFormat f = volume.info.format();
                payloadLength = (int) (blocks * (metadataOnly ? f.metadataSize() : f.blockSize()));
            } else if (c.isSuccess() || c.status().isPiError() || c.message() == null) {
                message = null;
                payloadLength = 0;
            } else {
                message = truncate(c.message());
                payloadLength = message.length;
            }
            return this;
        }

        @Override
        public void writeHeader(ByteBuffer d) {
            long block = 0;
            long lba = 0;
            long expected = 0;
            long actual = 0;
            if (c.piError() != null) {
                block = c.piError().blockIndex();
                lba = c.errorLba();
                expected = c.piError().expected();
                actual = c.piError().actual();
            }
            d.putInt(Protocol.MAGIC).put((byte) Protocol.VERSION).put((byte) (opcode | Protocol.RESPONSE))
                    .putShort((short) 0).putInt(commandId).putInt(payloadLength)
                    .putShort((short) Protocol.statusCode(c.status())).putShort((short) 0).putInt((int) block)
                    .putLong(lba).putLong(expected).putLong(actual).putLong(0).putLong(0);
        }

        @Override
        public int payloadLength() {
            return payloadLength;
        }

        @Override
        public void fillPayload(ByteBuffer d, int n) {
            if (message != null) {
                d.put(message, messageAt, n);
                messageAt += n;
                return;
            }
            if (metadataOnly) {
                d.put(d.position(), meta.buffer, messageAt, n).position(d.position() + n);
                messageAt += n;
                return;
            }
            if (!started) {
                started = true;
                txShuttle.reset(volume.info.format(), data.buffer, meta == null ? null : meta.buffer);
            }
            txShuttle.toWire(d, n);
        }

        /** Written (or dropped with the connection): the buffers and this object go back to their pools. */
        @Override
        public void released() {
            pool.release(data);
            pool.release(meta);
            data = null;
            meta = null;
            protection = null;
            volume = null;
            c = null;
            if (freeRequests.size() < depth) {
                freeRequests.push(this);
            }
        }
    }

    private final java.util.ArrayDeque<TargetRequest> freeRequests = new java.util.ArrayDeque<>();

    private final long acceptedNanos = System.nanoTime();

    TcpTargetQueue(EventLoop loop, SocketChannel ch, TcpTargetListener listener, TargetHandler handler) {
        super(loop, ch, "target", describe(ch));
        this.listener = listener;
        this.handler = handler;
        this.frameTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(listener.config().frameTimeoutMillis);
    }

    /** The host's certificate is known: with access rules, it decides which volumes the host may use. */
    @Override
    void tlsReady() {
        AccessRules rules = listener.config().access;
        if (rules != null) {
            access = new HostAccess(rules, tlsIdentity(), peer);
        }
    }

    /** Mid-frame stalls (see {@link TcpConnection#onTimer}), and a peer that never says HELLO. */
    @Override
    public void onTimer(long now) {
        super.onTimer(now);
        long limit = listener.config().connectTimeoutMillis;
        if (!closed && !greeted && now - acceptedNanos > TimeUnit.MILLISECONDS.toNanos(limit)) {
            close((tlsHandshaking() ? "TLS handshake not finished" : "no HELLO") + " within " + limit
                    + " ms of connecting", true);
        }
    }

    @Override
    PayloadSink onHeader(int op, int flags, int cid, long len) throws ProtocolException {
        if (!greeted) {
            if (op != Protocol.OP_HELLO) {
                throw new ProtocolException("the first frame must be HELLO, not opcode " + Protocol.opName(op));
            }
            if (len != 0) {
                throw new ProtocolException("HELLO carries a payload of " + len + " bytes");
            }
            return null;
        }
        if (op == Protocol.OP_PATH_STATES) {
            return onPathStatesHeader(flags, cid, len);
        }
        if (op == Protocol.OP_VOLUMES) {
            if (!volumeList) {
                throw new ProtocolException("VOLUMES without the volume list feature (HELLO did not get it)");
            }
            if (flags != 0 || len != 0) {
                throw new ProtocolException("VOLUMES with flags 0x" + Integer.toHexString(flags) + " and a payload of "
                        + len + " bytes (it carries neither)");
            }
            volumesCid = cid;
            return null;
        }
        if (!Protocol.isRequest(op)) {
            throw new ProtocolException(op == Protocol.OP_HELLO ? "a second HELLO"
                    : "unknown opcode 0x" + Integer.toHexString(op));
        }
        if ((flags & Protocol.F_METADATA_ONLY) != 0) {
            if (!metadataReads) {
                throw new ProtocolException("a metadata-only " + Protocol.opName(op)
                        + " without the metadata-only reads feature (HELLO did not get it)");
            }
            if (op != Protocol.OP_READ || flags != Protocol.F_METADATA_ONLY) {
                throw new ProtocolException("the metadata-only flag on " + Protocol.opName(op) + " with flags 0x"
                        + Integer.toHexString(flags) + " (only a READ carries it, and no other flag)");
            }
        } else if ((flags & ~Protocol.F_KNOWN) != 0) {
            throw new ProtocolException("unknown flags 0x" + Integer.toHexString(flags & ~Protocol.F_KNOWN) + " on "
                    + Protocol.opName(op));
        }
        if (op != Protocol.OP_WRITE && len != 0) {
            throw new ProtocolException(Protocol.opName(op) + " carries a payload of " + len + " bytes");
        }
        if (++outstanding > depth) {
            throw new ProtocolException("more than the negotiated " + depth + " commands outstanding");
        }
        ByteBuffer h = header;
        WireVolume v = listener.volume(h.getInt(Protocol.O_VOLUME));
        boolean pract = (flags & Protocol.F_PRACT) != 0;
        int app = h.getShort(Protocol.O_APP_TAG) & 0xFFFF;
        Protection p = new Protection(pract, Protocol.checkFlags(flags), h.getLong(Protocol.O_REF_TAG), app,
                h.getShort(Protocol.O_APP_MASK) & 0xFFFF);
        TargetRequest t = freeRequests.isEmpty() ? new TargetRequest() : freeRequests.pop();
        t.init(op, cid, flags, h.getLong(Protocol.O_LBA), h.getInt(Protocol.O_BLOCKS) & 0xFFFFFFFFL, p);
        t.fenceKey = h.getLong(Protocol.O_FENCE_KEY);
        t.fenceEpoch = h.getInt(Protocol.O_FENCE_EPOCH) & 0xFFFFFFFFL;
        t.fenceSeq = h.getLong(Protocol.O_FENCE_SEQ);
        rx = t;
        t.volume = v;
        t.error = validate(t, len);
        if (op != Protocol.OP_WRITE) {
            return null;
        }
        if (t.error != null) {
            return PayloadSink.DISCARD;
        }
        // Sizes below were checked: len == blocks * (DATA + META) <= the negotiated maximum.
        BlockFormat f = t.volume.info.format();
        int n = (int) t.blocks;
        t.data = pool.acquire(n * f.dataSize());
        t.meta = f.metadataSize() > 0 ? pool.acquire(n * f.metadataSize()) : null;
        rxShuttle.reset(f, t.data.buffer, t.meta == null ? null : t.meta.buffer);
        if (f.hasPi() && !p.checks().isNone()) {
            // One payload arrives at a time, and its verifier is read in onFrame before the next
            // header: one stream per connection, restarted per write.
            t.verifier = rxVerifier == null ? rxVerifier = PiStream.verifier(p.context(f), n)
                    : rxVerifier.restart(p.context(f), n);
        }
        return writeSink;
    }

    /** The fence this connection's requests carried last ({@link io.pistore.spi.WriteFence#reuse}). */
    private io.pistore.spi.WriteFence lastFence;

    /**
     * The checks the transport needs before it sizes anything: the volume id and this host's access
     * to it, then the rule every hop
     * shares ({@link RequestCheck#validateHeader}), then the framing (a write's payload length);
     * null when fine.
     */
    private Completion validate(TargetRequest t, long len) {
        if (t.volume == null) {
            return Completion.failure(Status.NO_SUCH_VOLUME, "no volume with id " + header.getInt(Protocol.O_VOLUME));
        }
        if (access != null) {
            Completion refused = access.refusal(t.opcode, t.volume, header.getInt(Protocol.O_VOLUME));
            if (refused != null) {
                return refused;
            }
        }
        Completion c = RequestCheck.validateHeader(Protocol.operation(t.opcode), t.lba, t.blocks, t.protection,
                t.volume.info, maxPayload);
        if (c != null) {
            return c;
        }
        if (t.metadataOnly && t.volume.info.format().metadataSize() == 0) {
            return Completion.failure(Status.INVALID_FIELD, "a metadata-only read of volume " + t.volume.info.name()
                    + " (" + t.volume.info.format().sizes() + "), which has no metadata");
        }
        long bytes = t.blocks * t.volume.info.format().blockSize();
        if (t.opcode == Protocol.OP_WRITE && len != bytes) {
            return Completion.failure(Status.INVALID_FIELD, "payload of " + len + " bytes, " + t.blocks + " blocks of "
                    + t.volume.info.format().sizes() + " need " + bytes);
        }
        return null;
    }

    @Override
    void onFrame(int op) throws ProtocolException {
        if (!greeted) {
            onHello();
            return;
        }
        if (op == Protocol.OP_VOLUMES) {
            // answered at once, before the next frame is read: it never waits, so it takes no room of the depth
            sendPayload(Protocol.OP_VOLUMES | Protocol.RESPONSE, volumesCid,
                    WireVolume.encode(visibleVolumes(), (int) Math.min(maxPayload, Protocol.MAX_HANDSHAKE_PAYLOAD)));
            return;
        }
        if (op == Protocol.OP_PATH_STATES) {
            int cid = pathCid;
            listener.pathStates().await(pathKnown, pathWaitMs, report -> {
                if (loop.inLoop()) {
                    answerPathStates(cid, report);
                } else {
                    loop.execute(() -> answerPathStates(cid, report));
                }
            });
            return;
        }
        TargetRequest t = rx;
        rx = null;
        if (t.error != null) {
            respond(t, t.error);
            return;
        }
        String name = t.volume.info.name();
        BlockFormat f = t.volume.info.format();
        BlockRequest r;
        PiDuty duty = PiDuty.NONE;
        switch (op) {
            case Protocol.OP_WRITE: {
                PiError e = t.verifier == null ? null : t.verifier.firstError();
                if (e != null) {
                    inTransport(name, e);
                    respond(t, Completion.piError(t.lba, e));
                    return;
                }
                if (f.hasPi()) {
                    // The PI is in the request now: with PRACT the host's encoder generated it; the
                    // fields asked were checked as the bytes arrived (none when none were asked).
                    duty = PiDuty.of(t.protection);
                    duty = (t.protection.pract() ? duty.generatedBy(PiDuty.Hop.HOST) : duty).checkedBy(PiDuty.Hop.WIRE);
                }
                r = BlockRequest.write(name, t.lba, (int) t.blocks, t.data.list(), t.meta == null ? null : t.meta.list(),
                        t.protection, t.fua());
                break;
            }
            case Protocol.OP_READ: {
                int n = (int) t.blocks;
                if (t.metadataOnly) { // nothing to check: the host reads the data of what it must check
                    t.meta = pool.acquire(n * f.metadataSize());
                    r = BlockRequest.readMetadata(name, t.lba, n, t.meta.list());
                    break;
                }
                t.data = pool.acquire(n * f.dataSize());
                t.meta = f.metadataSize() > 0 ? pool.acquire(n * f.metadataSize()) : null;
                r = BlockRequest.read(name, t.lba, n, t.data.list(), t.meta == null ? null : t.meta.list(), t.protection,
                        lastReceiveNanos());
                if (f.hasPi()) {
                    duty = PiDuty.of(t.protection).checkedBy(PiDuty.Hop.HOST); // the host's decoder checks what returns
                }
                break;
            }
            case Protocol.OP_FLUSH:
                r = BlockRequest.flush(name);
                break;
            case Protocol.OP_WRITE_ZEROES:
                r = BlockRequest.writeZeroes(name, t.lba, (int) t.blocks, t.fua());
                break;
            default:
                r = BlockRequest.deallocate(name, t.lba, (int) t.blocks);
                break;
        }
        if (t.fenceKey != 0 && t.opcode != Protocol.OP_READ && t.opcode != Protocol.OP_FLUSH) {
            r = r.withFence(lastFence = io.pistore.spi.WriteFence.reuse(lastFence, t.fenceKey, t.fenceEpoch, t.fenceSeq));
        }
        try {
            handler.execute(r, duty, t);
        } catch (RuntimeException e) {
            done(t, Completion.failure(Status.INTERNAL_ERROR, r.op() + ": " + e));
        }
    }

    private PayloadSink onPathStatesHeader(int flags, int cid, long len) throws ProtocolException {
        if (!pathStates) {
            throw new ProtocolException("PATH_STATES without the path states feature (HELLO did not get it)");
        }
        if (flags != 0 || len != 0) {
            throw new ProtocolException("PATH_STATES with flags 0x" + Integer.toHexString(flags) + " and a payload of "
                    + len + " bytes");
        }
        if (++outstanding > depth) {
            throw new ProtocolException("more than the negotiated " + depth + " commands outstanding");
        }
        pathCid = cid;
        pathKnown = header.getLong(Protocol.O_KNOWN_COUNTER);
        pathWaitMs = Math.min(header.getInt(Protocol.O_WAIT_MS) & 0xFFFFFFFFL, Protocol.MAX_PATH_WAIT_MS);
        return null;
    }

    /**
     * Answers a PATH_STATES query with {@code report} (loop thread): the volumes this host may see,
     * with access rules, else all.
     */
    private void answerPathStates(int cid, io.pistore.spi.PathReport report) {
        if (closed) {
            return;
        }
        outstanding--;
        if (access != null) {
            java.util.Map<String, io.pistore.spi.PathState> seen = new java.util.LinkedHashMap<>();
            for (WireVolume v : access.visible(listener.refreshVolumes())) {
                seen.put(v.info.name(), report.state(v.info.name()));
            }
            report = new io.pistore.spi.PathReport(report.counter(), seen);
        }
        sendPayload(Protocol.OP_PATH_STATES | Protocol.RESPONSE, cid, io.pistore.spi.wire.PathReportCodec.encode(report,
                (int) Math.min(maxPayload, Protocol.MAX_HANDSHAKE_PAYLOAD)));
    }

    /** Sends a SUCCESS answer {@code op} to command {@code cid} carrying {@code payload} (no other field used). */
    private void sendPayload(int op, int cid, byte[] payload) {
        send(new OutFrame() {
            private int at;

            @Override
            public void writeHeader(ByteBuffer b) {
                b.putInt(Protocol.MAGIC).put((byte) Protocol.VERSION).put((byte) op).putShort((short) 0).putInt(cid)
                        .putInt(payload.length).putShort((short) Protocol.statusCode(Status.SUCCESS)).put(new byte[46]);
            }

            @Override
            public int payloadLength() {
                return payload.length;
            }

            @Override
            public void fillPayload(ByteBuffer b, int n) {
                b.put(payload, at, n);
                at += n;
            }
        });
    }

    /** The target's volumes as this host may see them: with access rules, those granted; else all. */
    private List<WireVolume> visibleVolumes() throws ProtocolException {
        List<WireVolume> vols = listener.refreshVolumes();
        if (listener.config().access == null) {
            return vols;
        }
        if (access == null) {
            // cannot happen: the listener refuses rules without TLS, which runs before any frame
            throw new ProtocolException("access rules, but the host has no TLS identity");
        }
        return access.visible(vols);
    }

    /** Tells the handler (its counters) about a write whose PI this transport refused on arrival. */
    private void inTransport(String volume, PiError e) {
        try {
            handler.piErrorInTransport(volume, io.pistore.spi.Operation.WRITE, e.kind());
        } catch (RuntimeException ex) {
            LOG.log(System.Logger.Level.WARNING, "pistore tcp target: piErrorInTransport() of the handler failed", ex);
        }
    }

    private void done(TargetRequest t, Completion c) {
        if (loop.inLoop()) {
            respond(t, c);
        } else if (!loop.execute(() -> respond(t, c))) {
            // the transport closed; nobody is left to answer
        }
    }

    private void respond(TargetRequest t, Completion c) {
        if (closed) {
            return;
        }
        outstanding--;
        boolean payload = t.opcode == Protocol.OP_READ && c.isSuccess();
        if (!payload) {
            pool.release(t.data);
            pool.release(t.meta);
            t.data = null;
            t.meta = null;
        }
        send(t.respondWith(c, payload));
    }

    private static byte[] truncate(String m) {
        byte[] b = m.getBytes(StandardCharsets.UTF_8);
        if (b.length <= Protocol.MAX_MESSAGE) {
            return b;
        }
        byte[] cut = new byte[Protocol.MAX_MESSAGE];
        System.arraycopy(b, 0, cut, 0, cut.length);
        return cut;
    }

    private void onHello() throws ProtocolException {
        ByteBuffer h = header;
        long maxT = h.getInt(Protocol.O_MAX_TRANSFER) & 0xFFFFFFFFL;
        int d = h.getShort(Protocol.O_QUEUE_DEPTH) & 0xFFFF;
        int digests = h.get(Protocol.O_DIGESTS) & 0xFF;
        if (maxT == 0 || d == 0) {
            throw new ProtocolException("HELLO asks for a max transfer of " + maxT + " bytes and a queue depth of " + d);
        }
        if ((digests & ~(Protocol.DIGEST_HEADER | Protocol.DIGEST_DATA)) != 0) {
            throw new ProtocolException("HELLO asks for unknown digests 0x" + Integer.toHexString(digests));
        }
        long grantT = Math.min(maxT, listener.config().maxTransferBytes);
        int grantD = Math.min(d, listener.config().maxQueueDepth);
        short queueIndex = h.getShort(Protocol.O_QUEUE_INDEX);
        // features this target knows and has on, of those asked; unknown bits are not granted
        int features = h.get(Protocol.O_FEATURES) & ((listener.pathStates() != null ? Protocol.FEATURE_PATH_STATES : 0)
                | (handler.readsMetadataOnly() ? Protocol.FEATURE_METADATA_READS : 0) | Protocol.FEATURE_VOLUME_LIST
                | Protocol.FEATURE_NO_SPACE);
        long session = h.getLong(Protocol.O_SESSION);
        byte[] list = WireVolume.encode(visibleVolumes(), Protocol.MAX_HANDSHAKE_PAYLOAD);
        greeted = true;
        pathStates = (features & Protocol.FEATURE_PATH_STATES) != 0;
        metadataReads = (features & Protocol.FEATURE_METADATA_READS) != 0;
        volumeList = (features & Protocol.FEATURE_VOLUME_LIST) != 0;
        noSpace = (features & Protocol.FEATURE_NO_SPACE) != 0;
        depth = grantD;
        flushEvery(listener.config().flushFrames, grantD);
        pool.keepAtLeast(grantD);
        maxPayload = grantT;
        rxHeaderDigest = txHeaderDigest = (digests & Protocol.DIGEST_HEADER) != 0;
        rxDataDigest = txDataDigest = (digests & Protocol.DIGEST_DATA) != 0;
        send(new OutFrame() {
            private int at;

            @Override
            public void writeHeader(ByteBuffer b) {
                b.putInt(Protocol.MAGIC).put((byte) Protocol.VERSION).put((byte) Protocol.OP_HELLO_REPLY)
                        .putShort((short) 0).putInt(0).putInt(list.length)
                        .putInt((int) grantT).putShort((short) grantD).putShort(queueIndex)
                        .put((byte) digests).put((byte) features).put(new byte[6]).putLong(session).put(new byte[24]);
            }

            @Override
            public int payloadLength() {
                return list.length;
            }

            @Override
            public void fillPayload(ByteBuffer b, int n) {
                b.put(list, at, n);
                at += n;
            }

            @Override
            public boolean isHandshake() {
                return true;
            }
        });
    }

    /** Tells the handler a host connected (the engine prints one line per connection). */
    void opened() {
        announced = true;
        try {
            handler.connected(peer);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "pistore tcp target: connected() of the handler failed", e);
        }
    }

    @Override
    void onClosed(String reason) {
        listener.forget(this);
        if (!announced) {
            return;
        }
        try {
            handler.disconnected(peer, reason);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "pistore tcp target: disconnected() of the handler failed", e);
        }
    }
}
