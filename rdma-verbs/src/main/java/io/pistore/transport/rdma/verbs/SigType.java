package io.pistore.transport.rdma.verbs;

/** {@code enum ib_signature_type}. */
public enum SigType {
    NONE, T10_DIF
}
