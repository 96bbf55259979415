package io.pistore.engine.volume;

import io.pistore.integrity.PiError;
import java.io.IOException;

/**
 * A write refused because a block fails the PI checks the volume itself makes of what it stores
 * (a replicated volume's replicas store only blocks that pass them, whatever the request asked to
 * check): nothing was written. The target answers it as the PI check failure it is, at
 * {@link #lba()}, not as a media error.
 */
public final class PiRefusedException extends IOException {
    private static final long serialVersionUID = 1L;

    private final long lba;
    private final transient PiError error;

    /** {@code lba}: the failing block's; {@code error}: what failed there (its block index is not used). */
    public PiRefusedException(String message, long lba, PiError error) {
        super(message);
        this.lba = lba;
        this.error = error;
    }

    /** The failing block's LBA. */
    public long lba() {
        return lba;
    }

    /** What failed there, as a PI error of that one block (block index 0). */
    public PiError error() {
        return new PiError(error.kind(), 0, error.expected(), error.actual());
    }
}
