package io.pistore.app.bench;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Status;
import io.pistore.testkit.ForwardingHostConnection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * A test-only transport that behaves like {@code local} for its first {@link #SERVED} requests, then
 * answers every request {@code NO_SUCH_VOLUME}, at once, as a target does once the volume was deleted
 * under the run. Counts the requests it answered so. Unavailable unless a test switches it on.
 */
public final class VanishingVolumeProvider extends SwitchedOffLocalProvider {
    static final int SERVED = 200;
    static final AtomicLong REFUSED = new AtomicLong();

    public VanishingVolumeProvider() {
        super("vanishing");
    }

    @Override
    UnaryOperator<HostConnection> connections() {
        AtomicLong requests = new AtomicLong();
        return local -> new ForwardingHostConnection(local) {
            @Override
            protected CompletableFuture<Completion> submit(HostQueue q, BlockRequest r) {
                if (requests.incrementAndGet() > SERVED) {
                    REFUSED.incrementAndGet();
                    return CompletableFuture.completedFuture(
                            Completion.failure(Status.NO_SUCH_VOLUME, "no volume " + r.volume()));
                }
                return q.submit(r);
            }
        };
    }
}
