package io.pistore.app.bench;

import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TargetListener;
import io.pistore.spi.TransportOptions;
import io.pistore.spi.VolumeInfo;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A test-only transport that behaves like {@code local} for its first {@link #SERVED} requests, then
 * answers every request {@code NO_SUCH_VOLUME}, at once, as a target does once the volume was deleted
 * under the run. Counts the requests it answered so. Unavailable unless a test switches it on.
 */
public final class VanishingVolumeProvider extends SwitchedOffLocalProvider {
    static volatile boolean enabled;
    static final int SERVED = 200;
    static final AtomicLong REFUSED = new AtomicLong();

    @Override
    boolean enabled() {
        return enabled;
    }

    @Override
    public String name() {
        return "vanishing";
    }

    @Override
    public BlockTransport create(TransportOptions options) {
        BlockTransport local = new LocalTransportProvider().create(options);
        AtomicLong requests = new AtomicLong();
        return new BlockTransport() {
            @Override
            public TargetListener listen(String address, TargetHandler handler) throws IOException {
                return local.listen(address, handler);
            }

            @Override
            public HostConnection connect(String address, ConnectOptions options) throws IOException {
                HostConnection c = local.connect(address, options);
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
                            public CompletableFuture<Completion> submit(BlockRequest r) {
                                if (requests.incrementAndGet() > SERVED) {
                                    REFUSED.incrementAndGet();
                                    return CompletableFuture.completedFuture(
                                            Completion.failure(Status.NO_SUCH_VOLUME, "no volume " + r.volume()));
                                }
                                return q.submit(r);
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

            @Override
            public void close() {
                local.close();
            }
        };
    }
}
