package io.pistore.integrity;

/** Thrown by operations that refuse to go on past a failed PI check (e.g. a strip without force). */
public final class PiCheckException extends RuntimeException {
    private final PiError error;

    public PiCheckException(PiError error) {
        super("PI check failed: " + error);
        this.error = error;
    }

    public PiError error() {
        return error;
    }
}
