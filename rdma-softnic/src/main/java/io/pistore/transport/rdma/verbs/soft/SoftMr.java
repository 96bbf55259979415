package io.pistore.transport.rdma.verbs.soft;

import io.pistore.transport.rdma.verbs.MemoryRegion;
import java.nio.ByteBuffer;

/** A plain registered MR of the soft NIC: a buffer at a synthetic IOVA, lkey == rkey. */
final class SoftMr extends SoftRegion implements MemoryRegion {
    private final ByteBuffer buffer;
    private final long iova;

    SoftMr(SoftPd pd, int index, ByteBuffer buffer, int access) {
        super(pd, index);
        this.buffer = buffer.slice();
        this.iova = ((long) index + 1) << 32;
        this.access = access;
        this.valid = true;
    }

    @Override
    long base() {
        return iova;
    }

    @Override
    long wireLength() {
        return buffer.capacity();
    }

    @Override
    String readWire(long offset, byte[] dst, int pos, int len) {
        buffer.get((int) offset, dst, pos, len);
        return null;
    }

    @Override
    String writeWire(long offset, byte[] src, int pos, int len) {
        buffer.put((int) offset, src, pos, len);
        return null;
    }

    @Override
    public long iova() {
        return iova;
    }

    @Override
    public int length() {
        return buffer.capacity();
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
    public ByteBuffer buffer() {
        return buffer.duplicate();
    }

    @Override
    public void close() {
        valid = false;
        pd.remove(this);
    }
}
