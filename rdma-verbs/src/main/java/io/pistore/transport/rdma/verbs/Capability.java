package io.pistore.transport.rdma.verbs;

/** What a verbs device can do (the bits of {@code device_cap_flags} / {@code kernel_cap_flags} we use). */
public enum Capability {
    RDMA_READ, RDMA_WRITE, LOCAL_INV, SEND_WITH_INV,
    /** {@code IBK_INTEGRITY_HANDOVER}: integrity MRs, {@code ib_map_mr_sg_pi}, {@code IB_WR_REG_MR_INTEGRITY}. */
    INTEGRITY_MR
}
