package io.pistore.spi;

import java.util.List;
import java.util.function.Consumer;

/**
 * One connection of a host queue to one peer, as a transport makes it for a
 * {@link ReconnectingPeerQueue}: the queue sends on it while it is up, and when it is lost (or left)
 * makes another, to the same peer or to the next.
 */
public interface PeerConnection extends HostQueue {
    /** The volumes the peer listed when this connection was made, or last {@link #relist relisted}. */
    List<VolumeInfo> listed();

    /**
     * Asks the peer for its volumes again on this connection (one created, deleted or grown since it
     * was made); once it completes, {@link #listed} returns them and requests may name them. By
     * default the list of the connection's greeting, unchanged.
     */
    default java.util.concurrent.CompletableFuture<List<VolumeInfo>> relist() {
        return java.util.concurrent.CompletableFuture.completedFuture(listed());
    }

    /**
     * Has every answer of the peer to a request pass through {@code screen} before the request
     * completes (only set for a list of more than one peer).
     */
    void screen(AnswerScreen screen);

    /**
     * Closes the connection from any thread as if it were lost, with {@code reason}: its requests in
     * flight fail with {@link Status#TRANSPORT_ERROR} and its {@link #onLost} listener is told. May
     * return before it has happened; must not block the thread completing requests. Idempotent.
     */
    void drop(String reason);

    /** Whether the connection is down (lost or closed): requests submitted now fail at once. */
    boolean isShut();

    /** Has {@code lost} called with a reason once, when the connection ends other than by {@link #shutdown}. */
    void onLost(Consumer<String> lost);

    /** Closes the connection and releases what it holds; requests still in it fail. Idempotent. */
    void shutdown();

    /**
     * Stamps every write, zero write and deallocation sent on this connection from now on with
     * {@code f} ({@link WriteFence}); called once, before the connection carries any request. By
     * default nothing: a transport whose wire carries no fence.
     */
    default void fence(WriteFence f) {
    }
}
