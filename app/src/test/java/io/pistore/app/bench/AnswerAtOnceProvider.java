package io.pistore.app.bench;

import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.testkit.ForwardingHostConnection;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;

/**
 * A test-only transport that behaves like {@code local} but answers every request before
 * {@code submit} returns (it waits for {@code local}'s answer, then hands back a completed future),
 * as a transport that completes on the caller may: every callback the bench registers then runs
 * inside the submit that asked for it. Unavailable unless a test switches it on.
 */
public final class AnswerAtOnceProvider extends SwitchedOffLocalProvider {
    public AnswerAtOnceProvider() {
        super("answer-at-once");
    }

    @Override
    UnaryOperator<HostConnection> connections() {
        return local -> new ForwardingHostConnection(local) {
            @Override
            protected CompletableFuture<Completion> submit(HostQueue q, BlockRequest r) {
                return CompletableFuture.completedFuture(q.submit(r).join());
            }
        };
    }
}
