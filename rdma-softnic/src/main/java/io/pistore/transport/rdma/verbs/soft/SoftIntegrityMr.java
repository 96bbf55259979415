package io.pistore.transport.rdma.verbs.soft;

import io.pistore.integrity.ScatterList;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.MrStatus;
import io.pistore.transport.rdma.verbs.SigAttrs;
import io.pistore.transport.rdma.verbs.SigDomain;
import io.pistore.transport.rdma.verbs.VerbsException;

/**
 * The soft NIC's integrity MR. {@link #map} fills the descriptors (as {@code ib_map_mr_sg_pi}); a
 * REG_MR_INTEGRITY snapshots them with the attributes and makes the key valid (the UMR of mlx5);
 * transfers through the key run the {@link SignatureEngine}, which latches the first signature error
 * here while the transfer itself succeeds; {@link #checkStatus} reports and clears it and allows the
 * next registration.
 */
final class SoftIntegrityMr extends SoftRegion implements IntegrityMr, SigLatch {
    private final int maxDataSg;
    private final int maxMetaSg;
    private final SigAttrs attrs = new SigAttrs();

    // descriptors filled by map()
    private ScatterList data = ScatterList.of();
    private ScatterList meta = ScatterList.of();
    private long dataLength;
    private long metaLength;
    private int pageSize;

    // the registered state (guarded by this)
    private final SigAttrs active = new SigAttrs();
    private ScatterList activeData;
    private ScatterList activeMeta;
    private MemView dataView;
    private MemView metaView;
    private long activeDataLength;
    private long activeWireLength;
    private boolean statusChecked = true;
    /** The last protection interval found in the device's sigIntervals (0: none yet). */
    private int supportedInterval;
    private final MrStatus latched = new MrStatus();
    private final SignatureEngine engine = new SignatureEngine();
    private volatile boolean closed;
    /** {@code mr->need_inval}: a registration was posted and no invalidation of its key since (set by the QP at post). */
    volatile boolean needInval;

    SoftIntegrityMr(SoftPd pd, int index, int maxDataSg, int maxMetaSg) {
        super(pd, index);
        this.maxDataSg = maxDataSg;
        this.maxMetaSg = maxMetaSg;
    }

    @Override
    public int maxDataSg() {
        return maxDataSg;
    }

    @Override
    public int maxMetaSg() {
        return maxMetaSg;
    }

    @Override
    public int lkey() {
        return key;
    }

    @Override
    public int rkey() {
        return key;
    }

    @Override
    public long iova() {
        return 0;
    }

    @Override
    public long length() {
        return dataLength + metaLength;
    }

    @Override
    public long dataLength() {
        return dataLength;
    }

    @Override
    public long metaLength() {
        return metaLength;
    }

    int pageSize() {
        return pageSize;
    }

    @Override
    public SigAttrs sigAttrs() {
        return attrs;
    }

    @Override
    public void map(ScatterList dataSgl, ScatterList metaSgl, int pageSize) throws VerbsException {
        if (closed) {
            throw new VerbsException(VerbsException.EINVAL, "integrity MR is deregistered");
        }
        if (pageSize < 512 || Integer.bitCount(pageSize) != 1) {
            throw new VerbsException(VerbsException.EINVAL, "page size must be a power of two of at least 512, not "
                    + pageSize);
        }
        ScatterList m = metaSgl == null ? ScatterList.of() : metaSgl;
        if (dataSgl.segmentCount() > maxDataSg) {
            throw new VerbsException(VerbsException.ENOMEM, "data list has " + dataSgl.segmentCount()
                    + " segments, the integrity MR maps at most " + maxDataSg);
        }
        if (m.segmentCount() > maxMetaSg) {
            throw new VerbsException(VerbsException.ENOMEM, "metadata list has " + m.segmentCount()
                    + " segments, the integrity MR maps at most " + maxMetaSg);
        }
        this.data = dataSgl;
        this.meta = m;
        this.dataLength = dataSgl.length();
        this.metaLength = m.length();
        this.pageSize = pageSize;
        attrs.metaLength = (int) metaLength;
    }

    /**
     * Executes a REG_MR_INTEGRITY: validates what mlx5's {@code set_pi_umr_wr} validates, then makes
     * {@code newKey} valid with the current descriptors and attributes.
     *
     * @return null, or why the post is refused (EINVAL)
     */
    synchronized String register(int newKey, int newAccess) {
        String bad = validateRegistration(newKey);
        if (bad != null) {
            return bad;
        }
        active.copyFrom(attrs);
        activeData = data;
        activeMeta = meta;
        dataView = null;
        metaView = null;
        activeDataLength = dataLength;
        activeWireLength = active.wireLength(dataLength);
        latched.clear();
        statusChecked = false;
        access = newAccess;
        key = newKey;
        valid = true;
        return null;
    }

    /** Why a REG_MR_INTEGRITY with {@code newKey} is refused at post time (mlx5's -EINVAL), or null. */
    synchronized String validateRegistration(int newKey) {
        if (closed) {
            return "integrity MR is deregistered";
        }
        if (!statusChecked) {
            return "integrity MR 0x" + Integer.toHexString(key)
                    + " registered again before ib_check_mr_status (sig_status_checked is false)";
        }
        if ((newKey >>> 8) != index) {
            return "key 0x" + Integer.toHexString(newKey) + " does not belong to integrity MR index " + index;
        }
        return validateAttrs();
    }

    private String validateAttrs() {
        SigDomain mem = attrs.mem;
        SigDomain wire = attrs.wire;
        if (!mem.isDif() && !wire.isDif()) {
            return null;
        }
        int interval = mem.isDif() ? mem.piInterval : wire.piInterval;
        if (mem.isDif() && wire.isDif() && mem.piInterval != wire.piInterval) {
            return "memory and wire protection intervals differ (" + mem.piInterval + ", " + wire.piInterval + ")";
        }
        // Set<Integer>.contains boxes the interval (4096 is outside the Integer cache): remember the
        // last interval found supported, so a registration allocates nothing in the steady state
        if (interval != supportedInterval) {
            if (!pd.device.caps().sigIntervals().contains(interval)) {
                return "protection interval " + interval + " is not supported by the signature engine";
            }
            supportedInterval = interval;
        }
        if (dataLength % interval != 0) {
            return "data length " + dataLength + " is not a multiple of the protection interval " + interval;
        }
        if (mem.isDif() && metaLength != dataLength / interval * SigAttrs.DIF_SIZE) {
            return "memory domain T10-DIF needs " + (dataLength / interval * SigAttrs.DIF_SIZE)
                    + " metadata bytes (8 per interval), " + metaLength + " are mapped";
        }
        String bad = unsupportedGuard(mem);
        return bad != null ? bad : unsupportedGuard(wire);
    }

    private String unsupportedGuard(SigDomain d) {
        if (d.isDif() && !pd.device.caps().sigGuards().contains(d.bgType)) {
            return "guard " + d.bgType + " is not supported by the signature engine";
        }
        return null;
    }

    @Override
    public boolean needsInvalidate() {
        return needInval;
    }

    @Override
    public synchronized MrStatus checkStatus(MrStatus out) {
        if (closed) {
            // ib_check_mr_status fails: there is no signature status to read
            out.clear();
            out.errno = VerbsException.EINVAL;
            return out;
        }
        out.copyFrom(latched);
        if (latched.failed) {
            out.key = key;
        }
        latched.clear();
        statusChecked = true;
        return out;
    }

    synchronized boolean statusChecked() {
        return statusChecked;
    }

    /** Latches the first signature error of this registration. */
    @Override
    public void latch(io.pistore.transport.rdma.verbs.SigErrorType type, long expected, long actual, long offset) {
        if (!latched.failed) {
            latched.failed = true;
            latched.errType = type;
            latched.expected = expected;
            latched.actual = actual;
            latched.sigErrOffset = offset;
            latched.key = key;
        }
    }

    @Override
    long base() {
        return 0;
    }

    @Override
    long wireLength() {
        return activeWireLength;
    }

    private void views() {
        if (dataView == null) {
            dataView = new MemView(activeData);
            metaView = activeMeta.length() == 0 ? MemView.EMPTY : new MemView(activeMeta);
        }
    }

    @Override
    synchronized String readWire(long offset, byte[] dst, int pos, int len) {
        views();
        return engine.memoryToWire(this, active, dataView, metaView, offset, dst, pos, len);
    }

    @Override
    synchronized String writeWire(long offset, byte[] src, int pos, int len) {
        views();
        return engine.wireToMemory(this, active, dataView, metaView, offset, src, pos, len);
    }

    @Override
    public void close() {
        closed = true;
        valid = false;
        pd.remove(this);
    }

    @Override
    public String toString() {
        return "integrity_mr{key=0x" + Integer.toHexString(key) + " data=" + dataLength + " meta=" + metaLength
                + " " + attrs + "}";
    }
}
