package io.pistore.spi;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A host connection that passes everything on to another one, its queues each wrapped once by
 * {@link #wrap}: the base of the connections that watch or change requests on their way (counting
 * PI errors, checking writes against reservations, tests' failing transports). A method added to
 * {@link HostConnection} is passed on here once, for every such connection.
 */
public abstract class DelegatingHostConnection implements HostConnection {
    /** The connection everything is passed on to. */
    protected final HostConnection inner;
    private final AtomicReferenceArray<HostQueue> queues;

    protected DelegatingHostConnection(HostConnection inner) {
        this.inner = inner;
        this.queues = new AtomicReferenceArray<>(inner.queueCount());
    }

    /**
     * This connection's queue in place of {@code queue}, the inner connection's queue {@code index};
     * asked once per index, at its first use (so a subclass's fields are set by then).
     */
    protected abstract HostQueue wrap(int index, HostQueue queue);

    @Override
    public HostQueue queue(int index) {
        HostQueue q = queues.get(index);
        if (q == null) {
            queues.compareAndSet(index, null, wrap(index, inner.queue(index)));
            q = queues.get(index);
        }
        return q;
    }

    @Override
    public int queueCount() {
        return queues.length();
    }

    @Override
    public List<VolumeInfo> volumes() {
        return inner.volumes();
    }

    @Override
    public CompletableFuture<List<VolumeInfo>> relistVolumes() {
        return inner.relistVolumes();
    }

    @Override
    public long reconnects() {
        return inner.reconnects();
    }

    @Override
    public boolean readsMetadataOnly() {
        return inner.readsMetadataOnly();
    }

    @Override
    public PathGroup pathGroup(String volume) {
        return inner.pathGroup(volume);
    }

    @Override
    public void optimizePath(String volume, String replicaId) throws java.io.IOException {
        inner.optimizePath(volume, replicaId);
    }

    @Override
    public SharedVolumeState sharedState(String volume) {
        return inner.sharedState(volume);
    }

    @Override
    public OrderedCompareAndWrite orderedCompareAndWrite(String volume) {
        return inner.orderedCompareAndWrite(volume);
    }

    @Override
    public void close() {
        inner.close();
    }
}
