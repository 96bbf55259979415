package io.pistore.transport.rdma.verbs;

/** {@code enum ib_t10_dif_bg_type}: the guard of a T10-DIF domain. */
public enum DifGuard {
    /** {@code IB_T10DIF_CRC}: CRC-16/T10-DIF. */
    CRC,
    /** {@code IB_T10DIF_CSUM}: IP checksum. */
    CSUM
}
