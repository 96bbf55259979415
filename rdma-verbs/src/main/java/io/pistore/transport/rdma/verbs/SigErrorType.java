package io.pistore.transport.rdma.verbs;

/** {@code enum ib_sig_err_type}. */
public enum SigErrorType {
    BAD_GUARD, BAD_REFTAG, BAD_APPTAG
}
