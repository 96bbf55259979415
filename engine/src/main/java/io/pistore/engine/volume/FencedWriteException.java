package io.pistore.engine.volume;

import io.pistore.spi.WriteFence;
import java.io.IOException;

/**
 * A write, zero write or deallocation refused because its host had already sent a newer copy that
 * was applied ({@link WriteFence}): nothing was written. The target answers it with
 * {@link io.pistore.spi.Status#FENCED}, and the host sends it again on its current connection.
 */
public final class FencedWriteException extends IOException {
    private static final long serialVersionUID = 1L;

    public FencedWriteException(String message) {
        super(message);
    }
}
