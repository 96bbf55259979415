package io.pistore.transport.rdma.verbs.disni;

import io.pistore.transport.rdma.verbs.MemoryRegion;
import java.nio.ByteBuffer;

/** A DiSNI registration: the real virtual address is the iova, lkey and rkey as the NIC gave them. */
final class DisniMr implements MemoryRegion {
    private final DisniPd pd;
    final DisniOps.Mr mr;
    private final ByteBuffer buffer;

    DisniMr(DisniPd pd, DisniOps.Mr mr, ByteBuffer buffer) {
        this.pd = pd;
        this.mr = mr;
        this.buffer = buffer;
    }

    @Override
    public long iova() {
        return mr.addr();
    }

    @Override
    public int length() {
        return mr.length();
    }

    @Override
    public int lkey() {
        return mr.lkey();
    }

    @Override
    public int rkey() {
        return mr.rkey();
    }

    @Override
    public ByteBuffer buffer() {
        return buffer;
    }

    @Override
    public void close() {
        pd.deregister(this);
    }
}
