package io.pistore.app.bench;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Operation;
import io.pistore.testkit.ForwardingHostConnection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * A test-only transport that behaves like {@code local} but whose host queues throw, instead of
 * answering, on every {@link #EVERY}th write submitted: a request refused before it is sent, as a
 * transport with a bug might. Unavailable unless a test switches it on.
 */
public final class RefusingProvider extends SwitchedOffLocalProvider {
    static final int EVERY = 50;
    static final String REASON = "refused by the test transport";

    public RefusingProvider() {
        super("refusing");
    }

    @Override
    UnaryOperator<HostConnection> connections() {
        AtomicLong writes = new AtomicLong();
        return local -> new ForwardingHostConnection(local) {
            @Override
            protected CompletableFuture<Completion> submit(HostQueue q, BlockRequest r) {
                if (r.op() == Operation.WRITE && writes.incrementAndGet() % EVERY == 0) {
                    throw new IllegalStateException(REASON);
                }
                return q.submit(r);
            }
        };
    }
}
