package io.pistore.testkit;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.DelegatingHostConnection;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import java.util.concurrent.CompletableFuture;

/**
 * A host connection that passes everything on to another one, except that every request submitted on
 * one of its queues goes through {@link #submit(HostQueue, BlockRequest)}: the skeleton of a test
 * transport that refuses, fails, delays or alters requests on their way to a real connection.
 */
public abstract class ForwardingHostConnection extends DelegatingHostConnection {
    protected ForwardingHostConnection(HostConnection real) {
        super(real);
    }

    /**
     * A request submitted on one of this connection's queues: submit it on {@code queue}, the real
     * connection's queue of the same index, or answer it otherwise.
     */
    protected abstract CompletableFuture<Completion> submit(HostQueue queue, BlockRequest request);

    @Override
    protected final HostQueue wrap(int index, HostQueue q) {
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
}
