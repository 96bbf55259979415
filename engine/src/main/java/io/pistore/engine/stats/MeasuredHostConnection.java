package io.pistore.engine.stats;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.DelegatingHostConnection;
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
final class MeasuredHostConnection extends DelegatingHostConnection {
    private final TransportCounters counters;

    MeasuredHostConnection(HostConnection delegate, TransportCounters counters) {
        super(delegate);
        this.counters = counters;
        // every volume it sees has its series from now on (at zero on a healthy host), not from its first error
        for (VolumeInfo v : delegate.volumes()) {
            counters.volume(v.name());
        }
    }

    private void seen(BlockRequest r, Completion c) {
        if (c != null && c.caughtByHost() && c.status().isPiError()) {
            counters.volume(r.volume()).piError(c.status().piErrorKind(), PiErrorPlace.HOST);
        }
    }

    @Override
    protected HostQueue wrap(int index, HostQueue q) {
        return new Queue(q);
    }

    @Override
    public CompletableFuture<List<VolumeInfo>> relistVolumes() {
        return inner.relistVolumes().thenApply(list -> {
            for (VolumeInfo v : list) {
                counters.volume(v.name());
            }
            return list;
        });
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
