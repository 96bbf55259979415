package io.pistore.engine.volume;

import io.pistore.integrity.ScatterList;
import io.pistore.spi.PiDuty;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * A volume that checks the PI of writes itself (a replicated one, before its group sees them), and so
 * implements the writes that carry a {@link PiDuty}: its plain writes are those with
 * {@link PiDuty#NONE}, nothing checked before it.
 */
public interface CheckingVolume extends Volume {
    @Override
    default void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua) throws IOException {
        write(lba, blocks, data, metadata, fua, PiDuty.NONE);
    }

    @Override
    void write(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua, PiDuty duty) throws IOException;

    @Override
    default CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua) {
        return writeAsync(lba, blocks, data, metadata, fua, PiDuty.NONE);
    }

    @Override
    CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data, ScatterList metadata, boolean fua,
            PiDuty duty);
}
