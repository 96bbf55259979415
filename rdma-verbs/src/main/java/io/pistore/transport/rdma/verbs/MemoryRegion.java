package io.pistore.transport.rdma.verbs;

import java.nio.ByteBuffer;

/** A registered memory region ({@code ib_reg_mr}): a buffer, its address range and its keys. */
public interface MemoryRegion extends AutoCloseable {
    long iova();

    int length();

    int lkey();

    int rkey();

    ByteBuffer buffer();

    /** The address of byte {@code offset} of the region. */
    default long addr(int offset) {
        return iova() + offset;
    }

    /** Deregisters: the keys become invalid. */
    @Override
    void close();
}
