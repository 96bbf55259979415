package io.pistore.transport.rdma.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.PathStateBoard;
import io.pistore.spi.PiDuty;
import io.pistore.spi.Protection;
import io.pistore.spi.RequestCheck;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TransportCapabilities;
import io.pistore.spi.VolumeInfo;
import io.pistore.spi.wire.PathReportCodec;
import io.pistore.transport.rdma.verbs.SignatureMapping;
import io.pistore.transport.rdma.verbs.Access;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.IntegrityMrPool;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QueuePair;
import io.pistore.transport.rdma.verbs.RecvWr;
import io.pistore.transport.rdma.verbs.SendWr;
import io.pistore.transport.rdma.verbs.SigAttrs;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WcOpcode;
import io.pistore.transport.rdma.verbs.WcStatus;
import io.pistore.transport.rdma.verbs.WorkCompletion;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The target side of one host queue (nvmet-rdma's per-queue flow). A WRITE's data is pulled with
 * RDMA READ, a READ's pushed with RDMA WRITE before the response SEND. Offloaded formats move
 * through the target's own integrity MR, whose memory domain is a separate metadata buffer: its
 * status is checked after the transfer and before the data is stored (a write) or the response is
 * sent (a read), and a signature error becomes the request's guard / app / ref status.
 *
 * <p>As nvmet-rdma: a command that still asks for PRACT (its host did not insert or strip) has no
 * wire domain, so its transfer is sized from the wire (data only) and the PI is generated into, or
 * checked and stripped from, the target's memory domain; PRACT is cleared before the backend, which
 * sees a pass request with the PI already checked. A command that finds the MR pool empty waits
 * until an MR returns ({@code rdma_rw_ctx_signature_init}'s {@code -EAGAIN}, after which nvmet-rdma
 * queues the command), instead of failing.
 */
final class RdmaTargetQueue {
    private static final long T_RECV = 1L << 32;
    private static final long T_DATA = 2L << 32;
    private static final long T_RSP = 3L << 32;
    private static final long T_OTHER = 4L << 32;

    private final TargetHandler handler;
    private final RcConnection conn;
    private final QueuePair qp;
    private final CompletionQueue cq;
    private final ProtectionDomain pd;
    private final IntegrityMrPool pool;
    private final int depth;
    private final MemoryRegion cmdMr;
    private final MemoryRegion rspMr;
    private final ByteBuffer cmdBuf;
    private final ByteBuffer rspBuf;
    private final RecvWr[] recvs;
    private final TargetCommand[] cmds;
    private final Thread thread;
    /** Commands waiting for an integrity MR, oldest first; guarded by itself (with the pool's take and put). */
    private final ArrayDeque<TargetCommand> waitingForMr;
    private volatile boolean stopped;
    private Map<String, VolumeInfo> volumes = new HashMap<>();
    /** The target's path states, or null when it does not report them. */
    private final PathStateBoard pathStates;

    RdmaTargetQueue(TargetHandler handler, RcConnection conn, CompletionQueue cq, ProtectionDomain pd,
                     IntegrityMrPool pool, int depth, PathStateBoard pathStates) throws VerbsException {
        this.handler = handler;
        this.pathStates = pathStates;
        this.conn = conn;
        this.qp = conn.qp();
        this.cq = cq;
        this.pd = pd;
        this.pool = pool;
        this.depth = depth;
        this.cmdMr = pd.register(ByteBuffer.allocateDirect((depth + 1) * Capsule.SIZE), Access.LOCAL_WRITE);
        this.rspMr = pd.register(ByteBuffer.allocateDirect((depth + 1) * Capsule.SIZE), Access.LOCAL_WRITE);
        this.cmdBuf = cmdMr.buffer();
        this.rspBuf = rspMr.buffer();
        this.cmds = new TargetCommand[depth + 1];
        this.waitingForMr = new ArrayDeque<>(depth + 1);
        this.recvs = new RecvWr[depth + 1];
        for (int i = 0; i <= depth; i++) {
            cmds[i] = new TargetCommand(i);
            recvs[i] = new RecvWr(1);
            recvs[i].wrId = T_RECV | i;
            recvs[i].addSge(cmdMr.addr(i * Capsule.SIZE), Capsule.SIZE, cmdMr.lkey());
            qp.postRecv(recvs[i]);
        }
        refreshVolumes();
        this.thread = new Thread(this::run, "pistore-rdma-target-" + conn.peer());
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    String peer() {
        return conn.peer();
    }

    private void refreshVolumes() {
        Map<String, VolumeInfo> m = new HashMap<>();
        for (VolumeInfo v : handler.volumes()) {
            m.put(v.name(), v);
        }
        volumes = m;
    }

    /**
     * When the last poll that found completions returned: every command received so far had arrived
     * by then, so the reads built from them carry it ({@link BlockRequest#receivedNanos}).
     */
    private long polledNanos;

    private void run() {
        WorkCompletion[] wcs = new WorkCompletion[32];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        try {
            while (!stopped) {
                int n = cq.poll(wcs);
                if (n == 0) {
                    cq.await(TimeUnit.MILLISECONDS.toNanos(100));
                    continue;
                }
                polledNanos = System.nanoTime();
                for (int i = 0; i < n && !stopped; i++) {
                    handle(wcs[i]);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            stop("target connection failed: " + e);
        }
    }

    private void handle(WorkCompletion wc) {
        if (wc.status != WcStatus.SUCCESS) {
            stop(wc.status == WcStatus.WR_FLUSH_ERR ? "closed by peer" : wc.opcode + " failed: " + wc.status);
            return;
        }
        long type = wc.wrId & 0xFFFFFFFF00000000L;
        int id = (int) wc.wrId;
        if (wc.opcode == WcOpcode.RECV) {
            int cid = cmdBuf.getShort(id * Capsule.SIZE + 2) & 0xFFFF;
            if (cid > depth) {
                repost(id);
                return;
            }
            TargetCommand c = cmds[cid];
            c.cmd.decode(cmdBuf, id * Capsule.SIZE);
            repost(id);
            command(c);
        } else if (type == T_DATA) {
            dataMoved(cmds[id]);
        }
    }

    private void repost(int slot) {
        try {
            qp.postRecv(recvs[slot]);
        } catch (VerbsException e) {
            stop("cannot post a receive: " + e.getMessage());
        }
    }

    // ------------------------------------------------------------------ commands

    private void command(TargetCommand t) {
        Capsule.Command c = t.cmd;
        t.offload = c.has(Capsule.F_OFFLOAD);
        t.mr = null;
        t.dataList = null;
        t.metaList = null;
        try {
            switch (c.op) {
                case Capsule.OP_DISCOVER:
                    discover(t);
                    return;
                case Capsule.OP_PATH_STATES:
                    if (pathStates != null) {
                        pathStates(t);
                        return;
                    }
                    break; // as a target without path states: an unknown opcode
                case Capsule.OP_FLUSH:
                    execute(t, BlockRequest.flush(c.volume), PiDuty.NONE);
                    return;
                case Capsule.OP_WRITE_ZEROES:
                    execute(t, BlockRequest.writeZeroes(c.volume, c.lba, (int) c.blocks, c.has(Capsule.F_FUA)), PiDuty.NONE);
                    return;
                case Capsule.OP_DEALLOCATE:
                    execute(t, BlockRequest.deallocate(c.volume, c.lba, (int) c.blocks), PiDuty.NONE);
                    return;
                case Capsule.OP_WRITE:
                case Capsule.OP_READ:
                    dataCommand(t);
                    return;
                default:
                    break;
            }
            respond(t, Completion.failure(Status.INVALID_FIELD, "unknown opcode " + c.op), 0);
        } catch (VerbsException e) {
            stop("rdma: " + e.getMessage());
        }
    }

    private void dataCommand(TargetCommand t) throws VerbsException {
        Capsule.Command c = t.cmd;
        boolean write = c.op == Capsule.OP_WRITE;
        VolumeInfo v = volumes.get(c.volume);
        if (v == null) {
            refreshVolumes();
            v = volumes.get(c.volume);
        }
        if (v == null) {
            respond(t, Completion.failure(Status.NO_SUCH_VOLUME, "no volume named '" + c.volume + "'"), 0);
            return;
        }
        // The rule every hop shares, before anything is sized from the command: LBA range, block
        // count, the transfer limit, the width of the ref tag.
        Completion bad = RequestCheck.validateHeader(write ? Operation.WRITE : Operation.READ, c.lba, c.blocks,
                c.protection(), v, TransportCapabilities.MAX_TRANSFER_BYTES);
        if (bad == null && !t.offload && c.length > c.blocks * v.format().blockSize()) {
            bad = Completion.failure(Status.INVALID_FIELD, "a transfer of " + c.length + " bytes is more than "
                    + c.blocks + " blocks of " + v.format().sizes() + " hold");
        }
        if (bad != null) {
            respond(t, bad, 0);
            return;
        }
        if (t.offload) {
            BlockFormat f = v.format();
            Protection p = c.protection();
            // the transfer is sized from the wire domain: data only when PRACT leaves the wire without PI
            long expected = c.blocks * (f.dataSize() + (p.pract() ? 0L : SigAttrs.DIF_SIZE));
            if (pool == null || SignatureMapping.offloadRefusal(f, caps) != null
                    || c.blocks < 1 || c.length != expected) {
                respond(t, Completion.failure(Status.INVALID_FIELD, "offloaded " + (write ? "write" : "read")
                        + " of " + c.blocks + " blocks of " + f.sizes() + " needs " + expected + " wire bytes, got "
                        + c.length), 0);
                return;
            }
            t.format = f;
            // per-id buffers, reused: a fresh zeroed array per request would be the offload path's
            // largest cost on the soft NIC (docs/RDMA.md#why-the-target-keeps-per-command-buffers)
            int dlen = (int) (c.blocks * f.dataSize());
            int mlen = (int) (c.blocks * f.metadataSize());
            if (t.offloadData == null || t.offloadData.capacity() < dlen) {
                t.offloadData = ByteBuffer.allocate(Math.max(dlen, 4096));
            }
            if (t.offloadMeta == null || t.offloadMeta.capacity() < mlen) {
                t.offloadMeta = ByteBuffer.allocate(Math.max(mlen, 64));
            }
            t.dataList = ScatterList.of(t.offloadData.duplicate().limit(dlen).position(0));
            t.metaList = ScatterList.of(t.offloadMeta.duplicate().limit(mlen).position(0));
            // The memory domain holds the PI: with PRACT generated by the NIC on the way in, and on the
            // way out checked (and stripped) by it; the duty says so instead of clearing PRACT (as
            // nvmet_rdma_set_sig_attrs does before its backend), so the engine neither generates nor checks it.
            PiDuty wire = p.pract() ? PiDuty.of(p).generatedBy(PiDuty.Hop.WIRE) : PiDuty.of(p);
            t.duty = wire.checkedBy(PiDuty.Hop.WIRE);
            if (write) {
                t.request = BlockRequest.write(c.volume, c.lba, (int) c.blocks, t.dataList, t.metaList, p,
                        c.has(Capsule.F_FUA));
                moveOffloaded(t, true);
            } else {
                t.request = BlockRequest.read(c.volume, c.lba, (int) c.blocks, t.dataList, t.metaList, p, polledNanos);
                handler.execute(t.request, t.duty, done -> afterRead(t, done));
            }
            return;
        }
        if (c.has(Capsule.F_METADATA_ONLY)) {
            metadataOnly(t, v);
            return;
        }
        // Software path: data (and metadata) in a registered staging buffer.
        long len = c.length;
        ScatterList dl = ScatterList.of();
        ScatterList ml = null;
        if (len > 0) {
            if (t.staging == null || t.staging.length() < len) {
                if (t.staging != null) {
                    t.staging.close();
                }
                t.staging = pd.register(ByteBuffer.allocateDirect((int) Math.max(len, 4096)),
                        Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
            }
            ByteBuffer b = t.staging.buffer();
            long dataLen = c.has(Capsule.F_META) ? c.metaOffset : len;
            dl = ScatterList.of(b.duplicate().limit((int) dataLen).position(0));
            if (c.has(Capsule.F_META)) {
                ml = ScatterList.of(b.duplicate().limit((int) len).position((int) dataLen));
            }
        }
        Protection p = c.protection();
        t.dataList = dl;
        t.metaList = ml;
        if (write) {
            t.request = BlockRequest.write(c.volume, c.lba, (int) c.blocks, dl, ml, p, c.has(Capsule.F_FUA));
            if (len == 0) {
                execute(t, t.request, PiDuty.of(p));
            } else {
                SendWr rd = t.data.reset();
                rd.wrId = T_DATA | t.cid;
                rd.opcode = WrOpcode.RDMA_READ;
                rd.signaled = true;
                rd.addSge(t.staging.iova(), (int) len, t.staging.lkey());
                rd.remoteAddr = c.addr;
                rd.rkey = c.key;
                qp.postSend(rd);
            }
        } else {
            t.request = BlockRequest.read(c.volume, c.lba, (int) c.blocks, dl, ml, p, polledNanos);
            handler.execute(t.request, PiDuty.of(p), done -> afterRead(t, done));
        }
    }

    /**
     * A READ of metadata alone (block status): the stored metadata of the blocks RDMA-written into the
     * host's buffer, no data read, nothing checked; refused (INVALID_FIELD) where the engine does not
     * serve such reads, the volume has no metadata, or the buffer is not its size.
     */
    private void metadataOnly(TargetCommand t, VolumeInfo v) throws VerbsException {
        Capsule.Command c = t.cmd;
        long len = c.blocks * v.format().metadataSize();
        String refused = c.op != Capsule.OP_READ ? "the metadata-only flag on a write"
                : !handler.readsMetadataOnly() ? "metadata-only reads are not served by this target"
                : len == 0 ? "volume " + v.name() + " has no metadata"
                : c.length != len ? "a metadata-only read of " + c.blocks + " blocks needs " + len + " bytes, got "
                        + c.length : null;
        if (refused != null) {
            respond(t, Completion.failure(Status.INVALID_FIELD, refused), 0);
            return;
        }
        if (t.staging == null || t.staging.length() < len) {
            if (t.staging != null) {
                t.staging.close();
            }
            t.staging = pd.register(ByteBuffer.allocateDirect((int) Math.max(len, 4096)),
                    Access.LOCAL_WRITE | Access.REMOTE_READ | Access.REMOTE_WRITE);
        }
        t.dataList = ScatterList.of();
        t.metaList = ScatterList.of(t.staging.buffer().duplicate().limit((int) len).position(0));
        t.request = BlockRequest.readMetadata(c.volume, c.lba, (int) c.blocks, t.metaList);
        handler.execute(t.request, PiDuty.NONE, done -> afterRead(t, done));
    }

    private io.pistore.transport.rdma.verbs.DeviceCaps caps;

    void caps(io.pistore.transport.rdma.verbs.DeviceCaps c) {
        this.caps = c;
    }

    /**
     * Takes an integrity MR, maps the target's buffers, sets attributes, and posts REG + RDMA
     * READ/WRITE; with none free, the command waits for one ({@link #returnMr}).
     */
    private void moveOffloaded(TargetCommand t, boolean write) throws VerbsException {
        IntegrityMr mr;
        synchronized (waitingForMr) {
            mr = pool.take();
            if (mr == null) {
                t.waitingWrite = write;
                waitingForMr.add(t);
                return;
            }
        }
        t.mr = mr;
        Capsule.Command c = t.cmd;
        mr.map(t.dataList, t.metaList, RdmaHostQueue.PAGE_SIZE);
        // the command's own protection: PRACT (kept here, cleared for the backend) means no wire domain
        SignatureMapping.setTargetAttrs(mr.sigAttrs(), t.format, write, c.protection());
        long wire = SignatureMapping.wireLength(mr.sigAttrs(), t.format, c.blocks);
        SendWr first = null;
        if (mr.needsInvalidate()) {
            SendWr inv = t.inv.reset(); // rdma_rw_inv_key: an earlier key of this MR may still be valid
            inv.wrId = T_OTHER | t.cid;
            inv.opcode = WrOpcode.LOCAL_INV;
            inv.invalidateKey = mr.rkey();
            first = inv;
        }
        SendWr reg = t.reg.reset();
        reg.wrId = T_OTHER | t.cid;
        reg.opcode = WrOpcode.REG_MR_INTEGRITY;
        reg.mr = mr;
        reg.key = mr.nextKey();
        reg.access = Access.LOCAL_WRITE;
        SendWr d = t.data.reset();
        d.wrId = T_DATA | t.cid;
        d.opcode = write ? WrOpcode.RDMA_READ : WrOpcode.RDMA_WRITE;
        d.signaled = true;
        d.fence = true; // the transfer goes through the key the REG makes valid
        d.addSge(mr.iova(), (int) wire, reg.key);
        d.remoteAddr = c.addr;
        d.rkey = c.key;
        reg.next = d;
        if (first != null) {
            first.next = reg;
        } else {
            first = reg;
        }
        qp.postSend(first);
    }

    /** Gives an MR back and starts the oldest command waiting for one. */
    private void returnMr(IntegrityMr mr) throws VerbsException {
        TargetCommand next;
        synchronized (waitingForMr) {
            pool.put(mr);
            next = waitingForMr.poll();
        }
        if (next != null) {
            moveOffloaded(next, next.waitingWrite);
        }
    }

    /** The RDMA READ or WRITE of a command completed. */
    private void dataMoved(TargetCommand t) {
        try {
            if (t.offload) {
                IntegrityMr mr = t.mr;
                t.mr = null;
                mr.checkStatus(t.status);
                Completion bad = SignatureMapping.toCompletion(t.status, mr.sigAttrs(), t.cmd.lba);
                SendWr inv = t.inv.reset();
                inv.wrId = T_OTHER | t.cid;
                inv.opcode = WrOpcode.LOCAL_INV;
                inv.invalidateKey = mr.rkey();
                qp.postSend(inv);
                if (t.cmd.op == Capsule.OP_WRITE) {
                    if (bad != null) {
                        respond(t, bad, 0); // a failing write stores nothing
                    } else {
                        execute(t, t.request, t.duty);
                    }
                } else {
                    respond(t, bad != null ? bad : Completion.success(), 0);
                }
                returnMr(mr);
            } else if (t.cmd.op == Capsule.OP_WRITE) {
                execute(t, t.request, PiDuty.of(t.request.protection()));
            } else if (t.cmd.op == Capsule.OP_DISCOVER) {
                // not signalled; nothing to do
            }
        } catch (VerbsException e) {
            stop("rdma: " + e.getMessage());
        }
    }

    /** The fence this connection's requests carried last ({@link io.pistore.spi.WriteFence#reuse}). */
    private io.pistore.spi.WriteFence lastFence;

    private void execute(TargetCommand t, BlockRequest r, PiDuty duty) {
        Capsule.Command c = t.cmd;
        if (c.fenceKey != 0 && r.op() != io.pistore.spi.Operation.READ && r.op() != io.pistore.spi.Operation.FLUSH) {
            r = r.withFence(lastFence = io.pistore.spi.WriteFence.reuse(lastFence, c.fenceKey, c.fenceEpoch, c.fenceSeq));
        }
        handler.execute(r, duty, done -> {
            try {
                respond(t, done, 0);
            } catch (VerbsException e) {
                stop("rdma: " + e.getMessage());
            }
        });
    }

    private void afterRead(TargetCommand t, Completion done) {
        try {
            if (!done.isSuccess()) {
                respond(t, done, 0);
            } else if (t.offload) {
                moveOffloaded(t, false);
            } else {
                long len = t.cmd.length;
                if (len > 0) {
                    SendWr wr = t.data.reset();
                    wr.wrId = T_OTHER | t.cid;
                    wr.opcode = WrOpcode.RDMA_WRITE; // unsignalled: RC orders it before the response SEND
                    wr.addSge(t.staging.iova(), (int) len, t.staging.lkey());
                    wr.remoteAddr = t.cmd.addr;
                    wr.rkey = t.cmd.key;
                    qp.postSend(wr);
                }
                respond(t, done, 0);
            }
        } catch (VerbsException e) {
            stop("rdma: " + e.getMessage());
        }
    }

    private void discover(TargetCommand t) throws VerbsException {
        refreshVolumes();
        List<VolumeInfo> vols = handler.volumes();
        byte[] list = VolumeList.encode(vols, (int) Math.min(t.cmd.length, Integer.MAX_VALUE));
        int n = (int) Math.min(list.length, t.cmd.length);
        writeAnswer(t, n == list.length ? list : java.util.Arrays.copyOf(list, n), t.cmd.addr, t.cmd.key);
    }

    /**
     * A PATH_STATES query: held by the board until the counter differs from the one the host knows
     * ({@code lba}) or its wait ({@code blocks} ms, at most {@link Capsule#MAX_PATH_WAIT_MS}) is over,
     * then answered like DISCOVER: the report RDMA-written into the host's buffer, its length in the
     * response. The answer may come on the board's thread, after this connection stopped.
     */
    private void pathStates(TargetCommand t) {
        Capsule.Command c = t.cmd;
        long wait = Math.min(c.blocks, Capsule.MAX_PATH_WAIT_MS);
        long addr = c.addr;
        int key = c.key;
        int room = (int) Math.min(c.length, DISCOVERY_MAX);
        pathStates.await(c.lba, wait, report -> {
            try {
                synchronized (this) { // against stop(): nothing is registered or posted once it has begun
                    if (stopped) {
                        return;
                    }
                    writeAnswer(t, PathReportCodec.encode(report, room), addr, key);
                }
            } catch (VerbsException e) {
                stop("rdma: " + e.getMessage());
            }
        });
    }

    /** The longest answer written into a host's buffer (its length is the host's to say, up to this). */
    private static final int DISCOVERY_MAX = 1 << 20;

    /** RDMA-writes {@code bytes} to the host's buffer ({@code addr}, {@code key}) and responds with their length. */
    private void writeAnswer(TargetCommand t, byte[] bytes, long addr, int key) throws VerbsException {
        int n = bytes.length;
        if (t.discovery != null) {
            t.discovery.close();
            t.discovery = null;
        }
        if (n > 0) {
            ByteBuffer b = ByteBuffer.allocateDirect(n);
            b.put(bytes).flip();
            t.discovery = pd.register(b, 0);
            SendWr wr = t.data.reset();
            wr.wrId = T_OTHER | t.cid;
            wr.opcode = WrOpcode.RDMA_WRITE;
            wr.addSge(t.discovery.iova(), n, t.discovery.lkey());
            wr.remoteAddr = addr;
            wr.rkey = key;
            qp.postSend(wr);
        }
        respond(t, Completion.success(), n);
    }

    private void respond(TargetCommand t, Completion c, int payload) throws VerbsException {
        if (stopped) {
            return;
        }
        int at = t.cid * Capsule.SIZE;
        int len;
        synchronized (rspBuf) {
            len = Capsule.encodeResponse(rspBuf, at, t.cmd.cid, c, payload);
        }
        SendWr s = t.rsp.reset();
        s.wrId = T_RSP | t.cid;
        s.opcode = WrOpcode.SEND;
        s.signaled = true;
        s.addSge(rspMr.addr(at), len, rspMr.lkey());
        qp.postSend(s);
    }

    /** Ends the connection (once), telling the handler why. */
    void stop(String reason) {
        synchronized (this) {
            if (stopped) {
                return;
            }
            stopped = true;
        }
        conn.close();
        cq.wakeup();
        handler.disconnected(conn.peer(), reason);
        for (TargetCommand t : cmds) {
            if (t.mr != null) {
                t.mr.checkStatus(t.status);
                pool.put(t.mr);
                t.mr = null;
            }
            if (t.staging != null) {
                t.staging.close();
            }
            if (t.discovery != null) {
                t.discovery.close();
            }
        }
        if (pool != null) {
            pool.close();
        }
        cmdMr.close();
        rspMr.close();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        cq.close();
    }
}
