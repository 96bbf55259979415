package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.Capability;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

/** A protection domain of the soft NIC: its own key table, so a key is only good on QPs of this PD. */
final class SoftPd implements ProtectionDomain {
    final SoftDevice device;
    /** The key table, indexed by MR index; copy-on-write, so lookups take no lock and allocate nothing. */
    private volatile SoftRegion[] table = new SoftRegion[64];
    private final AtomicInteger nextIndex;

    /** {@code indexes} is the device's counter, so keys are unique across the PDs of a device. */
    SoftPd(SoftDevice device, AtomicInteger indexes) {
        this.device = device;
        this.nextIndex = indexes;
    }

    private int newIndex() {
        int i = nextIndex.getAndIncrement() & 0xFFFFFF;
        return i == 0 ? nextIndex.getAndIncrement() & 0xFFFFFF : i;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws VerbsException {
        if (buffer.remaining() == 0) {
            throw new VerbsException(VerbsException.EINVAL, "cannot register an empty buffer");
        }
        SoftMr mr = new SoftMr(this, newIndex(), buffer, access);
        put(mr);
        return mr;
    }

    @Override
    public IntegrityMr allocIntegrityMr(int maxDataSg, int maxMetaSg) throws VerbsException {
        if (!device.caps().has(Capability.INTEGRITY_MR)) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "device has no integrity MR support");
        }
        if (maxMetaSg <= 0) {
            throw new VerbsException(VerbsException.EINVAL, "an integrity MR needs max_meta_sg > 0, not " + maxMetaSg);
        }
        int limit = device.caps().maxPiFastRegPageListLen();
        if (maxDataSg <= 0 || maxDataSg > limit || maxMetaSg > limit) {
            throw new VerbsException(VerbsException.EINVAL, "integrity MR scatter limits must be 1 to " + limit
                    + ", not " + maxDataSg + "/" + maxMetaSg);
        }
        SoftIntegrityMr mr = new SoftIntegrityMr(this, newIndex(), maxDataSg, maxMetaSg);
        put(mr);
        return mr;
    }

    private synchronized void put(SoftRegion r) {
        SoftRegion[] t = table;
        if (r.index >= t.length) {
            t = java.util.Arrays.copyOf(t, Math.max(t.length * 2, r.index + 1));
        } else {
            t = t.clone();
        }
        if (t[r.index] == null) {
            device.regionsAdded(1);
        }
        t[r.index] = r;
        table = t;
    }

    private SoftRegion at(int index) {
        SoftRegion[] t = table;
        return index < t.length ? t[index] : null;
    }

    /** The region a key names, or null when the key is unknown, stale or invalidated. */
    SoftRegion lookup(int key) {
        SoftRegion r = at(key >>> 8);
        if (r == null || !r.valid || r.key != key) {
            return null;
        }
        return r;
    }

    /** The region with this key's index whatever its state (for local invalidate). */
    SoftRegion byIndex(int key) {
        return at(key >>> 8);
    }

    synchronized void remove(SoftRegion r) {
        SoftRegion[] t = table;
        if (r.index < t.length && t[r.index] == r) {
            t = t.clone();
            t[r.index] = null;
            table = t;
            device.regionsAdded(-1);
        }
    }

    @Override
    public synchronized void close() {
        for (SoftRegion r : table) {
            if (r != null) {
                r.valid = false;
                device.regionsAdded(-1);
            }
        }
        table = new SoftRegion[0];
    }
}
