package io.pistore.transport.rdma.verbs;

/** {@code enum ib_wr_opcode} subset. */
public enum WrOpcode {
    SEND, SEND_WITH_INV, RDMA_WRITE, RDMA_READ, LOCAL_INV,
    /** {@code IB_WR_REG_MR_INTEGRITY}: makes {@link SendWr#key} valid on {@link SendWr#mr} with its signature attributes. */
    REG_MR_INTEGRITY
}
