package io.pistore.security.tls;

/**
 * A key, certificate or CA file that cannot be used, with a one-line message that names the file
 * and what is wrong with it (unreadable, wrong format, expired, key and certificate do not match).
 * Raised when the settings are loaded, so a server refuses to start rather than failing at its
 * first connection.
 */
public final class TlsFileException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public TlsFileException(String message) {
        super(message);
    }

    public TlsFileException(String message, Throwable cause) {
        super(message, cause);
    }
}
