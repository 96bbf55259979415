package io.pistore.spi;

import java.util.List;
import java.util.function.Consumer;

/**
 * The {@link ReconnectingHostQueue} of a transport whose connections are {@link PeerConnection}s and
 * whose reconnects follow a {@link ReconnectPolicy}: everything but making a connection is here, so a
 * transport's queue says only how it connects to a peer (and, if it must, what it releases first).
 *
 * @param <C> the transport's connection of one queue to one peer
 */
public abstract class ReconnectingPeerQueue<C extends PeerConnection> extends ReconnectingHostQueue<C> {
    private final ReconnectPolicy policy;

    /**
     * {@code peers}: the target's peers as named in log lines; the first connection, to peer
     * {@code peerIndex}, is handed to {@link #start} once the subclass's own fields are set.
     */
    protected ReconnectingPeerQueue(String transport, System.Logger log, List<String> peers, int peerIndex, int index,
                                    ReconnectPolicy policy) {
        super(transport, log, peers, peerIndex, index);
        this.policy = policy;
    }

    @Override
    protected final boolean isShut(C c) {
        return c.isShut();
    }

    @Override
    protected final void onLost(C c, Consumer<String> lost) {
        c.onLost(lost);
    }

    @Override
    protected final void fence(C c, WriteFence f) {
        c.fence(f);
    }

    @Override
    protected final void release(C c) {
        c.shutdown();
    }

    @Override
    protected final List<VolumeInfo> volumesOf(C c) {
        return c.listed();
    }

    @Override
    protected final java.util.concurrent.CompletableFuture<List<VolumeInfo>> relist(C c) {
        return c.relist();
    }

    @Override
    protected final void screenAnswers(C c, AnswerScreen screen) {
        c.screen(screen);
    }

    @Override
    protected final void drop(C c, String reason) {
        c.drop(reason);
    }

    @Override
    protected final boolean schedule(Runnable attempt, long delayMillis) {
        return policy.scheduler().schedule(attempt, delayMillis);
    }

    @Override
    protected final boolean reconnectEnabled() {
        return policy.enabled();
    }

    @Override
    protected final long reconnectDelayMillis() {
        return policy.delayMillis();
    }

    @Override
    protected final long reconnectMaxDelayMillis() {
        return policy.maxDelayMillis();
    }

    /** The connection in use now (or the lost one, while reconnecting). */
    public final C connection() {
        return current();
    }
}
