package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.Capability;
import io.pistore.transport.rdma.verbs.IntegrityMr;
import io.pistore.transport.rdma.verbs.MemoryRegion;
import io.pistore.transport.rdma.verbs.ProtectionDomain;
import io.pistore.transport.rdma.verbs.VerbsException;
import java.nio.ByteBuffer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/** A protection domain of the soft NIC: its own key table, so a key is only good on QPs of this PD. */
final class SoftPd implements ProtectionDomain {
    final SoftDevice device;
    private final ConcurrentHashMap<Integer, SoftRegion> table = new ConcurrentHashMap<>();
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
        table.put(mr.index, mr);
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
        table.put(mr.index, mr);
        return mr;
    }

    /** The region a key names, or null when the key is unknown, stale or invalidated. */
    SoftRegion lookup(int key) {
        SoftRegion r = table.get(key >>> 8);
        if (r == null || !r.valid || r.key != key) {
            return null;
        }
        return r;
    }

    /** The region with this key's index whatever its state (for local invalidate). */
    SoftRegion byIndex(int key) {
        return table.get(key >>> 8);
    }

    void remove(SoftRegion r) {
        table.remove(r.index, r);
    }

    @Override
    public void close() {
        for (SoftRegion r : table.values()) {
            r.valid = false;
        }
        table.clear();
    }
}
