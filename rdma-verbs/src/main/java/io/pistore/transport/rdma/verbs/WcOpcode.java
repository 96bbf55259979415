package io.pistore.transport.rdma.verbs;

/** {@code enum ib_wc_opcode} subset. */
public enum WcOpcode {
    SEND, RDMA_WRITE, RDMA_READ, LOCAL_INV, REG_MR, RECV
}
