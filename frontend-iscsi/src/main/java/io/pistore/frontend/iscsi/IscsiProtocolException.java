package io.pistore.frontend.iscsi;

/** A broken protocol (bad lengths, digests, PDUs out of place): it ends only its connection. */
final class IscsiProtocolException extends java.io.IOException {
    private static final long serialVersionUID = 1L;

    IscsiProtocolException(String message) {
        super(message);
    }
}
