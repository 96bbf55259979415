package io.pistore.engine.volume;

import java.io.IOException;

/**
 * A request reached a volume that was deleted while it waited (the target answers it as a request
 * for a volume that does not exist).
 */
public final class VolumeGoneException extends IOException {
    private static final long serialVersionUID = 1L;

    VolumeGoneException(String volume) {
        super("volume " + volume + " was deleted");
    }
}
