package io.pistore.transport.rdma.verbs.soft;

import static io.pistore.transport.rdma.verbs.soft.SoftPackets.HEADER;

import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.QpState;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32;

/**
 * The packet path of one RC connection whose peer QP is in another process (rxe's role): the
 * requester and responder state of the local QP, over one socket that carries {@link SoftPackets}
 * frames in both directions. The local device moves bytes only from and to its own registered
 * memory; the peer's device does the same on its side, so the signature engine runs where the
 * integrity MR is and the wire carries its interleaved stream.
 *
 * <p>Requester: every SEND, RDMA WRITE and RDMA READ request gets the next PSN and stays in flight
 * until the responder acknowledges it (ACK, or the READ response); acknowledgements are cumulative,
 * as in IB, except that a READ is complete only with its response. A NAK with a sequence error, a
 * frame dropped for its CRC, or {@link #ACK_TIMEOUT_NANOS} without any response makes the requester
 * go back to its oldest unacknowledged PSN and send everything from there again, re-reading its memory
 * as a NIC does; more than {@link #RETRY_COUNT} tries without a completed WR end the head with
 * RETRY_EXC_ERR. An RNR NAK waits {@link SoftQp#RNR_DELAY_NANOS} and sends again, up to the QP's RNR
 * retry count (7: forever). An access, invalid-request or operation NAK ends that WR with the
 * matching remote error and moves the QP to the error state.
 *
 * <p>Responder: executes requests strictly in PSN order; a duplicate (older PSN) SEND or WRITE is
 * acknowledged again without executing it, a duplicate READ is executed again (reads are idempotent);
 * a PSN ahead of the expected one is dropped, with one NAK for the sequence error until the expected
 * PSN arrives. Keys, access rights, bounds and the QP state are checked here, on the responder, as by
 * the in-process fabric. ACKs are coalesced: the reader sends one when it has no more frames at hand
 * (acknowledgements are cumulative), and any other response acknowledges what came before it.
 *
 * <p>Threads: a reader thread reads and acts on frames and never writes (its responses go to the
 * writer thread), so it never waits for the peer; a posting thread builds its frame into a pooled
 * buffer, queues it, and writes the queue itself when no one else is writing, holding no lock the
 * reader needs; nothing is allocated per frame once the pool is warm.
 */
final class SoftLink {
    static final long ACK_TIMEOUT_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    static final int RETRY_COUNT = 7;
    private static final int QUEUE = 1 << 14;

    /** A frame in a reusable buffer. */
    static final class Packet {
        byte[] buf;
        int len;

        Packet(int capacity) {
            buf = new byte[Math.max(capacity, 256)];
        }

        void ensure(int n) {
            if (buf.length < n) {
                buf = new byte[Math.max(n, buf.length * 2)];
            }
        }
    }

    private static final Packet STOP = new Packet(0);

    private final SoftQp qp;
    private final Socket socket;
    private final String name;
    /** Frames waiting for the writer: a ring under its own monitor (no allocation per frame, unlike a j.u.c. lock under contention). */
    private final Object outLock = new Object();
    private final Packet[] outRing = new Packet[QUEUE];
    private int outHead;
    private int outCount;
    /** Buffers to reuse: a stack under its own monitor. */
    private final ReentrantLock writeLock = new ReentrantLock();
    /** Under the write lock: the buffered socket stream, the batch, the CRC. */
    private final OutputStream out;
    private final Packet[] batch = new Packet[64];
    private volatile boolean outputDone;
    private final Object freeLock = new Object();
    private final Packet[] freeStack = new Packet[1024];
    private int freeTop;
    private final CRC32 writerCrc = new CRC32();
    private final CRC32 readerCrc = new CRC32();
    private volatile boolean closed;
    private volatile boolean failed;

    // requester state, under reqLock
    private final Object reqLock = new Object();
    private final SendWr[] ring;
    private final long[] seqs;
    private final int[] psns;
    private int head;
    private int count;
    private int nextPsn;
    private int retries;
    private int rnrRetries;
    private long lastProgress;
    /** Sent again since the last completed WR. */
    private boolean resendPending;

    // responder state, reader thread only
    private int expectedPsn;
    private boolean nakSent;
    /** An ACK not sent yet: the reader coalesces them while more frames are at hand. */
    private boolean ackPending;
    private int ackPsn;

    SoftLink(SoftQp qp, Socket socket, String name) throws IOException {
        this.qp = qp;
        this.socket = socket;
        this.name = name;
        this.out = new BufferedOutputStream(socket.getOutputStream(), 64 << 10);
        int n = qp.config.maxSendWr();
        ring = new SendWr[n];
        for (int i = 0; i < n; i++) {
            ring[i] = new SendWr(qp.config.maxSendSge());
        }
        seqs = new long[n];
        psns = new int[n];
    }

    void start() {
        Thread r = new Thread(this::readLoop, "pistore-softnic-rx-" + name);
        r.setDaemon(true);
        Thread w = new Thread(this::writeLoop, "pistore-softnic-tx-" + name);
        w.setDaemon(true);
        r.start();
        w.start();
        SoftFabric.schedule(this::ackTimer, ACK_TIMEOUT_NANOS / 4);
    }

    // ------------------------------------------------------------------ frames out

    private Packet take(int payload) {
        Packet p = null;
        synchronized (freeLock) {
            if (freeTop > 0) {
                p = freeStack[--freeTop];
                freeStack[freeTop] = null;
            }
        }
        if (p == null) {
            p = new Packet(HEADER + payload + SoftPackets.CRC);
        }
        p.ensure(HEADER + payload + SoftPackets.CRC);
        return p;
    }

    private void recycle(Packet p) {
        if (p != STOP && p.buf.length <= (1 << 20)) {
            synchronized (freeLock) {
                if (freeTop < freeStack.length) {
                    freeStack[freeTop++] = p;
                }
            }
        }
    }

    /** Queues a frame for the writer thread (the reader's responses: the reader never writes itself). */
    private void queue(Packet p) {
        queue(p, true);
    }

    private void queue(Packet p, boolean wakeWriter) {
        if (closed || failed) {
            recycle(p);
            return;
        }
        if (!offer(p, wakeWriter)) {
            recycle(p);
            fail("the send queue of the packet path overflowed");
        }
    }

    private boolean offer(Packet p, boolean wakeWriter) {
        synchronized (outLock) {
            if (outCount == outRing.length) {
                return false;
            }
            outRing[(outHead + outCount) % outRing.length] = p;
            if (outCount++ == 0 && wakeWriter) {
                outLock.notifyAll();
            }
            return true;
        }
    }

    private void wakeWriter() {
        synchronized (outLock) {
            outLock.notifyAll();
        }
    }

    /** Moves up to {@code batch.length} queued frames into {@code batch}; 0 when there are none. */
    private int takeBatch(Packet[] batch) {
        synchronized (outLock) {
            int n = Math.min(outCount, batch.length);
            for (int i = 0; i < n; i++) {
                batch[i] = outRing[outHead];
                outRing[outHead] = null;
                outHead = (outHead + 1) % outRing.length;
            }
            outCount -= n;
            return n;
        }
    }

    private void control(int op, int psn) {
        if (op == SoftPackets.ACK) {
            // sent when the reader has no more frames at hand (acknowledgements are cumulative)
            ackPsn = ackPending && ackPsn - psn > 0 ? ackPsn : psn;
            ackPending = true;
            return;
        }
        ackPending = false; // any later response acknowledges what came before it
        frameOut(op, psn);
    }

    /** Sends the deferred ACK, if any (reader thread). */
    private void flushAck() {
        if (ackPending) {
            ackPending = false;
            frameOut(SoftPackets.ACK, ackPsn);
        }
    }

    private void frameOut(int op, int psn) {
        Packet p = take(0);
        SoftPackets.header(p.buf, op, psn, 0, 0, 0, 0);
        p.len = HEADER + SoftPackets.CRC;
        queue(p);
    }

    /**
     * A posting thread writes what is queued itself when nobody else is writing (one hand-off less
     * per request than through the writer thread); it holds no lock the reader needs while it
     * writes, so a full socket only makes it wait for the peer's reader, which always reads. Else the
     * writer thread, which holds the write lock, finds the frames when it looks again.
     */
    private void writeNowOrWake() {
        if (writeLock.tryLock()) {
            try {
                drainAndWrite();
            } finally {
                writeLock.unlock();
            }
            synchronized (outLock) {
                if (outCount == 0) {
                    return;
                }
            }
        }
        wakeWriter();
    }

    /** Writes every queued frame through the buffer and flushes; the write lock is held. */
    private void drainAndWrite() {
        if (outputDone) {
            return;
        }
        boolean stop = false;
        try {
            int n;
            while (!stop && (n = takeBatch(batch)) > 0) {
                for (int i = 0; i < n; i++) {
                    Packet p = batch[i];
                    batch[i] = null;
                    if (p == STOP) {
                        stop = true;
                    } else if (!stop) {
                        SoftPackets.seal(writerCrc, p.buf, p.len);
                        SoftFabric.packetTap(p.buf, p.len);
                        out.write(p.buf, 0, p.len);
                    }
                    recycle(p);
                }
            }
            out.flush();
            if (stop) {
                outputDone = true;
                socket.shutdownOutput();
                wakeWriter();
            }
        } catch (IOException e) {
            outputDone = true;
            wakeWriter();
            fail("packet path write failed: " + e.getMessage());
        }
    }

    /** The writer thread: writes what the reader and the timers queue, and what posting threads left. */
    private void writeLoop() {
        try {
            while (!outputDone) {
                synchronized (outLock) {
                    while (outCount == 0 && !outputDone) {
                        outLock.wait();
                    }
                }
                writeLock.lock();
                try {
                    drainAndWrite();
                } finally {
                    writeLock.unlock();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ requester

    /**
     * Sends a SEND, RDMA WRITE or RDMA READ (called in posting order with the QP's send lock held).
     * Returns null, or the status the WR completes with at once (a bad local SGE).
     */
    WcStatus post(SendWr wr, long seq) {
        boolean data = wr.opcode != WrOpcode.RDMA_READ;
        long total = wr.totalLength();
        if (total > SoftPackets.MAX_FRAME - HEADER - SoftPackets.CRC) {
            return WcStatus.LOC_LEN_ERR;
        }
        Packet p = take(data ? (int) total : 0);
        int len = data ? qp.gather(wr, p.buf, HEADER) : (int) total;
        if (len < 0) {
            recycle(p);
            return WcStatus.LOC_PROT_ERR;
        }
        if (wr.opcode == WrOpcode.RDMA_WRITE) {
            SoftFabric.tap(WrOpcode.RDMA_WRITE, p.buf, HEADER, len);
        }
        synchronized (reqLock) {
            if (failed || closed) {
                recycle(p);
                return WcStatus.WR_FLUSH_ERR;
            }
            int slot = (head + count) % ring.length;
            copy(wr, ring[slot]);
            seqs[slot] = seq;
            psns[slot] = nextPsn++;
            if (count++ == 0) {
                lastProgress = System.nanoTime();
            }
            frame(p, slot, len);
            queue(p, false);
        }
        writeNowOrWake();
        return null;
    }

    private static int opOf(SendWr wr) {
        switch (wr.opcode) {
            case RDMA_WRITE: return SoftPackets.WRITE;
            case RDMA_READ: return SoftPackets.READ_REQ;
            case SEND_WITH_INV: return SoftPackets.SEND_INV;
            default: return SoftPackets.SEND;
        }
    }

    private void frame(Packet p, int slot, int len) {
        SendWr wr = ring[slot];
        int op = opOf(wr);
        int payload = op == SoftPackets.READ_REQ ? 0 : len;
        int key = op == SoftPackets.SEND_INV ? wr.invalidateKey : wr.rkey;
        SoftPackets.header(p.buf, op, psns[slot], wr.remoteAddr, key, len, payload);
        p.len = HEADER + payload + SoftPackets.CRC;
    }

    private static void copy(SendWr w, SendWr c) {
        c.wrId = w.wrId;
        c.opcode = w.opcode;
        c.signaled = w.signaled;
        c.numSge = 0;
        for (int i = 0; i < w.numSge; i++) {
            c.addSge(w.sgl[i].addr, w.sgl[i].length, w.sgl[i].lkey);
        }
        c.remoteAddr = w.remoteAddr;
        c.rkey = w.rkey;
        c.invalidateKey = w.invalidateKey;
    }

    /**
     * Sends everything in flight again, from the oldest unacknowledged PSN (go-back-N). reqLock held.
     * Once sent again, further triggers wait for progress (a completed WR): the responses to the
     * first copies still arriving out of order must not start another round each; the timer
     * ({@code force}) and the RNR timer always send.
     */
    private void resend() {
        resend(false);
    }

    private void resend(boolean force) {
        if (count == 0 || failed || closed || (resendPending && !force)) {
            return;
        }
        resendPending = true;
        if (++retries > RETRY_COUNT) {
            failHead(WcStatus.RETRY_EXC_ERR);
            return;
        }
        SoftFabric.retransmitted(count);
        for (int i = 0; i < count; i++) {
            int slot = (head + i) % ring.length;
            SendWr wr = ring[slot];
            boolean data = wr.opcode != WrOpcode.RDMA_READ;
            long total = wr.totalLength();
            Packet p = take(data ? (int) total : 0);
            int len = data ? qp.gather(wr, p.buf, HEADER) : (int) total;
            if (len < 0) {
                recycle(p);
                return; // the memory went away; the timer ends the head after its retries
            }
            frame(p, slot, len);
            queue(p);
        }
        lastProgress = System.nanoTime();
    }

    private boolean before(int a, int b) {
        return a - b < 0;
    }

    private void completeHead(WcStatus status, int len) {
        SendWr wr = ring[head];
        long seq = seqs[head];
        head = (head + 1) % ring.length;
        count--;
        if (status == WcStatus.SUCCESS) {
            retries = 0;
            rnrRetries = 0;
            resendPending = false;
            lastProgress = System.nanoTime();
        }
        qp.completeRemote(wr, seq, status, len);
    }

    /** Ends the head with {@code status}, flushes the rest, and moves the QP to the error state. */
    private void failHead(WcStatus status) {
        failed = true;
        qp.peerGone(); // the QP is in the error state before anyone sees the completion
        if (count > 0) {
            completeHead(status, 0);
        }
        flushInFlight();
    }

    private void flushInFlight() {
        while (count > 0) {
            completeHead(WcStatus.WR_FLUSH_ERR, 0);
        }
    }

    /** Completes the non-READ WRs before {@code psn} (cumulative acknowledgement). False when a READ before it lacks its response. */
    private boolean ackBefore(int psn) {
        while (count > 0 && before(psns[head], psn)) {
            if (ring[head].opcode == WrOpcode.RDMA_READ) {
                return false;
            }
            completeHead(WcStatus.SUCCESS, (int) ring[head].totalLength());
        }
        return true;
    }

    private void onResponse(int op, int psn, byte[] f, int frameBytes) {
        synchronized (reqLock) {
            if (failed || closed) {
                return;
            }
            if (!ackBefore(psn)) {
                resend(); // a READ response was lost
                return;
            }
            if (count == 0 || psns[head] != psn) {
                return; // a duplicate of something already complete
            }
            SendWr wr = ring[head];
            switch (op) {
                case SoftPackets.ACK:
                    if (wr.opcode != WrOpcode.RDMA_READ) {
                        completeHead(WcStatus.SUCCESS, (int) wr.totalLength());
                    }
                    break;
                case SoftPackets.READ_RESP: {
                    if (wr.opcode != WrOpcode.RDMA_READ) {
                        break;
                    }
                    int len = SoftPackets.payload(frameBytes);
                    boolean ok = qp.scatter(wr.sgl, wr.numSge, f, HEADER, len);
                    completeHead(ok ? WcStatus.SUCCESS : WcStatus.LOC_PROT_ERR, len);
                    if (!ok) {
                        failHead(WcStatus.WR_FLUSH_ERR);
                    }
                    break;
                }
                case SoftPackets.NAK_SEQ:
                    resend();
                    break;
                case SoftPackets.NAK_RNR: {
                    int rnr = qp.config.rnrRetry();
                    if (rnr != 7 && ++rnrRetries > rnr) {
                        failHead(WcStatus.RNR_RETRY_EXC_ERR);
                    } else {
                        SoftFabric.schedule(() -> {
                            synchronized (reqLock) {
                                if (count > 0 && psns[head] == psn) {
                                    retries--; // receiver not ready is not a transport retry
                                    resend(true);
                                }
                            }
                        }, SoftQp.RNR_DELAY_NANOS);
                    }
                    break;
                }
                case SoftPackets.NAK_ACCESS:
                    failHead(WcStatus.REM_ACCESS_ERR);
                    break;
                case SoftPackets.NAK_INVALID:
                    failHead(WcStatus.REM_INV_REQ_ERR);
                    break;
                case SoftPackets.NAK_OPERATION:
                    failHead(WcStatus.REM_OP_ERR);
                    break;
                default:
                    failHead(WcStatus.RETRY_EXC_ERR);
                    break;
            }
        }
    }

    private void ackTimer() {
        if (closed || failed) {
            return;
        }
        synchronized (reqLock) {
            if (count > 0 && System.nanoTime() - lastProgress > ACK_TIMEOUT_NANOS) {
                resend(true);
            }
        }
        SoftFabric.schedule(this::ackTimer, ACK_TIMEOUT_NANOS / 4);
    }

    // ------------------------------------------------------------------ responder

    private void onRequest(int op, int psn, byte[] f, int frameBytes) {
        if (psn != expectedPsn) {
            if (before(psn, expectedPsn)) {
                if (op == SoftPackets.READ_REQ) {
                    read(psn, f);
                } else {
                    control(SoftPackets.ACK, expectedPsn - 1); // executed before: acknowledge all that was
                }
            } else if (!nakSent) {
                nakSent = true;
                control(SoftPackets.NAK_SEQ, expectedPsn);
            }
            return;
        }
        if (qp.state != QpState.RTS) {
            control(SoftPackets.NAK_GONE, psn);
            return;
        }
        switch (op) {
            case SoftPackets.SEND:
            case SoftPackets.SEND_INV: {
                int r = qp.deliver(f, HEADER, SoftPackets.payload(frameBytes),
                        op == SoftPackets.SEND_INV ? SoftPackets.key(f) : 0);
                if (r == SoftQp.DELIVER_RNR) {
                    nakSent = true; // later requests are dropped until this one comes again
                    control(SoftPackets.NAK_RNR, psn);
                    return;
                }
                control(r == SoftQp.DELIVER_OK ? SoftPackets.ACK
                        : r == SoftQp.DELIVER_LEN ? SoftPackets.NAK_INVALID : SoftPackets.NAK_OPERATION, psn);
                break;
            }
            case SoftPackets.WRITE: {
                int len = SoftPackets.payload(frameBytes);
                long addr = SoftPackets.addr(f);
                SoftRegion r = qp.pd.lookup(SoftPackets.key(f));
                if (r == null || (r.access & Access.REMOTE_WRITE) == 0 || !r.covers(addr, len)) {
                    control(SoftPackets.NAK_ACCESS, psn);
                } else {
                    String bad = r.writeWire(addr - r.base(), f, HEADER, len);
                    control(bad == null ? SoftPackets.ACK : SoftPackets.NAK_OPERATION, psn);
                }
                break;
            }
            default:
                read(psn, f);
                break;
        }
        expectedPsn++;
        nakSent = false;
    }

    private void read(int psn, byte[] f) {
        int len = SoftPackets.length(f);
        long addr = SoftPackets.addr(f);
        SoftRegion r = qp.pd.lookup(SoftPackets.key(f));
        if (len < 0 || len > SoftPackets.MAX_FRAME - HEADER - SoftPackets.CRC || r == null
                || (r.access & Access.REMOTE_READ) == 0 || !r.covers(addr, len)) {
            control(SoftPackets.NAK_ACCESS, psn);
            return;
        }
        Packet p = take(len);
        if (r.readWire(addr - r.base(), p.buf, HEADER, len) != null) {
            recycle(p);
            control(SoftPackets.NAK_OPERATION, psn);
            return;
        }
        SoftFabric.tap(WrOpcode.RDMA_READ, p.buf, HEADER, len);
        ackPending = false; // the response acknowledges what came before it
        SoftPackets.header(p.buf, SoftPackets.READ_RESP, psn, 0, 0, len, len);
        p.len = HEADER + len + SoftPackets.CRC;
        queue(p);
    }

    // ------------------------------------------------------------------ frames in

    private void readLoop() {
        byte[] f = new byte[64 << 10];
        try {
            FrameInput buffered = new FrameInput(socket.getInputStream());
            DataInputStream in = new DataInputStream(buffered);
            while (!closed) {
                if (!buffered.hasBuffered()) {
                    flushAck();
                }
                in.readFully(f, 0, 4);
                int rest = SoftPackets.getInt(f, 0);
                if (rest < HEADER - 4 + SoftPackets.CRC || rest > SoftPackets.MAX_FRAME) {
                    throw new IOException("framing lost (frame length " + rest + ")");
                }
                int frameBytes = 4 + rest;
                if (f.length < frameBytes) {
                    byte[] g = new byte[Math.max(frameBytes, f.length * 2)];
                    System.arraycopy(f, 0, g, 0, 4);
                    f = g;
                }
                in.readFully(f, 4, rest);
                if (!SoftPackets.intact(readerCrc, f, frameBytes)) {
                    dropped();
                    continue;
                }
                int op = SoftPackets.op(f);
                int psn = SoftPackets.psn(f);
                if (op == SoftPackets.DREQ) {
                    peerLeft(false);
                    return;
                }
                if (SoftPackets.isRequest(op)) {
                    onRequest(op, psn, f, frameBytes);
                } else if (op >= SoftPackets.ACK) {
                    onResponse(op, psn, f, frameBytes);
                }
            }
        } catch (IOException e) {
            if (!closed) {
                peerLeft(true);
            }
        }
    }

    /**
     * A frame failed its CRC and was dropped: its header cannot be trusted, so both roles recover
     * at once, as the next packet would make them: the responder NAKs its expected PSN, the
     * requester sends again from its oldest unacknowledged one.
     */
    private void dropped() {
        SoftFabric.droppedForCrc();
        if (!nakSent) {
            nakSent = true;
            control(SoftPackets.NAK_SEQ, expectedPsn);
        }
        synchronized (reqLock) {
            resend();
        }
    }

    private void peerLeft(boolean abrupt) {
        synchronized (reqLock) {
            if (!closed && !failed) {
                failed = true;
                qp.peerGone();
                if (abrupt && count > 0) {
                    completeHead(WcStatus.RETRY_EXC_ERR, 0);
                }
                flushInFlight();
            }
        }
        qp.peerGone();
        SoftConnection c = qp.connection;
        if (c != null) {
            c.peerDisconnected();
        }
        closeSocket();
    }

    private void fail(String why) {
        if (closed) {
            return;
        }
        synchronized (reqLock) {
            if (failed) {
                return;
            }
            failHead(WcStatus.RETRY_EXC_ERR);
        }
        peerLeft(true);
    }

    /** Destroys the local end: tells the peer (DREQ), flushes what is in flight, closes the socket. */
    void close() {
        synchronized (reqLock) {
            if (closed) {
                return;
            }
            if (!failed) {
                frameOut(SoftPackets.DREQ, 0);
            }
            closed = true;
            flushInFlight();
        }
        if (!offer(STOP, true)) {
            closeSocket();
        }
        SoftFabric.schedule(this::closeSocket, TimeUnit.SECONDS.toNanos(1));
    }

    /** The reader's buffered socket stream, which says whether more bytes are already at hand. */
    private static final class FrameInput extends BufferedInputStream {
        FrameInput(InputStream in) {
            super(in, 64 << 10);
        }

        boolean hasBuffered() {
            return count > pos;
        }
    }

    /** Closes the socket without a DREQ, as the death of this process would (tests). */
    void sever() {
        closed = true;
        closeSocket();
    }

    private void closeSocket() {
        outputDone = true;
        wakeWriter();
        try {
            socket.close();
        } catch (IOException e) {
            // closing
        }
    }

    @Override
    public String toString() {
        return "soft packet path " + name;
    }
}
