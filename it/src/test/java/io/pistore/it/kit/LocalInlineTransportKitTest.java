package io.pistore.it.kit;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.VolumeInfo;
import java.io.IOException;
import java.util.List;
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
        HostConnection c = super.connect(options);
        return new HostConnection() {
            @Override
            public List<VolumeInfo> volumes() {
                return c.volumes();
            }

            @Override
            public int queueCount() {
                return c.queueCount();
            }

            @Override
            public HostQueue queue(int index) {
                HostQueue q = c.queue(index);
                return new HostQueue() {
                    @Override
                    public CompletableFuture<Completion> submit(BlockRequest request) {
                        CompletableFuture<Completion> f = new CompletableFuture<>();
                        q.submitMayCompleteOnCaller(request, f::complete);
                        return f;
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

            @Override
            public void close() {
                c.close();
            }
        };
    }
}
