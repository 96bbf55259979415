package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.Capability;
import io.pistore.transport.rdma.verbs.CompletionQueue;
import io.pistore.transport.rdma.verbs.ConnectHandler;
import io.pistore.transport.rdma.verbs.RcConnection;
import io.pistore.transport.rdma.verbs.DeviceCaps;
import io.pistore.transport.rdma.verbs.DifGuard;
import io.pistore.transport.rdma.verbs.Listener;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.QpConfig;
import io.pistore.transport.rdma.verbs.VerbsDevice;
import io.pistore.transport.rdma.verbs.VerbsException;
import io.pistore.transport.rdma.verbs.WrOpcode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A soft NIC. Devices in one JVM meet through the JVM-wide {@link SoftFabric} (the fast path: the
 * requester moves bytes between the two QPs' memory itself); a connection whose listener is in
 * another process (or every connection, with {@code packetsOnly}) runs over the packet path
 * ({@link SoftLink}): a socket to the listener's own address, connection management REQ/REP/RTU,
 * and each device touching only its own memory.
 */
public final class SoftDevice implements VerbsDevice {
    public static final int MAX_QP_WR = 16384;
    public static final int MAX_SGE = 32;
    public static final int MAX_CQE = 1 << 20;
    /** As {@code max_pi_fast_reg_page_list_len} on mlx5 after rdma_rw's cap. */
    public static final int MAX_PI_PAGE_LIST = 256;

    private final DeviceCaps caps;
    private final AtomicInteger nextIndex = new AtomicInteger(1);
    private final LocalWork localWork;
    /** The live QPs of this device (for {@link #runLocalWork}). */
    private final Set<SoftQp> qps = ConcurrentHashMap.newKeySet();
    private final boolean packetsOnly;
    /** Memory regions registered in this device's PDs and not yet deregistered (a leak shows here). */
    private final AtomicInteger liveRegions = new AtomicInteger();

    /** A device; without {@code integrity} it reports no integrity MR support (as DiSNI hardware would). */
    public SoftDevice(boolean integrity) {
        this(integrity, LocalWork.INLINE);
    }

    /** A device whose local work (REG_MR_INTEGRITY, LOCAL_INV) executes as {@code localWork} says. */
    public SoftDevice(boolean integrity, LocalWork localWork) {
        this(integrity, localWork, false);
    }

    /**
     * A device; with {@code packetsOnly} its connects take the packet path even when the listener is
     * in this JVM (what two processes do, testable in one).
     */
    public SoftDevice(boolean integrity, LocalWork localWork, boolean packetsOnly) {
        this.caps = capsOf(integrity);
        this.localWork = localWork;
        this.packetsOnly = packetsOnly;
    }

    void adopt(SoftQp qp) {
        qps.add(qp);
    }

    public LocalWork localWork() {
        return localWork;
    }

    /** A QP of this device issued local work: run it on the timer thread (ASYNC) or keep it for a test (MANUAL). */
    void localWorkIssued(SoftQp qp) {
        if (localWork == LocalWork.ASYNC) {
            SoftFabric.schedule(() -> qp.runLocal(null), 0);
        }
    }

    void forget(SoftQp qp) {
        qps.remove(qp);
    }

    void regionsAdded(int n) {
        liveRegions.addAndGet(n);
    }

    /** QPs of this device not yet destroyed (for leak tests). */
    public int liveQps() {
        return qps.size();
    }

    /** Memory regions (plain and integrity) registered in this device's PDs and not yet closed (for leak tests). */
    public int liveRegions() {
        return liveRegions.get();
    }

    /**
     * Executes the pending local work of every QP of this device, per QP in posting order, while
     * the head's opcode is {@code only} (null: any); the WRs fenced behind it then go on. Returns
     * how many local WRs ran. For tests with {@link LocalWork#MANUAL}.
     */
    public int runLocalWork(WrOpcode only) {
        int n = 0;
        for (SoftQp q : qps) {
            n += q.runLocal(only);
        }
        return n;
    }

    /** Local WRs issued and not yet executed on this device's QPs, of opcode {@code only} (null: any). */
    public int pendingLocalWork(WrOpcode only) {
        int n = 0;
        for (SoftQp q : qps) {
            n += q.localPending(only);
        }
        return n;
    }

    /** What a soft device reports, with or without integrity MRs. */
    public static DeviceCaps capsOf(boolean integrity) {
        EnumSet<Capability> c = EnumSet.of(Capability.RDMA_READ, Capability.RDMA_WRITE, Capability.LOCAL_INV,
                Capability.SEND_WITH_INV);
        if (integrity) {
            c.add(Capability.INTEGRITY_MR);
        }
        return new DeviceCaps(c, MAX_QP_WR, MAX_SGE, MAX_CQE, integrity ? MAX_PI_PAGE_LIST : 0,
                integrity ? Set.of(1, 2, 3) : Set.of(),
                integrity ? EnumSet.of(DifGuard.CRC, DifGuard.CSUM) : EnumSet.noneOf(DifGuard.class),
                integrity ? Set.of(512, 520, 4096, 4160) : Set.of());
    }

    @Override
    public DeviceCaps caps() {
        return caps;
    }

    @Override
    public ProtectionDomain allocPd() {
        return new SoftPd(this, nextIndex);
    }

    @Override
    public CompletionQueue createCq(int entries) throws VerbsException {
        if (entries < 1 || entries > MAX_CQE) {
            throw new VerbsException(VerbsException.EINVAL, "CQ size must be 1 to " + MAX_CQE + ", not " + entries);
        }
        return new SoftCq(entries);
    }

    final class SoftListener implements Listener {
        final String address;
        final ConnectHandler handler;
        final SoftPacketListener packets;

        SoftListener(String address, ConnectHandler handler, SoftPacketListener packets) {
            this.address = address;
            this.handler = handler;
            this.packets = packets;
        }

        SoftDevice device() {
            return SoftDevice.this;
        }

        @Override
        public String address() {
            return address;
        }

        @Override
        public void close() {
            SoftFabric.LISTENERS.remove(address, this);
            packets.close();
        }
    }

    @Override
    public Listener listen(String address, ConnectHandler handler) throws VerbsException {
        String a = address == null || address.isEmpty() ? "127.0.0.1:0" : address;
        int colon = a.lastIndexOf(':');
        int port;
        try {
            port = Integer.parseInt(a.substring(colon + 1));
        } catch (NumberFormatException | IndexOutOfBoundsException e) {
            throw new VerbsException(VerbsException.EINVAL, "soft RDMA listens on HOST:PORT, not '" + a + "'");
        }
        String host = a.substring(0, colon);
        if (SoftFabric.LISTENERS.containsKey(a)) {
            throw new VerbsException(98, "address " + a + " is already in use");
        }
        SoftPacketListener packets = SoftPacketListener.bind(this, host, port, handler);
        a = host + ":" + packets.port();
        SoftListener l = new SoftListener(a, handler, packets);
        if (SoftFabric.LISTENERS.putIfAbsent(a, l) != null) {
            packets.close();
            throw new VerbsException(98, "address " + a + " is already in use");
        }
        return l;
    }

    void checkQp(QpConfig cfg) throws VerbsException {
        if (cfg.maxSendWr() > MAX_QP_WR || cfg.maxRecvWr() > MAX_QP_WR || cfg.maxSendSge() > MAX_SGE
                || cfg.maxRecvSge() > MAX_SGE) {
            throw new VerbsException(VerbsException.EINVAL, "QP limits exceed the device's (" + MAX_QP_WR + " WRs, "
                    + MAX_SGE + " SGEs)");
        }
        if (cfg.integrity() && !caps.has(Capability.INTEGRITY_MR)) {
            throw new VerbsException(VerbsException.EINVAL, "IB_QP_CREATE_INTEGRITY_EN without integrity handover");
        }
    }

    @Override
    public RcConnection connect(String address, ProtectionDomain pd, CompletionQueue sendCq, CompletionQueue recvCq,
                              QpConfig config, ByteBuffer privateData, long timeoutMillis) throws VerbsException {
        checkQp(config);
        SoftListener l = packetsOnly ? null : SoftFabric.LISTENERS.get(address);
        if (l == null) {
            SoftQp mine = SoftPacketConnector.connect(this, address, (SoftPd) pd, (SoftCq) sendCq, (SoftCq) recvCq,
                    config, privateData, timeoutMillis);
            qps.add(mine);
            return new SoftConnection(mine, address, ByteBuffer.allocate(0), null, null);
        }
        SoftQp mine = new SoftQp(this, (SoftPd) pd, (SoftCq) sendCq, (SoftCq) recvCq, config, SoftFabric.nextQpNum());
        ByteBuffer pdata = privateData == null ? ByteBuffer.allocate(0) : copy(privateData);
        if (pdata.remaining() > 196) {
            throw new VerbsException(VerbsException.EINVAL, "private data is limited to 196 bytes (RDMA_PS_TCP)");
        }
        String me = "soft-qp" + mine.qpNum();
        ConnectHandler.Accept acc;
        try {
            acc = l.handler.onConnectRequest(me, pdata.duplicate());
        } catch (IOException | RuntimeException e) {
            throw new VerbsException(VerbsException.ECONNREFUSED, "connection rejected: " + e.getMessage());
        }
        try {
            l.device().checkQp(acc.config());
        } catch (VerbsException e) {
            throw new VerbsException(VerbsException.ECONNREFUSED, "connection rejected: " + e.getMessage());
        }
        SoftQp theirs = new SoftQp(l.device(), (SoftPd) acc.pd(), (SoftCq) acc.sendCq(), (SoftCq) acc.recvCq(),
                acc.config(), SoftFabric.nextQpNum());
        qps.add(mine);
        l.device().qps.add(theirs);
        mine.peer = theirs;
        theirs.peer = mine;
        SoftConnection passive = new SoftConnection(theirs, me, pdata, l.handler, acc.context());
        SoftConnection active = new SoftConnection(mine, l.address, ByteBuffer.allocate(0), null, null);
        l.handler.onEstablished(passive);
        return active;
    }

    private static ByteBuffer copy(ByteBuffer b) {
        ByteBuffer c = ByteBuffer.allocate(b.remaining());
        c.put(b.duplicate()).flip();
        return c;
    }

    @Override
    public void close() {
    }
}
