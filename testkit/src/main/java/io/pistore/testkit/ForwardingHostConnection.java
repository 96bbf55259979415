package io.pistore.testkit;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.VolumeInfo;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A host connection that passes everything on to another one, except that every request submitted on
 * one of its queues goes through {@link #submit(HostQueue, BlockRequest)}: the skeleton of a test
 * transport that refuses, fails, delays or alters requests on their way to a real connection.
 */
public abstract class ForwardingHostConnection implements HostConnection {
    /** The connection everything is passed on to. */
    protected final HostConnection real;

    protected ForwardingHostConnection(HostConnection real) {
        this.real = real;
    }

    /**
     * A request submitted on one of this connection's queues: submit it on {@code queue}, the real
     * connection's queue of the same index, or answer it otherwise.
     */
    protected abstract CompletableFuture<Completion> submit(HostQueue queue, BlockRequest request);

    @Override
    public List<VolumeInfo> volumes() {
        return real.volumes();
    }

    @Override
    public int queueCount() {
        return real.queueCount();
    }

    @Override
    public HostQueue queue(int index) {
        HostQueue q = real.queue(index);
        return new HostQueue() {
            @Override
            public CompletableFuture<Completion> submit(BlockRequest request) {
                return ForwardingHostConnection.this.submit(q, request);
            }

            @Override
            public int depth() {
                return q.depth();
            }

            @Override
            public int inFlight() {
                return q.inFlight();
            }
        };
    }

    /** As the real connection: its queues serve what this one's pass on. */
    @Override
    public boolean readsMetadataOnly() {
        return real.readsMetadataOnly();
    }

    @Override
    public io.pistore.spi.SharedVolumeState sharedState(String volume) {
        return real.sharedState(volume);
    }

    @Override
    public io.pistore.spi.PathGroup pathGroup(String volume) {
        return real.pathGroup(volume);
    }

    @Override
    public void optimizePath(String volume, String replicaId) throws java.io.IOException {
        real.optimizePath(volume, replicaId);
    }

    @Override
    public java.util.concurrent.CompletableFuture<List<VolumeInfo>> relistVolumes() {
        return real.relistVolumes();
    }

    @Override
    public void close() {
        real.close();
    }
}
