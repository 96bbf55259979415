package io.pistore.frontend.nbd;

import java.io.IOException;

/** The peer broke a rule the connection cannot recover from; the connection (only) is closed. */
final class NbdProtocolException extends IOException {
    NbdProtocolException(String message) {
        super(message);
    }
}
