package io.pistore.transport.rdma.verbs;

import java.nio.ByteBuffer;

/** A protection domain ({@code ib_pd}): the scope of memory keys. */
public interface ProtectionDomain extends AutoCloseable {
    /** Registers {@code [position, limit)} of a buffer ({@code ib_reg_mr}). */
    MemoryRegion register(ByteBuffer buffer, int access) throws VerbsException;

    /**
     * {@code ib_alloc_mr_integrity(pd, maxDataSg, maxMetaSg)}. {@code maxMetaSg} must be positive
     * (EINVAL otherwise); EOPNOTSUPP when the device has no {@link Capability#INTEGRITY_MR}.
     */
    IntegrityMr allocIntegrityMr(int maxDataSg, int maxMetaSg) throws VerbsException;

    @Override
    void close();
}
