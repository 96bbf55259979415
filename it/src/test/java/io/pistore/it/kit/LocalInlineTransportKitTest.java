package io.pistore.it.kit;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.testkit.ForwardingHostConnection;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;

/**
 * The compatibility kit on the local transport, every request submitted through
 * {@link HostQueue#submitMayCompleteOnCaller} (run on the submitting thread, as the NBD frontend
 * does) instead of through the queue's worker.
 */
class LocalInlineTransportKitTest extends TransportCompatibilityKit {
    @Override
    protected String transportName() {
        return "local";
    }

    @Override
    protected String listenAddress() {
        return "";
    }

    @Override
    protected HostConnection connect(ConnectOptions options) throws IOException {
        return new ForwardingHostConnection(super.connect(options)) {
            @Override
            protected CompletableFuture<Completion> submit(HostQueue q, BlockRequest request) {
                CompletableFuture<Completion> f = new CompletableFuture<>();
                q.submitMayCompleteOnCaller(request, f::complete);
                return f;
            }
        };
    }
}
