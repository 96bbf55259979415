package io.pistore.transport.tcp.internal;

/** Bad input from the peer: the connection is closed with this one-line reason. */
final class ProtocolException extends Exception {
    private static final long serialVersionUID = 1L;

    ProtocolException(String reason) {
        super(reason, null, false, false);
    }
}
