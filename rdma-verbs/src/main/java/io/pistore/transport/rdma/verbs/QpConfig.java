package io.pistore.transport.rdma.verbs;

/**
 * QP creation attributes ({@code ib_qp_init_attr}, plus the connection's RNR retry count).
 * {@code integrity} is {@code IB_QP_CREATE_INTEGRITY_EN}: without it a QP refuses
 * {@link WrOpcode#REG_MR_INTEGRITY}. {@code rnrRetry} 7 means retry forever, as in IB.
 */
public record QpConfig(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int rnrRetry,
                       boolean integrity) {
    public QpConfig {
        if (maxSendWr < 1 || maxRecvWr < 1 || maxSendSge < 1 || maxRecvSge < 1) {
            throw new IllegalArgumentException("queue sizes must be positive");
        }
        if (rnrRetry < 0 || rnrRetry > 7) {
            throw new IllegalArgumentException("rnr retry must be 0 to 7, not " + rnrRetry);
        }
    }
}
