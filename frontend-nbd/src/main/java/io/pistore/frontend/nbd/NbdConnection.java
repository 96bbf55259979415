package io.pistore.frontend.nbd;

import static io.pistore.frontend.nbd.NbdProtocol.*;

import io.pistore.spi.VolumeInfo;
import io.pistore.spi.internal.PolitePoll;
import java.io.EOFException;
import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One client connection: the fixed newstyle handshake, then the transmission phase.
 *
 * <p>The socket is non-blocking and has its own selector. The connection's thread does the
 * handshake (each message within the handshake timeout), then loops: parse every complete request
 * in the input buffer, hand it to the export, send the replies that are ready, and wait for more
 * input. With the in-process {@code local} transport a request runs on this thread while it is
 * handed over (see {@link io.pistore.spi.HostQueue#submitMayCompleteOnCaller}); its reply is then
 * kept in a batch that this thread writes with one gathering write once the input buffer holds no
 * further complete request (one write per request at queue depth 1, one per burst when the client
 * pipelines). A reply completed on another thread is written by that thread, straight to the socket
 * when nothing is queued before it; what the socket does not take is queued and written by the
 * connection's thread when the socket becomes writable, so no engine thread ever waits for a slow
 * client.
 *
 * <p>Bounds: requests in flight, and payload bytes in flight or waiting to be sent, are limited per
 * connection (reading pauses at the limit); a write's payload buffer is allocated only after its
 * length was checked against the largest payload; options longer than 16 KiB, writes longer than
 * 32 MiB, bad magic numbers and unknown client flags end the connection (only this one).
 */
final class NbdConnection implements Runnable {
    private static final int IN_BUFFER = 256 * 1024;
    /** A write payload at least this large is read straight into its own buffer. */
    private static final int DIRECT_READ = 64 * 1024;
    /** Read replies up to 4 KiB << (REPLY_CLASSES - 1) = 1 MiB of data use pooled direct buffers. */
    private static final int REPLY_CLASSES = 9;
    /** Room for the largest read reply header (structured: 20 + 8 bytes). */
    private static final int REPLY_HEADER_ROOM = 32;
    private static final int POOLED_PER_CLASS = 64;
    private static final long POOLED_BYTES = 16L << 20;

    private final NbdServer server;
    private final SocketChannel ch;
    private final String peer;
    private Selector selector;
    private SelectionKey key;

    private boolean noZeroes;
    private boolean structured;
    private NbdExport export;
    /** The export whose base:allocation context NBD_OPT_SET_META_CONTEXT selected, or null. */
    private String allocationContextExport;
    /** Whether base:allocation is selected for the transmission phase (NBD_CMD_BLOCK_STATUS allowed). */
    private boolean allocationContext;

    /** The thread of the transmission loop (replies it completes go to {@link #batch}). */
    private Thread loopThread;
    /** Replies completed on the loop's own thread, not written yet; only that thread. */
    private final java.util.ArrayList<ByteBuffer> batch = new java.util.ArrayList<>();
    private ByteBuffer[] gather = new ByteBuffer[16];

    private final Object outLock = new Object();
    /**
     * Direct buffers for read replies and write payloads, by data size class (4 KiB << class), returned
     * once written (a reply) or stored (a payload):
     * the volume's bytes are copied once into memory the socket sends from, where a heap buffer
     * costs a zeroing and one more copy into the JDK's temporary direct buffer. Guarded by outLock.
     */
    @SuppressWarnings("unchecked")
    private final ArrayDeque<ByteBuffer>[] replyPool = new ArrayDeque[REPLY_CLASSES];
    private long pooledBytes;
    /** Reply bytes the socket did not take yet; guarded by outLock. */
    private final ArrayDeque<ByteBuffer> pending = new ArrayDeque<>();
    /** Bytes in {@link #pending} and in {@link #batch}. */
    private final AtomicLong pendingBytes = new AtomicLong();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong inFlightBytes = new AtomicLong();
    /**
     * How the transmission loop waits for input: polls politely, then blocks (loop thread only). When
     * it loses its CPU while polling it polls once more, since the CPU often went to the client,
     * which then has sent its request (a client blocks between requests, it does not poll), and if
     * nothing came it blocks for this wait only.
     */
    private final PolitePoll poll = new PolitePoll(true, 0, true);
    private ByteBuffer pollIn;
    private ByteBuffer pollPayload;
    private final PolitePoll.Probe readProbe = () -> readInput(pollIn, pollPayload);
    /** Set by the loop when it waits for completions (paused reading or draining after DISC). */
    private volatile boolean wantWake;
    private volatile boolean closed;

    NbdConnection(NbdServer server, SocketChannel ch, String peer) {
        this.server = server;
        this.ch = ch;
        this.peer = peer;
    }

    int inFlight() {
        return inFlight.get();
    }

    /** How the transmission loop waited for input. */
    PolitePoll waiting() {
        return poll;
    }

    @Override
    public void run() {
        String end = "closed by the client";
        try {
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
            selector = Selector.open();
            key = ch.register(selector, 0);
            if (handshake()) {
                server.log("nbd: " + peer + " export " + export.name + " (" + export.size + " bytes"
                        + (structured ? ", structured replies" : "") + ")");
                end = transmission();
            }
        } catch (EOFException e) {
            end = "closed by the client";
        } catch (NbdProtocolException e) {
            end = "protocol error: " + e.getMessage();
        } catch (IOException e) {
            end = closed ? "server stopping" : "I/O error: " + e.getMessage();
        } catch (RuntimeException e) {
            end = closed ? "server stopping" : "internal error: " + e;
        } finally {
            close();
            server.ended(this);
            server.log("nbd: " + peer + " connection ended: " + end + waitSummary());
        }
    }

    /** How the connection waited for input, for its last log line (empty when it never polled). */
    private String waitSummary() {
        if (poll.polls() == 0) {
            return "";
        }
        return " (polls " + poll.polls() + ", requests caught polling " + poll.caught() + ", blocking waits "
                + poll.blockingWaits() + ", CPU lost while polling " + poll.lostCpu() + ")";
    }

    /** Ends the connection from another thread (server shutdown). */
    void shutdown() {
        close();
    }

    private void close() {
        closed = true;
        try {
            ch.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        Selector s = selector;
        if (s != null) {
            s.wakeup();
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
    }

    // ================================================================== handshake

    /** Option haggling; true when an export was chosen and transmission begins. */
    private boolean handshake() throws IOException {
        ByteBuffer hello = ByteBuffer.allocate(18);
        hello.putLong(NBDMAGIC).putLong(IHAVEOPT).putShort((short) (FLAG_FIXED_NEWSTYLE | FLAG_NO_ZEROES)).flip();
        writeFully(hello);
        ByteBuffer cf = readFully(4);
        int clientFlags = cf.getInt();
        if ((clientFlags & ~(FLAG_C_FIXED_NEWSTYLE | FLAG_C_NO_ZEROES)) != 0) {
            throw new NbdProtocolException("unknown client flags 0x" + Integer.toHexString(clientFlags));
        }
        boolean fixed = (clientFlags & FLAG_C_FIXED_NEWSTYLE) != 0;
        noZeroes = (clientFlags & FLAG_C_NO_ZEROES) != 0;
        while (true) {
            ByteBuffer h = readFully(16);
            long magic = h.getLong();
            if (magic != IHAVEOPT) {
                throw new NbdProtocolException("bad option magic 0x" + Long.toHexString(magic));
            }
            int option = h.getInt();
            long length = Integer.toUnsignedLong(h.getInt());
            if (length > MAX_OPTION_LENGTH) {
                throw new NbdProtocolException("option " + option + " carries " + length + " bytes (limit "
                        + MAX_OPTION_LENGTH + ")");
            }
            ByteBuffer data = readFully((int) length);
            if (!fixed && option != OPT_EXPORT_NAME) {
                throw new NbdProtocolException("option " + option + " without fixed newstyle");
            }
            if (server.isClosing() && option != OPT_ABORT) {
                optionReply(option, REP_ERR_SHUTDOWN, "server is shutting down");
                continue;
            }
            switch (option) {
                case OPT_EXPORT_NAME:
                    return exportName(data);
                case OPT_ABORT:
                    try {
                        optionReply(option, REP_ACK, (ByteBuffer) null);
                    } catch (IOException ignored) {
                        // the client may already be gone; it asked to end anyway
                    }
                    server.log("nbd: " + peer + " aborted the handshake");
                    return false;
                case OPT_LIST:
                    list(data);
                    break;
                case OPT_INFO:
                case OPT_GO:
                    if (infoOrGo(option, data)) {
                        return true;
                    }
                    break;
                case OPT_STRUCTURED_REPLY:
                    if (data.hasRemaining()) {
                        optionReply(option, REP_ERR_INVALID, "NBD_OPT_STRUCTURED_REPLY takes no data");
                    } else {
                        structured = true;
                        optionReply(option, REP_ACK, (ByteBuffer) null);
                    }
                    break;
                case OPT_LIST_META_CONTEXT:
                case OPT_SET_META_CONTEXT:
                    metaContext(option, data);
                    break;
                case OPT_STARTTLS:
                    optionReply(option, REP_ERR_UNSUP, "TLS is not supported by this server");
                    break;
                default:
                    optionReply(option, REP_ERR_UNSUP, "option " + option + " is not supported");
                    break;
            }
        }
    }

    private boolean exportName(ByteBuffer data) throws IOException {
        String name = utf8(data, data.remaining());
        NbdExport e = server.export(name);
        if (e == null) {
            // NBD_OPT_EXPORT_NAME has no error reply: the only answer is to end the session.
            throw new NbdProtocolException("no export named '" + name + "' (NBD_OPT_EXPORT_NAME)");
        }
        ByteBuffer b = ByteBuffer.allocate(noZeroes ? 10 : 134);
        b.putLong(e.size).putShort((short) transmissionFlags());
        b.position(b.limit()).flip();
        writeFully(b);
        chosen(e);
        return true;
    }

    /** The export of the transmission phase; a meta context selected for another export is dropped. */
    private void chosen(NbdExport e) {
        export = e;
        allocationContext = allocationContextExport != null && allocationContextExport.equals(e.name);
    }

    /**
     * NBD_OPT_LIST_META_CONTEXT and NBD_OPT_SET_META_CONTEXT: the export name, then the queries.
     * The only context is {@code base:allocation}; LIST with no query, or with {@code base:}, names
     * it. SET selects it when asked for by name (and replaces any earlier selection), and needs
     * structured replies first.
     */
    private void metaContext(int option, ByteBuffer data) throws IOException {
        boolean set = option == OPT_SET_META_CONTEXT;
        if (set && !structured) {
            optionReply(option, REP_ERR_INVALID, "NBD_OPT_SET_META_CONTEXT needs NBD_OPT_STRUCTURED_REPLY first");
            return;
        }
        if (data.remaining() < 8) {
            optionReply(option, REP_ERR_INVALID, "option data of " + data.remaining() + " bytes is too short");
            return;
        }
        long nameLength = Integer.toUnsignedLong(data.getInt());
        if (nameLength > data.remaining() - 4) {
            optionReply(option, REP_ERR_INVALID, "name length " + nameLength + " exceeds the option data");
            return;
        }
        String name = utf8(data, (int) nameLength);
        long queries = Integer.toUnsignedLong(data.getInt());
        boolean match = false;
        for (long q = 0; q < queries; q++) {
            if (data.remaining() < 4) {
                optionReply(option, REP_ERR_INVALID, queries + " queries do not fit the option data");
                return;
            }
            long len = Integer.toUnsignedLong(data.getInt());
            if (len > data.remaining()) {
                optionReply(option, REP_ERR_INVALID, "query length " + len + " exceeds the option data");
                return;
            }
            String query = utf8(data, (int) len);
            match |= query.equals(BASE_ALLOCATION) || (!set && query.equals("base:"));
        }
        if (data.hasRemaining()) {
            optionReply(option, REP_ERR_INVALID, data.remaining() + " bytes after the last query");
            return;
        }
        NbdExport e = server.export(name);
        if (e == null) {
            optionReply(option, REP_ERR_UNKNOWN, "no export named '" + name + "'");
            return;
        }
        boolean selected = match || (!set && queries == 0);
        if (set) {
            allocationContextExport = match ? e.name : null;
        }
        if (selected) {
            byte[] n = BASE_ALLOCATION.getBytes(StandardCharsets.US_ASCII);
            ByteBuffer b = ByteBuffer.allocate(4 + n.length);
            b.putInt(BASE_ALLOCATION_ID).put(n).flip();
            optionReply(option, REP_META_CONTEXT, b);
        }
        optionReply(option, REP_ACK, (ByteBuffer) null);
    }

    private void list(ByteBuffer data) throws IOException {
        if (data.hasRemaining()) {
            optionReply(OPT_LIST, REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
            return;
        }
        List<VolumeInfo> vols = server.volumes();
        for (VolumeInfo v : vols) {
            byte[] name = v.name().getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = ByteBuffer.allocate(4 + name.length);
            b.putInt(name.length).put(name).flip();
            optionReply(OPT_LIST, REP_SERVER, b);
        }
        optionReply(OPT_LIST, REP_ACK, (ByteBuffer) null);
    }

    /** NBD_OPT_INFO or NBD_OPT_GO; true when GO succeeded. */
    private boolean infoOrGo(int option, ByteBuffer data) throws IOException {
        if (data.remaining() < 6) {
            optionReply(option, REP_ERR_INVALID, "option data of " + data.remaining() + " bytes is too short");
            return false;
        }
        long nameLength = Integer.toUnsignedLong(data.getInt());
        if (nameLength > data.remaining() - 2) {
            optionReply(option, REP_ERR_INVALID, "name length " + nameLength + " exceeds the option data");
            return false;
        }
        String name = utf8(data, (int) nameLength);
        int requests = Short.toUnsignedInt(data.getShort());
        if (data.remaining() != 2 * requests) {
            optionReply(option, REP_ERR_INVALID, requests + " information requests need " + 2 * requests
                    + " bytes, the option has " + data.remaining());
            return false;
        }
        boolean wantName = false;
        boolean wantDescription = false;
        for (int i = 0; i < requests; i++) {
            int info = Short.toUnsignedInt(data.getShort());
            wantName |= info == INFO_NAME;
            wantDescription |= info == INFO_DESCRIPTION;
        }
        NbdExport e = server.export(name);
        if (e == null) {
            optionReply(option, REP_ERR_UNKNOWN, name.isEmpty()
                    ? "no default export: there is not exactly one volume; name one (NBD_OPT_LIST)"
                    : "no export named '" + name + "'");
            return false;
        }
        ByteBuffer ex = ByteBuffer.allocate(12);
        ex.putShort((short) INFO_EXPORT).putLong(e.size).putShort((short) transmissionFlags()).flip();
        optionReply(option, REP_INFO, ex);
        if (wantName) {
            optionReply(option, REP_INFO, infoString(INFO_NAME, e.name));
        }
        if (wantDescription) {
            optionReply(option, REP_INFO, infoString(INFO_DESCRIPTION, "pistore volume " + e.description()));
        }
        // Always sent: a client that did not ask may ignore it; the constraints are the defaults'
        // (minimum 1) except the maximum payload, and larger writes are refused cleanly.
        ByteBuffer bs = ByteBuffer.allocate(14);
        bs.putShort((short) INFO_BLOCK_SIZE).putInt(1).putInt(Math.max(512, e.dataSize)).putInt(e.maxPayload).flip();
        optionReply(option, REP_INFO, bs);
        optionReply(option, REP_ACK, (ByteBuffer) null);
        if (option == OPT_GO) {
            chosen(e);
            return true;
        }
        return false;
    }

    private static ByteBuffer infoString(int type, String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(b.length, MAX_STRING);
        ByteBuffer buf = ByteBuffer.allocate(2 + n);
        buf.putShort((short) type).put(b, 0, n).flip();
        return buf;
    }

    private int transmissionFlags() {
        int f = TF_HAS_FLAGS | TF_SEND_FLUSH | TF_SEND_FUA | TF_SEND_TRIM | TF_SEND_WRITE_ZEROES | TF_CAN_MULTI_CONN;
        if (structured) {
            f |= TF_SEND_DF;
        }
        return f;
    }

    private void optionReply(int option, int type, String message) throws IOException {
        ByteBuffer data = null;
        if (message != null) {
            data = ByteBuffer.wrap(truncate(message));
        }
        optionReply(option, type, data);
    }

    private void optionReply(int option, int type, ByteBuffer data) throws IOException {
        int len = data == null ? 0 : data.remaining();
        ByteBuffer h = ByteBuffer.allocate(20);
        h.putLong(OPTION_REPLY_MAGIC).putInt(option).putInt(type).putInt(len).flip();
        if (data == null) {
            writeFully(h);
        } else {
            writeFully(h, data);
        }
    }

    private static String utf8(ByteBuffer b, int n) {
        byte[] a = new byte[n];
        b.get(a);
        return new String(a, StandardCharsets.UTF_8);
    }

    private ByteBuffer readFully(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(server.options().handshakeTimeoutMillis);
        while (b.hasRemaining()) {
            int r = ch.read(b);
            if (r < 0) {
                throw new EOFException();
            }
            if (r == 0) {
                awaitReady(SelectionKey.OP_READ, deadline);
            }
        }
        return b.flip();
    }

    private void writeFully(ByteBuffer... bufs) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(server.options().handshakeTimeoutMillis);
        while (remaining(bufs) > 0) {
            if (ch.write(bufs) == 0) {
                awaitReady(SelectionKey.OP_WRITE, deadline);
            }
        }
    }

    private void awaitReady(int op, long deadline) throws IOException {
        if (closed) {
            throw new IOException("connection closed");
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        if (ms <= 0) {
            throw new NbdProtocolException("handshake timed out after "
                    + server.options().handshakeTimeoutMillis + " ms");
        }
        key.interestOps(op);
        selector.select(ms);
        selector.selectedKeys().clear();
        key.interestOps(0);
        if (closed) {
            throw new IOException("connection closed");
        }
    }

    private static long remaining(ByteBuffer[] bufs) {
        long n = 0;
        for (ByteBuffer b : bufs) {
            n += b.remaining();
        }
        return n;
    }

    // ================================================================== transmission

    /** The transmission phase; returns why it ended. */
    private String transmission() throws IOException {
        loopThread = Thread.currentThread();
        ByteBuffer in = ByteBuffer.allocateDirect(IN_BUFFER);
        in.flip();
        NbdRequest cur = null;
        ByteBuffer payload = null;
        long discard = 0;
        boolean disc = false;
        boolean pipelining = false;
        boolean arrivedAtOnce = false;
        while (!closed) {
            // 1. Everything complete in the input buffer, as far as the limits allow.
            int parsed = 0;
            while (true) {
                if (cur != null) {
                    if (payload != null) {
                        move(in, payload);
                        if (payload.hasRemaining()) {
                            break;
                        }
                        payload.flip();
                        write(cur, payload);
                        cur = null;
                        payload = null;
                        continue;
                    }
                    int skip = (int) Math.min(in.remaining(), discard);
                    in.position(in.position() + skip);
                    discard -= skip;
                    if (discard > 0) {
                        break;
                    }
                    fail(cur, EINVAL, -1, "write of " + cur.length + " bytes exceeds the largest payload of "
                            + export.maxPayload + " bytes");
                    cur = null;
                    continue;
                }
                if (disc || !admit() || in.remaining() < REQUEST_HEADER) {
                    break;
                }
                NbdRequest r = NbdRequest.parse(in);
                parsed++;
                if (r.type == CMD_DISC) {
                    disc = true;
                    break;
                }
                begin(r);
                if (r.type == CMD_WRITE) {
                    if (r.length > PORTABLE_PAYLOAD_LIMIT) {
                        throw new NbdProtocolException("write of " + r.length + " bytes (limit " + PORTABLE_PAYLOAD_LIMIT
                                + ")");
                    }
                    cur = r;
                    if (r.length > export.maxPayload) {
                        discard = r.length;
                    } else {
                        // A pooled direct buffer, as for read replies: no zeroing of a fresh heap
                        // buffer per write, no copy through the JDK's temporary direct buffer, and
                        // back to the pool once the engine is done with it.
                        payload = replyBuffer(0, (int) r.length);
                        inFlightBytes.addAndGet(r.length);
                    }
                    continue;
                }
                dispatch(r);
            }
            // The replies this thread completed, in one gathering write.
            flushBatch();
            if (disc && inFlight.get() == 0 && pendingBytes.get() == 0) {
                return "disconnect requested (NBD_CMD_DISC)";
            }
            // 2. A client that pipelines usually has more input ready: read it without asking the
            //    selector. With one request in flight (queue depth 1) the read would find nothing,
            //    unless the client sent its next request before it could have seen our reply: that
            //    read, done when this connection polls, tells a pipelining client from one that
            //    waits for each reply even when polling catches the requests one by one.
            if (parsed > 0) {
                pipelining = parsed > 1 || arrivedAtOnce;
                arrivedAtOnce = false;
            }
            boolean reading = !disc && (cur != null || admit());
            long spin = server.options().spinNanos;
            if (reading && pendingBytes.get() == 0
                    && (cur != null || pipelining || inFlight.get() > 1 || (spin > 0 && inFlight.get() == 0))) {
                int n = readInput(in, payload);
                if (n < 0) {
                    return endOfInput(cur);
                }
                if (n > 0) {
                    arrivedAtOnce |= cur == null;
                    continue;
                }
            }
            // 3. Wait for input, for the socket to take queued replies, or for completions. When a
            //    client that does not pipeline has every reply (or is sending a payload), its next
            //    bytes usually follow within microseconds: poll for them (adaptively, politely)
            //    before blocking. A pipelining client is not polled for: its requests come in
            //    bursts, and a wait that blocks lets a burst gather, whose replies then leave in one
            //    write (polling would catch and answer them one at a time), and on a small machine
            //    the CPU is better left to the client.
            if (reading && !pipelining && pendingBytes.get() == 0
                    && inFlight.get() == (cur != null ? 1 : 0)) {
                pollIn = in;
                pollPayload = payload;
                int n = poll.poll(readProbe, spin);
                pollPayload = null;
                if (n < 0) {
                    return endOfInput(cur);
                }
                if (n > 0) {
                    continue;
                }
            }
            wantWake = !reading;
            if (!reading && (disc ? inFlight.get() == 0 : admit())) {
                continue; // a completion came between the checks and the flag
            }
            int ops = reading ? SelectionKey.OP_READ : 0;
            if (pendingBytes.get() > 0) {
                ops |= SelectionKey.OP_WRITE;
            }
            key.interestOps(ops);
            poll.blocking();
            selector.select();
            wantWake = false;
            int ready = selector.selectedKeys().isEmpty() ? 0 : key.readyOps();
            selector.selectedKeys().clear();
            if ((ready & SelectionKey.OP_READ) != 0) {
                poll.wokeUp();
            }
            if ((ready & SelectionKey.OP_WRITE) != 0) {
                flushPending();
            }
            if ((ready & SelectionKey.OP_READ) != 0 && readInput(in, payload) < 0) {
                return endOfInput(cur);
            }
        }
        return "server stopping";
    }

    /** One non-blocking read: into the write payload being filled when it is large, else the buffer. */
    private int readInput(ByteBuffer in, ByteBuffer payload) throws IOException {
        if (payload != null && !in.hasRemaining() && payload.remaining() >= DIRECT_READ) {
            return ch.read(payload);
        }
        in.compact();
        try {
            return ch.read(in);
        } finally {
            in.flip();
        }
    }

    private String endOfInput(NbdRequest cur) {
        return inFlight.get() > 0 || cur != null ? "closed by the client with requests in flight"
                : "closed by the client without NBD_CMD_DISC";
    }

    private static void move(ByteBuffer from, ByteBuffer to) {
        int n = Math.min(from.remaining(), to.remaining());
        ByteBuffer part = from.duplicate();
        part.limit(part.position() + n);
        to.put(part);
        from.position(from.position() + n);
    }

    private boolean admit() {
        NbdServer.Options o = server.options();
        return inFlight.get() < o.maxInFlight && inFlightBytes.get() + pendingBytes.get() < o.maxInFlightBytes;
    }

    /** Counts a request from its header until its reply is handed to the socket. */
    private void begin(NbdRequest r) {
        inFlight.incrementAndGet();
    }

    private void dispatch(NbdRequest r) {
        switch (r.type) {
            case CMD_READ:
                read(r);
                break;
            case CMD_BLOCK_STATUS:
                blockStatus(r);
                break;
            case CMD_FLUSH:
                if (!flagsAllowed(r, CMD_FLAG_FUA)) {
                    return;
                }
                engine(r, export.flush(), 0);
                break;
            case CMD_TRIM:
                if (!flagsAllowed(r, CMD_FLAG_FUA) || !inRange(r, EINVAL)) {
                    return;
                }
                engine(r, r.length == 0 ? done() : export.trim(r.offset, r.length), 0);
                break;
            case CMD_WRITE_ZEROES:
                if (!flagsAllowed(r, CMD_FLAG_FUA | CMD_FLAG_NO_HOLE) || !inRange(r, ENOSPC)) {
                    return;
                }
                engine(r, r.length == 0 ? done() : export.writeZeroes(r.offset, r.length,
                        (r.flags & CMD_FLAG_FUA) != 0, (r.flags & CMD_FLAG_NO_HOLE) != 0), 0);
                break;
            default:
                fail(r, EINVAL, -1, "unknown command " + r.type);
                break;
        }
    }

    private void read(NbdRequest r) {
        if (!flagsAllowed(r, CMD_FLAG_FUA | (structured ? CMD_FLAG_DF : 0)) || !inRange(r, EINVAL)) {
            return;
        }
        if (r.length > export.maxPayload) {
            fail(r, EINVAL, -1, "read of " + r.length + " bytes exceeds the largest payload of "
                    + export.maxPayload + " bytes");
            return;
        }
        int len = (int) r.length;
        if (len == 0) {
            engine(r, done(), 0);
            return;
        }
        int header = structured ? STRUCTURED_REPLY_HEADER + 8 : SIMPLE_REPLY_HEADER;
        ByteBuffer reply = replyBuffer(header, len);
        inFlightBytes.addAndGet(len);
        ByteBuffer data = reply.duplicate();
        data.position(header);
        server.engineRequests.incrementAndGet();
        export.read(r.offset, data.slice()).whenComplete((o, ex) -> {
            server.engineRequests.decrementAndGet();
            Outcome out = ex != null ? Outcome.error(EIO, String.valueOf(ex)) : o;
            if (out.isOk()) {
                if (structured) {
                    reply.putInt(STRUCTURED_REPLY_MAGIC).putShort((short) REPLY_FLAG_DONE)
                            .putShort((short) REPLY_TYPE_OFFSET_DATA).putLong(r.cookie).putInt(8 + len)
                            .putLong(r.offset);
                } else {
                    reply.putInt(SIMPLE_REPLY_MAGIC).putInt(0).putLong(r.cookie);
                }
                reply.position(0);
                complete(r, reply, len);
            } else {
                synchronized (outLock) {
                    recycle(reply);
                }
                failed(r, out, len);
            }
        });
    }

    /** A buffer for a read reply: {@code header + len} bytes between position 0 and the limit. */
    private ByteBuffer replyBuffer(int header, int len) {
        int cls = 32 - Integer.numberOfLeadingZeros((len - 1) >>> 12);
        if (cls >= REPLY_CLASSES) {
            return ByteBuffer.allocate(header + len);
        }
        ByteBuffer b;
        synchronized (outLock) {
            ArrayDeque<ByteBuffer> q = replyPool[cls];
            b = q == null ? null : q.poll();
            if (b != null) {
                pooledBytes -= b.capacity();
            }
        }
        if (b == null) {
            b = ByteBuffer.allocateDirect(REPLY_HEADER_ROOM + (4096 << cls));
        }
        b.clear().limit(header + len);
        return b;
    }

    /** Returns a written read reply's buffer, or a stored write's payload, to the pool; under outLock, any thread. */
    private void recycle(ByteBuffer b) {
        if (!b.isDirect()) {
            return;
        }
        int cls = Integer.numberOfTrailingZeros((b.capacity() - REPLY_HEADER_ROOM) >>> 12);
        ArrayDeque<ByteBuffer> q = replyPool[cls];
        if (q == null) {
            q = replyPool[cls] = new ArrayDeque<>();
        }
        if (q.size() < POOLED_PER_CLASS && pooledBytes + b.capacity() <= POOLED_BYTES) {
            q.push(b);
            pooledBytes += b.capacity();
        }
    }

    /** NBD_CMD_BLOCK_STATUS for base:allocation: one NBD_REPLY_TYPE_BLOCK_STATUS chunk. */
    private void blockStatus(NbdRequest r) {
        if (!allocationContext) {
            fail(r, EINVAL, -1, "NBD_CMD_BLOCK_STATUS without the base:allocation meta context (NBD_OPT_SET_META_CONTEXT)");
            return;
        }
        if (!flagsAllowed(r, CMD_FLAG_REQ_ONE) || !inRange(r, EINVAL)) {
            return;
        }
        if (r.length == 0) {
            fail(r, EINVAL, -1, "NBD_CMD_BLOCK_STATUS of length 0");
            return;
        }
        server.engineRequests.incrementAndGet();
        export.blockStatus(r.offset, r.length, (r.flags & CMD_FLAG_REQ_ONE) != 0).whenComplete((x, ex) -> {
            server.engineRequests.decrementAndGet();
            Outcome out = ex != null ? Outcome.error(EIO, String.valueOf(ex)) : x.outcome;
            if (!out.isOk()) {
                failed(r, out, 0);
                return;
            }
            int len = 4 + 8 * x.count;
            ByteBuffer reply = ByteBuffer.allocate(STRUCTURED_REPLY_HEADER + len);
            reply.putInt(STRUCTURED_REPLY_MAGIC).putShort((short) REPLY_FLAG_DONE)
                    .putShort((short) REPLY_TYPE_BLOCK_STATUS).putLong(r.cookie).putInt(len).putInt(BASE_ALLOCATION_ID);
            for (int i = 0; i < x.count; i++) {
                reply.putInt(x.lengths[i]).putInt(x.flags[i]);
            }
            complete(r, reply.flip(), 0);
        });
    }

    private void write(NbdRequest r, ByteBuffer payload) {
        long bytes = r.length;
        if (!flagsAllowed(r, CMD_FLAG_FUA, bytes) || !inRange(r, ENOSPC, bytes)) {
            return;
        }
        engine(r, r.length == 0 ? done() : export.write(r.offset, payload, (r.flags & CMD_FLAG_FUA) != 0), bytes,
                payload);
    }

    private static CompletableFuture<Outcome> done() {
        return CompletableFuture.completedFuture(Outcome.OK);
    }

    /** Replies when the engine's part of a request (other than a read) is done. */
    private void engine(NbdRequest r, CompletableFuture<Outcome> f, long bytes) {
        engine(r, f, bytes, null);
    }

    /** The same, and {@code payload} (a write's) goes back to the pool when the engine is done with it. */
    private void engine(NbdRequest r, CompletableFuture<Outcome> f, long bytes, ByteBuffer payload) {
        server.engineRequests.incrementAndGet();
        f.whenComplete((o, ex) -> {
            server.engineRequests.decrementAndGet();
            if (payload != null) {
                synchronized (outLock) {
                    recycle(payload);
                }
            }
            Outcome out = ex != null ? Outcome.error(EIO, String.valueOf(ex)) : o;
            if (out.isOk()) {
                complete(r, simpleReply(r.cookie, 0), bytes);
            } else {
                failed(r, out, bytes);
            }
        });
    }

    private boolean flagsAllowed(NbdRequest r, int allowed) {
        return flagsAllowed(r, allowed, 0);
    }

    private boolean flagsAllowed(NbdRequest r, int allowed, long bytes) {
        if ((r.flags & ~allowed) != 0) {
            fail(r, EINVAL, -1, "flags 0x" + Integer.toHexString(r.flags & ~allowed) + " are not valid for "
                    + NbdProtocol.commandName(r.type), bytes);
            return false;
        }
        return true;
    }

    private boolean inRange(NbdRequest r, int error) {
        return inRange(r, error, 0);
    }

    private boolean inRange(NbdRequest r, int error, long bytes) {
        if (!r.inside(export.size)) {
            fail(r, error, -1, "offset " + Long.toUnsignedString(r.offset) + " + length " + r.length
                    + " is beyond the export size " + export.size, bytes);
            return false;
        }
        return true;
    }

    private void fail(NbdRequest r, int error, long offset, String message) {
        fail(r, error, offset, message, 0);
    }

    private void fail(NbdRequest r, int error, long offset, String message, long bytes) {
        failed(r, offset >= 0 ? Outcome.errorAt(error, offset, message) : Outcome.error(error, message), bytes);
    }

    private void failed(NbdRequest r, Outcome o, long bytes) {
        server.log("nbd: " + peer + " " + export.name + " " + r + " failed: " + o);
        ByteBuffer reply;
        if (structured) {
            byte[] msg = truncate(o.message == null ? "" : o.message);
            boolean at = o.offset >= 0;
            int len = 6 + msg.length + (at ? 8 : 0);
            reply = ByteBuffer.allocate(STRUCTURED_REPLY_HEADER + len);
            reply.putInt(STRUCTURED_REPLY_MAGIC).putShort((short) REPLY_FLAG_DONE)
                    .putShort((short) (at ? REPLY_TYPE_ERROR_OFFSET : REPLY_TYPE_ERROR)).putLong(r.cookie).putInt(len)
                    .putInt(o.error).putShort((short) msg.length).put(msg);
            if (at) {
                reply.putLong(o.offset);
            }
            reply.flip();
        } else {
            reply = simpleReply(r.cookie, o.error);
        }
        complete(r, reply, bytes);
    }

    private static ByteBuffer simpleReply(long cookie, int error) {
        ByteBuffer b = ByteBuffer.allocate(SIMPLE_REPLY_HEADER);
        b.putInt(SIMPLE_REPLY_MAGIC).putInt(error).putLong(cookie).flip();
        return b;
    }

    private static byte[] truncate(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length <= 1024) {
            return b;
        }
        return java.util.Arrays.copyOf(b, 1024);
    }

    /**
     * Sends a request's reply and ends its accounting; any thread. On the loop's thread the reply
     * joins the batch the loop writes before it next reads or waits.
     */
    private void complete(NbdRequest r, ByteBuffer reply, long bytes) {
        if (Thread.currentThread() == loopThread) {
            batch.add(reply);
            pendingBytes.addAndGet(reply.remaining());
            inFlightBytes.addAndGet(-bytes);
            inFlight.decrementAndGet();
            return;
        }
        try {
            send(reply);
        } finally {
            inFlightBytes.addAndGet(-bytes);
            inFlight.decrementAndGet();
            if (wantWake) {
                wakeup();
            }
        }
    }

    /**
     * Writes the batch with as few gathering writes as the socket takes without blocking, behind
     * whatever is queued already; the rest joins the queue. Only the loop's thread.
     */
    private void flushBatch() {
        int n = batch.size();
        if (n == 0) {
            return;
        }
        if (gather.length < n) {
            gather = new ByteBuffer[Integer.highestOneBit(n) << 1];
        }
        batch.toArray(gather);
        batch.clear();
        synchronized (outLock) {
            if (closed) {
                java.util.Arrays.fill(gather, 0, n, null);
                return;
            }
            try {
                int first = 0;
                if (pending.isEmpty()) {
                    while (first < n) {
                        long w = ch.write(gather, first, Math.min(n - first, 1024));
                        pendingBytes.addAndGet(-w);
                        while (first < n && !gather[first].hasRemaining()) {
                            recycle(gather[first]);
                            first++;
                        }
                        if (w == 0) {
                            break;
                        }
                    }
                }
                for (int i = first; i < n; i++) {
                    pending.add(gather[i]);
                }
            } catch (IOException e) {
                server.log("nbd: " + peer + " reply failed: " + e.getMessage());
                close();
            } finally {
                java.util.Arrays.fill(gather, 0, n, null);
            }
        }
    }

    private void send(ByteBuffer reply) {
        boolean queued = false;
        synchronized (outLock) {
            if (closed) {
                return;
            }
            try {
                if (pending.isEmpty()) {
                    while (reply.hasRemaining() && ch.write(reply) > 0) {
                        // the socket takes what it can without blocking
                    }
                }
                if (!reply.hasRemaining()) {
                    recycle(reply);
                } else {
                    pending.add(reply);
                    pendingBytes.addAndGet(reply.remaining());
                    queued = true;
                }
            } catch (IOException e) {
                server.log("nbd: " + peer + " reply failed: " + e.getMessage());
                close();
                return;
            }
        }
        if (queued) {
            wakeup();
        }
    }

    /** Writes queued replies while the socket takes them; the connection's thread, on OP_WRITE. */
    private void flushPending() throws IOException {
        synchronized (outLock) {
            while (!pending.isEmpty()) {
                ByteBuffer b = pending.peek();
                int n = ch.write(b);
                pendingBytes.addAndGet(-n);
                if (b.hasRemaining()) {
                    return;
                }
                recycle(pending.poll());
            }
        }
    }

    private void wakeup() {
        Selector s = selector;
        if (s != null) {
            s.wakeup();
        }
    }
}
