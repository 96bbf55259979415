package io.pistore.transport.rdma.internal;

import io.pistore.integrity.BlockFormat;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.Operation;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.VolumeInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A backend for transport tests: one volume {@code v} in two arrays (data, metadata) that stores and
 * returns what it is handed, and records each request and the PI duty the transport handed with it.
 */
final class MemoryTarget implements TargetHandler {
    static final String VOLUME = "v";

    final BlockFormat format;
    final long blocks;
    final byte[] data;
    final byte[] meta;
    final List<BlockRequest> requests = new ArrayList<>();
    final List<io.pistore.spi.PiDuty> duties = new ArrayList<>();
    /** Whether it serves metadata-only reads ({@link #readsMetadataOnly}). */
    volatile boolean servesMetadataOnly;

    MemoryTarget(BlockFormat format, long blocks) {
        this.format = format;
        this.blocks = blocks;
        this.data = new byte[(int) (blocks * format.dataSize())];
        this.meta = new byte[(int) (blocks * format.metadataSize())];
    }

    @Override
    public List<VolumeInfo> volumes() {
        return List.of(new VolumeInfo(VOLUME, blocks, format));
    }

    @Override
    public boolean readsMetadataOnly() {
        return servesMetadataOnly;
    }

    @Override
    public synchronized void execute(BlockRequest r, io.pistore.spi.PiDuty duty, Consumer<Completion> done) {
        requests.add(r);
        duties.add(duty);
        int ds = format.dataSize();
        int ms = format.metadataSize();
        int n = r.blocks();
        if (r.op() == Operation.WRITE) {
            r.data().read(0, data, (int) r.lba() * ds, n * ds);
            if (r.hasMetadata()) {
                r.metadata().read(0, meta, (int) r.lba() * ms, n * ms);
            }
        } else if (r.isMetadataOnly()) {
            r.metadata().write(0, meta, (int) r.lba() * ms, n * ms);
        } else if (r.op() == Operation.READ) {
            r.data().write(0, data, (int) r.lba() * ds, n * ds);
            if (r.hasMetadata()) {
                r.metadata().write(0, meta, (int) r.lba() * ms, n * ms);
            }
        } else if (r.op() != Operation.FLUSH) {
            done.accept(Completion.failure(Status.INVALID_FIELD, "not in this test"));
            return;
        }
        done.accept(Completion.success());
    }

    synchronized BlockRequest last() {
        return requests.get(requests.size() - 1);
    }
}
