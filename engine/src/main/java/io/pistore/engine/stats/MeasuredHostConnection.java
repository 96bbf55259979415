package io.pistore.engine.stats;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.VolumeInfo;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A host connection that counts the PI errors its transport caught on the host side
 * ({@link Completion#caughtByHost()}: a read's PI checked as it arrived) under
 * {@link PiErrorPlace#HOST}, and passes everything on unchanged. For a process that is a host of a
 * remote target (NBD over {@code --target}): the target never sees these errors.
 */
final class MeasuredHostConnection implements HostConnection {
    private final HostConnection delegate;
    private final TransportCounters counters;
    private final HostQueue[] queues;

    MeasuredHostConnection(HostConnection delegate, TransportCounters counters) {
        this.delegate = delegate;
        this.counters = counters;
        // every volume it sees has its series from now on (at zero on a healthy host), not from its first error
        for (VolumeInfo v : delegate.volumes()) {
            counters.volume(v.name());
        }
        this.queues = new HostQueue[delegate.queueCount()];
        for (int i = 0; i < queues.length; i++) {
            queues[i] = new Queue(delegate.queue(i));
        }
    }

    private void seen(BlockRequest r, Completion c) {
        if (c != null && c.caughtByHost() && c.status().isPiError()) {
            counters.volume(r.volume()).piError(c.status().piErrorKind(), PiErrorPlace.HOST);
        }
    }

    @Override
    public List<VolumeInfo> volumes() {
        return delegate.volumes();
    }

    @Override
    public CompletableFuture<List<VolumeInfo>> relistVolumes() {
        return delegate.relistVolumes().thenApply(list -> {
            for (VolumeInfo v : list) {
                counters.volume(v.name());
            }
            return list;
        });
    }

    @Override
    public int queueCount() {
        return queues.length;
    }

    @Override
    public HostQueue queue(int index) {
        return queues[index];
    }

    @Override
    public long reconnects() {
        return delegate.reconnects();
    }

    @Override
    public boolean readsMetadataOnly() {
        return delegate.readsMetadataOnly();
    }

    @Override
    public io.pistore.spi.SharedVolumeState sharedState(String volume) {
        return delegate.sharedState(volume);
    }

    @Override
    public io.pistore.spi.PathGroup pathGroup(String volume) {
        return delegate.pathGroup(volume);
    }

    @Override
    public void optimizePath(String volume, String replicaId) throws java.io.IOException {
        delegate.optimizePath(volume, replicaId);
    }

    @Override
    public void close() {
        delegate.close();
    }

    private final class Queue implements HostQueue {
        private final HostQueue q;

        Queue(HostQueue q) {
            this.q = q;
        }

        @Override
        public CompletableFuture<Completion> submit(BlockRequest request) {
            CompletableFuture<Completion> f = q.submit(request);
            f.thenAccept(c -> seen(request, c));
            return f;
        }

        @Override
        public void submitMayCompleteOnCaller(BlockRequest request, Consumer<Completion> done) {
            q.submitMayCompleteOnCaller(request, c -> {
                seen(request, c);
                done.accept(c);
            });
        }

        @Override
        public int depth() {
            return q.depth();
        }

        @Override
        public int inFlight() {
            return q.inFlight();
        }
    }
}
