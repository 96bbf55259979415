package io.pistore.engine.volume;

import java.io.IOException;

/**
 * A write refused because it was checked against a version of the volume's shared state that has
 * since changed ({@link io.pistore.spi.WriteFence#view}, {@link io.pistore.spi.SharedVolumeState}):
 * nothing was written. The target answers it with {@link io.pistore.spi.Status#VIEW_CHANGED}.
 */
public final class ViewChangedException extends IOException {
    private static final long serialVersionUID = 1L;

    public ViewChangedException(String message) {
        super(message);
    }
}
