package io.pistore.transport.rdma.internal;

import io.pistore.spi.PathStateBoard;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.transport.rdma.verbs.Capability;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.IntegrityMrPool;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A listening rdma target: accepts one connection per host queue (private data: magic, queue, depth). */
public final class RdmaTarget implements TargetListener, ConnectHandler {
    private static final int MAX_DEPTH = 4096;

    private final VerbsDevice device;
    private final TargetHandler handler;
    private final ProtectionDomain pd;
    private final Listener listener;
    private final boolean integrity;
    /** Integrity MRs per connection; 0: one per unit of queue depth (rdma_rw's max_rdma_ctxs). */
    private final int mrsPerConnection;
    private final Map<RcConnection, RdmaTargetQueue> live = new ConcurrentHashMap<>();
    /** The path states hosts ask for, or null when they are turned off ({@code rdma.pathStates=false}). */
    private final PathStateBoard pathStates;
    /** How often held PATH_STATES queries look for a change (as tcp's). */
    static final long PATH_TICK_MS = 20;
    private volatile boolean closed;

    private record Pending(CompletionQueue cq, IntegrityMrPool pool, int depth) {
    }

    public RdmaTarget(VerbsDevice device, String address, TargetHandler handler, boolean integrity) throws IOException {
        this(device, address, handler, integrity, 0, true);
    }

    /**
     * A target with {@code mrsPerConnection} integrity MRs per connection (0: one per unit of queue
     * depth; tests use fewer), answering PATH_STATES if {@code pathStates} (else as a pistore without
     * them: an unknown opcode).
     */
    public RdmaTarget(VerbsDevice device, String address, TargetHandler handler, boolean integrity, int mrsPerConnection,
                      boolean pathStates) throws IOException {
        this.pathStates = pathStates ? new PathStateBoard(handler, PATH_TICK_MS) : null;
        this.device = device;
        this.mrsPerConnection = mrsPerConnection;
        this.handler = handler;
        this.integrity = integrity && device.caps().has(Capability.INTEGRITY_MR);
        this.pd = device.allocPd();
        this.listener = device.listen(address, this);
    }

    @Override
    public String address() {
        return listener.address();
    }

    @Override
    public Accept onConnectRequest(String peer, ByteBuffer pdata) throws IOException {
        if (closed) {
            throw new IOException("target is closing");
        }
        if (pdata.remaining() < 12 || pdata.getInt(pdata.position()) != Capsule.MAGIC) {
            throw new IOException("bad connect private data (not a pistore host)");
        }
        int depth = pdata.getInt(pdata.position() + 8);
        if (depth < 1 || depth > MAX_DEPTH) {
            throw new IOException("queue depth " + depth + " is out of range");
        }
        int sq = 4 * (depth + 1) + 4; // REG + READ/WRITE + LOCAL_INV + SEND per command
        int rq = depth + 1;
        CompletionQueue cq = device.createCq(2 * (sq + rq));
        IntegrityMrPool pool = null;
        try {
            if (integrity) {
                int sg = RdmaHostQueue.maxSg(device);
                pool = new IntegrityMrPool(pd, mrsPerConnection > 0 ? mrsPerConnection : depth, sg, sg);
            }
        } catch (VerbsException e) {
            cq.close();
            throw e;
        }
        return new Accept(pd, cq, cq, new QpConfig(sq, rq, 1, 1, 7, integrity), new Pending(cq, pool, depth));
    }

    @Override
    public void onEstablished(RcConnection c) {
        Pending p = (Pending) c.context();
        if (p == null) {
            c.close();
            return;
        }
        try {
            RdmaTargetQueue tc = new RdmaTargetQueue(handler, c, p.cq(), pd, p.pool(), p.depth(), pathStates);
            tc.caps(device.caps());
            live.put(c, tc);
            handler.connected(c.peer());
            tc.start();
            if (closed) {
                tc.stop("target closed");
            }
        } catch (VerbsException e) {
            c.close();
            handler.disconnected(c.peer(), "setup failed: " + e.getMessage());
        }
    }

    @Override
    public void onDisconnected(RcConnection c) {
        RdmaTargetQueue tc = live.remove(c);
        if (tc != null) {
            tc.stop("closed by peer");
        }
    }

    @Override
    public void close() {
        closed = true;
        listener.close();
        for (RdmaTargetQueue tc : live.values()) {
            tc.stop("target closed");
        }
        live.clear();
        if (pathStates != null) {
            pathStates.close();
        }
    }
}
