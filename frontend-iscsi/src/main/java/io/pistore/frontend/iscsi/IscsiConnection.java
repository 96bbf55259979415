package io.pistore.frontend.iscsi;

import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import io.pistore.spi.net.PolitePoll;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One initiator connection: login, then the full feature phase (RFC 7143): SCSI commands with
 * immediate and unsolicited data and R2T-solicited Data-Out, Data-In with the status in the last
 * PDU, NOP-Out pings, text requests (SendTargets), task management, logout. This connection's
 * thread reads the PDUs and gathers each write's data; commands whose data is in start as the
 * session's {@link IscsiTaskSet} enables them (READ and WRITE on this thread through
 * {@link ScsiLun#start}, the rest on the server's workers) and are answered as they complete, so
 * the initiator may keep {@value IscsiTaskSet#WINDOW} commands in flight. Responses are written
 * whole under one lock, which also orders the StatSN; those this thread gives wait in the output
 * buffer until it next reads the socket, so a burst of commands is answered in one write. Error recovery level 0: a broken
 * PDU (bad length, digest or order) ends the connection with one log line; an unknown opcode is
 * rejected and the connection goes on.
 */
final class IscsiConnection implements Runnable {
    /** Most bytes of write data held for commands not yet answered (the server bounds the sum too). */
    static final long MAX_PENDING_BYTES = 128L << 20;
    /** Longest wait at logout for the commands still running. */
    private static final long LOGOUT_WAIT_SECONDS = 60;

    private final IscsiServer server;
    private final Socket socket;
    private final String peer;
    /** Write commands waiting for Data-Out (the reader thread's alone). */
    private final PendingWrites pending;
    private final AtomicLong pendingBytes = new AtomicLong();
    /** Held while a response is written: one PDU sequence at a time, StatSN in sending order. */
    private final Object sendLock = new Object();
    private PduChannel channel;
    private volatile IscsiLogin.Outcome session;
    private volatile IscsiTaskSet tasks;
    private long statSn;
    private int nextTtt = 1;
    private volatile boolean ending;
    private volatile boolean replaced; // a new session of the same initiator port ended this one
    private volatile boolean nexusEnded; // by a logout, or at the end of the connection
    /** The thread that reads this connection's PDUs. */
    private Thread reader;
    /** Answers written by the reader's thread and not flushed yet (guarded by sendLock). */
    private boolean held;

    IscsiConnection(IscsiServer server, Socket socket, String peer) {
        this.server = server;
        this.socket = socket;
        this.peer = peer;
        this.pending = new PendingWrites(server.dataIn());
    }

    @Override
    public void run() {
        String why = "initiator closed the connection";
        try {
            socket.setTcpNoDelay(true);
            socket.setKeepAlive(true);
            socket.setSoTimeout((int) server.options().loginTimeoutMillis);
            channel = new PduChannel(socket.getInputStream(), socket.getChannel(), socket.getChannel(), 8192,
                    server.dataIn()::give);
            reader = Thread.currentThread();
            // the session is this connection's before the initiator learns it is in (sessionsOn, disconnect)
            session = new IscsiLogin(server, channel, socket.getInetAddress().getHostAddress(), s -> session = s).run();
            if (session == null) {
                why = "login ended";
            } else {
                socket.setSoTimeout(0);
                Negotiation n = session.params();
                channel.digests(n.headerDigest, n.dataDigest);
                channel.maxRecvData(Negotiation.TARGET_MAX_RECV_DATA);
                channel.beforeSocketRead(this::flushHeld);
                channel.placeDataWith((p, len) -> p.opcode() == Pdu.DATA_OUT ? pending.place(p, len)
                        : DataInPool.placesWrite(p, len) ? server.dataIn().take(len) : null);
                tasks = new IscsiTaskSet(session.expCmdSn(), this::start, MAX_PENDING_BYTES);
                // polls when no command waits for anything but the initiator's Data-Out
                channel.pollBeforeBlocking(server.options().spinNanos, () -> tasks.size() == pending.size());
                statSn = session.statSn();
                server.log("iscsi: " + peer + " " + session.initiator() + " logged in to "
                        + (session.discovery() ? "discovery" : session.targetName()) + (n.headerDigest ? ", header digest" : "")
                        + (n.dataDigest ? ", data digest" : ""));
                why = fullFeature();
            }
        } catch (java.net.SocketTimeoutException e) {
            why = "login timed out";
        } catch (IscsiProtocolException e) {
            why = "protocol error: " + e.getMessage();
        } catch (IOException e) {
            why = ending ? "server stopping" : replaced ? "replaced by a new session" : "connection lost: " + e.getMessage();
        } catch (RuntimeException e) {
            why = "internal error: " + e;
        } finally {
            if (tasks != null) {
                tasks.abort(t -> true); // queued commands never run; running ones end unanswered
            }
            server.log("iscsi: " + peer + " ended: " + why); // before the close, which the initiator sees
            pending.clear(); // their tasks left the set above, and their held data with them
            endNexus();
            close();
            server.ended(this);
        }
    }

    /** The volume this connection's session uses, or null (discovery, or before login). */
    String volume() {
        IscsiLogin.Outcome s = session;
        return s == null || s.lun() == null ? null : s.lun().volume();
    }

    /** The session's logical unit as it is now (a resized volume's newest), or null. */
    private ScsiLun lun() {
        ScsiLun l = session.lun();
        return l == null ? null : l.current();
    }

    /** Another I_T nexus aborted this session's LUN 0 tasks whose commands had arrived by {@code receivedBy} (a reset,
     * CLEAR TASK SET, PREEMPT AND ABORT): each is answered TASK ABORTED (TAS 1), one not running at once, a running
     * one when its engine requests end (its result dropped); later Data-Out for them is dropped. Returns them. */
    List<IscsiTask> abortByOtherNexus(long receivedBy) {
        IscsiTaskSet set = tasks;
        if (set == null) {
            return List.of();
        }
        List<IscsiTask> out = set.abort(x -> x.lun == 0 && x.receivedNanos - receivedBy <= 0, true);
        for (IscsiTask t : out) {
            if (t.state != IscsiTask.State.RUNNING) { // it left the set in the abort: answered here
                try {
                    answer(t.itt, t.lun, t.edtl, t.writeNeeded, ScsiResult.status(ScsiResult.TASK_ABORTED), t.r2tSn);
                } catch (IOException e) {
                    close(); // the reader thread sees the closed socket and ends the connection
                } finally {
                    t.done.complete(null);
                }
            }
        }
        return out;
    }

    /** The access identity of this connection's session (EXTENDED COPY between units), or null before login. */
    io.pistore.security.access.ClientIdentity identity() {
        return session == null ? null : session.identity();
    }

    /** The initiator port of this connection's session ({@code IQN,i,0xISID}), or null before login. */
    String initiatorPort() {
        IscsiLogin.Outcome s = session;
        return s == null || nexusEnded ? null : s.initiatorPort();
    }

    /** Ends the I_T nexus once: at a logout before its answer, at a reinstatement before the new session's
     * nexus begins, else at the end of the connection; a second caller waits for the first. */
    synchronized void endNexus() {
        IscsiLogin.Outcome s = session;
        if (s != null && s.lun() != null && !nexusEnded) {
            s.lun().nexusLost(s.initiatorPort());
        }
        nexusEnded = true;
    }

    /** The receive buffer the kernel gave this connection's socket (SO_RCVBUF, as the kernel reports it). */
    int receiveBufferBytes() throws java.net.SocketException {
        return socket.getReceiveBufferSize();
    }

    void shutdown() {
        ending = true;
        close();
    }

    void replaced() {
        replaced = true;
        close();
    }

    /** How this connection waited for commands; null when it does not poll. */
    PolitePoll waits() {
        return channel == null ? null : channel.waits(); // set once, never unset
    }

    private void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    /** The full feature phase until logout or the end of the connection; says why it ended. */
    private String fullFeature() throws IOException {
        while (true) {
            Pdu p = channel.read();
            if (p == null) {
                return "initiator closed the connection";
            }
            try {
                if (handle(p)) {
                    return "logged out";
                }
            } finally {
                if (p.opcode() == Pdu.SCSI_COMMAND) { // a Data-Out's is a view of its task's buffer
                    server.dataIn().give(p.placed); // a write's buffer that no task took (else null)
                }
            }
        }
    }

    /** Handles one PDU of the full feature phase; true once the session logged out. */
    private boolean handle(Pdu p) throws IOException {
        switch (p.opcode()) {
            case Pdu.NOP_OUT:
                if (sequenced(p)) {
                    nopOut(p);
                }
                return false;
            case Pdu.SCSI_COMMAND:
            case Pdu.TASK_MGMT:
                if (session.discovery()) {
                    reject(p, 0x04);
                } else if (!sequenced(p)) {
                    return false;
                } else if (p.opcode() == Pdu.SCSI_COMMAND) {
                    command(p);
                } else {
                    taskManagement(p);
                }
                return false;
            case Pdu.DATA_OUT:
                dataOut(p);
                return false;
            case Pdu.TEXT:
                if (sequenced(p)) {
                    text(p);
                }
                return false;
            case Pdu.LOGOUT:
                if (sequenced(p)) {
                    logout(p);
                    return true;
                }
                return false;
            case Pdu.SNACK:
                reject(p, 0x04); // error recovery level 0 has no SNACK
                return false;
            default:
                reject(p, 0x05);
                return false;
        }
    }

    /** Whether a PDU with a CmdSN is the next one (or immediate), advancing ExpCmdSN if not immediate;
     * one out of order or outside the window is dropped, as RFC 7143 says. */
    private boolean sequenced(Pdu p) {
        if (tasks.sequenced(p.u32(24), p.immediate(), p.opcode() == Pdu.SCSI_COMMAND)) {
            return true;
        }
        server.log("iscsi: " + peer + " dropped a PDU with CmdSN " + p.u32(24) + ", expected " + tasks.expCmdSn()
                + " in a window of " + IscsiTaskSet.WINDOW);
        return false;
    }

    private Pdu response(int opcode, int flags, int itt) {
        Pdu r = Pdu.target(opcode, flags);
        r.set32(16, itt);
        tasks.window(r);
        return r;
    }

    /** Sends the answers the reader's thread held back; run before the reader waits for input, so an
     * answer waits at most until the PDUs read with its command have been handled. */
    private void flushHeld() throws IOException {
        synchronized (sendLock) {
            if (held) {
                held = false;
                channel.flush();
            }
        }
    }

    /** Sends a PDU that carries a StatSN, and advances it. */
    private void sendStatus(Pdu r) throws IOException {
        synchronized (sendLock) {
            r.set32(24, statSn);
            statSn = (statSn + 1) & 0xFFFFFFFFL;
            channel.write(r, true);
        }
    }

    private void nopOut(Pdu p) throws IOException {
        if (p.itt() == Pdu.RESERVED_TAG) {
            return; // an answer to a NOP-In of ours, or a bare CmdSN update
        }
        Pdu r = response(Pdu.NOP_IN, 0x80, p.itt());
        r.set64(8, p.lun());
        r.set32(20, Pdu.RESERVED_TAG);
        int n = Math.min(p.data.length, session.params().initiatorMaxRecvData);
        sendStatus(r.data(java.util.Arrays.copyOf(p.data, n)));
    }

    private void reject(Pdu p, int reason) throws IOException {
        Pdu r = response(Pdu.REJECT, 0x80, Pdu.RESERVED_TAG);
        r.set8(2, reason);
        server.log("iscsi: " + peer + " rejected PDU opcode 0x" + Integer.toHexString(p.opcode()) + " (reason 0x"
                + Integer.toHexString(reason) + ")");
        sendStatus(r.data(p.bhs.clone()));
    }

    private void command(Pdu p) throws IOException {
        boolean write = (p.flags() & 0x20) != 0;
        long edtl = p.u32(20);
        byte[] cdb = p.cdb();
        ScsiLun lun = p.lun() == 0 ? lun() : null;
        if (!write) {
            if (p.dataLength() > 0) {
                throw new IscsiProtocolException("immediate data with a command that does not write");
            }
            IscsiTask t = new IscsiTask(p, edtl, -1, 0);
            tasks.add(t);
            tasks.ready(t);
            return;
        }
        if (p.dataLength() > edtl || p.dataLength() > 0 && !session.params().immediateData) {
            throw new IscsiProtocolException("immediate data of " + p.dataLength() + " bytes for a transfer of " + edtl);
        }
        long needed = lun == null ? 0 : lun.dataOutBytes(cdb);
        if (lun == null || edtl > needed + Negotiation.TARGET_MAX_BURST || edtl > Integer.MAX_VALUE - 8
                || edtl > server.options().maxTransferBytes * 4L + 65_536) {
            // answered before any data is solicited; unsolicited Data-Out that follows is dropped
            tasks.answered(p.immediate());
            answer(p.itt(), p.lun(), edtl, needed, lun == null ? execute(null, cdb, new byte[0]) : ScsiResult.invalidField(), 0);
            return;
        }
        if (pendingBytes.get() + edtl > MAX_PENDING_BYTES || !server.reservePending(edtl)) {
            tasks.answered(p.immediate());
            answer(p.itt(), p.lun(), edtl, needed, ScsiResult.status(ScsiResult.TASK_SET_FULL), 0);
            return;
        }
        // the write data: in the pooled buffer it was read into (all of it immediate), in a pooled
        // buffer the rest will be read into, in the PDU's own array (all of it immediate), or an array
        int immediate = p.dataLength();
        ByteBuffer placed = p.placed;
        p.placed = null; // the task's now, given back once it is answered or aborted (it no longer runs then)
        boolean pooled = placed == null && immediate < edtl && DataInPool.pooledWrite(cdb[0], edtl);
        IscsiTask t = placed != null ? new IscsiTask(p, edtl, needed, placed, 1)
                : pooled ? new IscsiTask(p, edtl, needed, server.dataIn().take((int) edtl), 2)
                : p.data.length == edtl ? new IscsiTask(p, edtl, needed, p.data) : new IscsiTask(p, edtl, needed, (int) edtl);
        pendingBytes.addAndGet(edtl); // counted until the task is answered or aborted
        t.done.thenRun(() -> {
            pendingBytes.addAndGet(-edtl);
            server.releasePending(edtl);
            t.releaseBuffer(server.dataIn());
        });
        t.append(placed == null && immediate < edtl ? p.data : null, immediate);
        Negotiation n = session.params();
        t.burstEnd = n.initialR2T ? t.received : (int) Math.min(edtl, Math.max(n.firstBurst, t.received));
        tasks.add(t);
        if (t.received == t.dataLength()) {
            tasks.ready(t);
            return;
        }
        pending.removeAborted(); // aborted by another session: no Data-Out may follow
        pending.put(t);
        if (t.received == t.burstEnd) {
            solicit(t);
        }
    }

    /** Sends the R2T for the next burst of {@code t}'s data. */
    private void solicit(IscsiTask t) throws IOException {
        int len = Math.min(session.params().maxBurst, t.dataLength() - t.received);
        t.ttt = nextTtt++ & 0x7FFFFFFF;
        t.burstEnd = t.received + len;
        t.dataSn = 0;
        Pdu r = response(Pdu.R2T, 0x80, t.itt);
        r.set64(8, t.lun);
        r.set32(20, t.ttt);
        r.set32(36, t.r2tSn++);
        r.set32(40, t.received);
        r.set32(44, len);
        synchronized (sendLock) {
            r.set32(24, statSn);
            channel.write(r, true);
        }
    }

    private void dataOut(Pdu p) throws IOException {
        IscsiTask t = pending.get(p.itt());
        if (t == null) {
            return; // data of a command answered already (refused before its data was in): dropped
        }
        if (t.aborted) { // by a reset from another session: its data is dropped, no more R2Ts
            pending.remove(t);
            return;
        }
        int len = p.dataLength();
        if (!t.expects(p, len)) {
            throw new IscsiProtocolException("Data-Out out of order: offset " + (p.i32(40) & 0xFFFFFFFFL) + " length "
                    + len + " tag 0x" + Integer.toHexString(p.i32(20)) + ", expected offset " + t.received
                    + " up to " + t.burstEnd + " tag 0x" + Integer.toHexString(t.ttt) + ", DataSN " + p.i32(36)
                    + " (expected " + t.dataSn + ")");
        }
        t.dataSn++;
        t.append(p.placed == null ? p.data : null, len); // placed: read into the task's buffer (PendingWrites.place)
        if (t.received < t.burstEnd) {
            return;
        }
        if (t.received < t.dataLength()) {
            solicit(t);
            return;
        }
        pending.remove(t);
        tasks.ready(t);
    }

    /**
     * Starts an enabled task: a READ or WRITE that the unit starts without waiting
     * ({@link ScsiLun#start}) on this thread, answered from its engine completion; any other
     * command on a worker, which may wait.
     */
    private void start(IscsiTask t) {
        if (t.aborted) { // aborted before it started: never runs, never answered
            finish(t, ScsiResult.good());
            return;
        }
        ScsiLun lun = t.lun == 0 ? lun() : null;
        if (lun != null && (!session.readOnly() || !ReadOnlySession.writes(t.cdb))) {
            boolean started;
            AtomicBoolean ran = new AtomicBoolean();
            try {
                started = lun.start(session.initiatorPort(), t.cdb, t.data, t.buffer, t.receivedNanos, r -> {
                    ran.set(true);
                    if (r == null) { // the engine's queue was full: the worker waits for room
                        server.workers().execute(() -> runTask(t));
                    } else {
                        finish(t, r);
                    }
                });
            } catch (RuntimeException e) {
                if (ran.get()) {
                    throw e; // the task was finished; the failure is the answer's
                }
                finish(t, failed(t, e));
                return;
            }
            if (started) {
                return;
            }
        }
        server.workers().execute(() -> runTask(t));
    }

    /** Runs one enabled task on a worker and answers it, unless it was aborted meanwhile. */
    private void runTask(IscsiTask t) {
        ScsiResult r;
        try {
            r = execute(t.lun == 0 ? lun() : null, t.cdb, t.dataBytes());
        } catch (RuntimeException e) {
            r = failed(t, e);
        }
        finish(t, r);
    }

    private ScsiResult failed(IscsiTask t, RuntimeException e) {
        server.log("iscsi: " + peer + " command 0x" + Integer.toHexString(t.cdb[0] & 0xff) + " failed: " + e);
        return ScsiResult.check(ScsiResult.HARDWARE_ERROR, 0x44, 0x00);
    }

    /** A task has run: it leaves the task set and is answered unless aborted (by another I_T nexus:
     * answered TASK ABORTED instead of its result); the tasks it held back start. */
    private void finish(IscsiTask t, ScsiResult r) {
        try {
            if (tasks.completed(t)) {
                answer(t.itt, t.lun, t.edtl, t.writeNeeded, t.aborted ? ScsiResult.status(ScsiResult.TASK_ABORTED) : r,
                        t.r2tSn);
            }
        } catch (IOException e) {
            close(); // the reader thread sees the closed socket and ends the connection
        } finally {
            if (r.dataBuffer != null) {
                synchronized (sendLock) { // written, held by the channel until its next flush, or never to be
                    channel.giveBackOnceWritten(r.dataBuffer);
                }
            }
            t.done.complete(null);
        }
        tasks.startEnabled();
    }

    private ScsiResult execute(ScsiLun lun, byte[] cdb, byte[] dataOut) {
        if (lun != null) {
            return session.readOnly() ? ReadOnlySession.execute(lun, session.initiatorPort(), cdb, dataOut)
                    : lun.execute(session.initiatorPort(), cdb, dataOut);
        }
        int op = cdb[0] & 0xff;
        if (op == 0x12 && (cdb[1] & 1) == 0) { // INQUIRY of a LUN that is not there: peripheral qualifier 3
            byte[] b = lun().pages().standardInquiry();
            b[0] = 0x7F;
            return ScsiResult.cut(b, Cdb.u16(cdb, 3));
        }
        if (op == 0xA0 || op == 0x03) {
            return lun().execute(session.initiatorPort(), cdb, dataOut);
        }
        return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x25, 0x00);
    }

    /**
     * Sends a command's data and status: Data-In PDUs with the status in the last, or a SCSI
     * Response. {@code writeNeeded}: the Data-Out bytes a write needed (residuals against the
     * expected length), -1 for a command that reads.
     */
    private void answer(int itt, long lun, long edtl, long writeNeeded, ScsiResult r, int expDataSn) throws IOException {
        synchronized (sendLock) {
            send(itt, lun, edtl, writeNeeded, r, expDataSn);
        }
    }

    private void send(int itt, long lun, long edtl, long writeNeeded, ScsiResult r, int expDataSn) throws IOException {
        Negotiation n = session.params();
        byte[] d = r.dataIn;
        int len = (int) Math.min(r.dataLength(), edtl);
        long produced = writeNeeded >= 0 ? writeNeeded : r.dataLength();
        int residualFlags = 0;
        long residual = 0;
        if (produced > edtl) {
            residualFlags = 0x04;
            residual = produced - edtl;
        } else if (produced < edtl) {
            residualFlags = 0x02;
            residual = edtl - produced;
        }
        int dataSn = 0;
        if (len > 0 && r.status == ScsiResult.GOOD) {
            int off = 0;
            int burstStart = 0;
            while (off < len) {
                int chunk = Math.min(n.initiatorMaxRecvData, Math.min(len - off, burstStart + n.maxBurst - off));
                boolean last = off + chunk == len;
                boolean burstEnd = last || off + chunk == burstStart + n.maxBurst;
                Pdu di = response(Pdu.DATA_IN, (burstEnd ? 0x80 : 0) | (last ? 0x01 | residualFlags : 0), itt);
                di.set64(8, lun);
                di.set32(20, Pdu.RESERVED_TAG);
                di.set32(36, dataSn++);
                di.set32(40, off);
                if (last) {
                    di.set8(3, r.status);
                    di.set32(44, residual);
                    di.set32(24, statSn);
                    statSn = (statSn + 1) & 0xFFFFFFFFL;
                }
                if (r.dataBuffer != null) {
                    ByteBuffer part = r.dataBuffer.duplicate();
                    part.position(part.position() + off).limit(part.position() + chunk);
                    channel.write(di, part, last && flushNow());
                } else {
                    channel.write(di, d, off, chunk, last && flushNow());
                }
                off += chunk;
                if (burstEnd) {
                    burstStart = off;
                }
            }
            return;
        }
        Pdu rsp = response(Pdu.SCSI_RESPONSE, 0x80 | residualFlags, itt);
        rsp.set8(2, 0).set8(3, r.status);
        rsp.set32(36, expDataSn);
        rsp.set32(44, residual);
        if (r.sense.length > 0) {
            byte[] s = new byte[2 + r.sense.length];
            s[0] = (byte) (r.sense.length >>> 8);
            s[1] = (byte) r.sense.length;
            System.arraycopy(r.sense, 0, s, 2, r.sense.length);
            rsp.data(s);
        }
        rsp.set32(24, statSn);
        statSn = (statSn + 1) & 0xFFFFFFFFL;
        channel.write(rsp, flushNow());
    }

    /**
     * Whether an answer goes out now: on any thread but the reader's; the reader's answers wait in
     * the output buffer until it is about to read the socket ({@link #flushHeld}), so the answers of
     * the commands that came in one read leave in one write. Under sendLock.
     */
    private boolean flushNow() {
        if (Thread.currentThread() != reader) {
            return true;
        }
        held = true;
        return false;
    }

    private void text(Pdu p) throws IOException {
        if ((p.flags() & 0x40) != 0) {
            throw new IscsiProtocolException("continued text requests are not supported");
        }
        byte[] all = IscsiTextRequest.answer(p.data, session, server, socket);
        Pdu r = response(Pdu.TEXT_RESPONSE, 0x80, p.itt());
        r.set32(20, Pdu.RESERVED_TAG);
        sendStatus(r.data(all));
    }

    /**
     * Task management (SAM-5, RFC 7143 11.5). This session's aborted tasks are never answered; other
     * sessions' tasks that CLEAR TASK SET or a reset aborts are answered TASK ABORTED (TAS 1); the
     * response goes once every one of them has left the task set (a running one when its engine
     * requests have ended), so the initiator may reuse their tags when it has it.
     */
    private void taskManagement(Pdu p) throws IOException {
        int function = p.flags() & 0x7f;
        long lun = p.lun();
        List<IscsiTask> aborted = List.of();
        int response;
        switch (function) {
            case 1: { // ABORT TASK
                int itt = p.i32(20);
                aborted = tasks.abort(x -> x.itt == itt && x.lun == lun); // found and aborted under one lock
                if (!aborted.isEmpty()) {
                    response = 0;
                } else {
                    // a command not received yet (RefCmdSN inside the window, before this request)
                    // counts as received and aborted; one answered already does not exist any more
                    response = tasks.inWindowBefore(p.u32(32), p.u32(24)) ? 0 : 1;
                }
                break;
            }
            case 2: // ABORT TASK SET: this I_T nexus's tasks
            case 4: // CLEAR TASK SET: every I_T nexus's, the unit having one task set (TST 000b)
                aborted = new java.util.ArrayList<>(tasks.abort(x -> x.lun == lun));
                if (function == 4 && lun == 0) {
                    aborted.addAll(server.abortTasks(lun(), this, n -> true));
                }
                response = lun == 0 ? 0 : 2;
                break;
            case 5: // LOGICAL UNIT RESET
            case 6: // TARGET WARM RESET: the target's only logical unit is LUN 0
                if (function == 5 && lun != 0) {
                    aborted = tasks.abort(x -> x.lun == lun);
                    response = 2;
                } else {
                    aborted = new java.util.ArrayList<>(tasks.abort(x -> function == 6 || x.lun == 0));
                    aborted.addAll(server.resetUnit(lun(), this));
                    response = 0;
                }
                break;
            case 8: // TASK REASSIGN: needs error recovery level 2
                response = 3;
                break;
            default:
                response = 5;
        }
        for (IscsiTask t : aborted) {
            pending.remove(t); // this session's own; another's leave at their next Data-Out
        }
        Pdu r = response(Pdu.TASK_MGMT_RESPONSE, 0x80, p.itt());
        r.set8(2, response);
        if (aborted.isEmpty()) {
            sendStatus(r);
            return;
        }
        CompletableFuture.allOf(aborted.stream().map(t -> t.done).toArray(CompletableFuture[]::new)).thenRun(() -> {
            try {
                tasks.window(r); // the window as it is once the aborted tasks are gone
                sendStatus(r);
            } catch (IOException e) {
                close();
            }
        });
    }

    /** Logout: the commands not running are aborted, the running ones are waited for, then the answer. */
    private void logout(Pdu p) throws IOException {
        int reason = p.flags() & 0x7f;
        flushHeld();
        List<IscsiTask> left = tasks.abort(t -> true);
        pending.clear();
        try {
            CompletableFuture.allOf(left.stream().map(t -> t.done).toArray(CompletableFuture[]::new))
                    .get(LOGOUT_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IscsiProtocolException("commands still running at logout after " + LOGOUT_WAIT_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted at logout");
        }
        Pdu r = response(Pdu.LOGOUT_RESPONSE, 0x80, p.itt());
        r.set8(2, reason == 2 ? 2 : 0); // connection recovery needs error recovery level 2
        endNexus();
        sendStatus(r);
    }
}

