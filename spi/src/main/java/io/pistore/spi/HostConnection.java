package io.pistore.spi;

import java.util.List;

/**
 * A host's connection to one target: its volumes and one or more queues. Closing it fails every
 * request still in flight with {@link Status#TRANSPORT_ERROR}.
 */
public interface HostConnection extends AutoCloseable {
    /** The target's volumes as the connection last heard them. */
    List<VolumeInfo> volumes();

    /**
     * Asks the target for its volumes again, for one created, deleted or grown since the connection
     * was made; once it completes, {@link #volumes} returns them and requests may name them. By
     * default {@link #volumes} as it is: a connection whose list is always current (the local
     * transport's) or whose transport cannot ask again.
     */
    default java.util.concurrent.CompletableFuture<List<VolumeInfo>> relistVolumes() {
        return java.util.concurrent.CompletableFuture.completedFuture(volumes());
    }

    int queueCount();

    HostQueue queue(int index);

    /**
     * How often a queue of this connection was connected again after losing its connection, for
     * counters; 0 for transports that do not reconnect.
     */
    default long reconnects() {
        return 0;
    }

    /**
     * Whether this connection serves {@link BlockRequest#readMetadata}: its target in the same process
     * does, or its transport carries such reads (tcp). By default not: such a request is refused.
     */
    default boolean readsMetadataOnly() {
        return false;
    }

    /**
     * The peers that serve {@code volume} and their path states, as the target of this connection
     * says them ({@link TargetHandler#pathGroup}), or null where the volume has one path or the
     * transport does not carry them (the default; the local transport does).
     */
    default PathGroup pathGroup(String volume) {
        return null;
    }

    /**
     * Asks the target to make {@code replicaId}'s path to {@code volume} the optimized one: that peer
     * takes the lead of the volume's group. Returns once it has; an {@link java.io.IOException} when
     * it did not within the volume's operation timeout (the leader stays), an
     * {@link IllegalArgumentException} for a peer that does not serve the volume, an
     * {@link UnsupportedOperationException} where the volume has one path or the transport does not
     * carry the request (the default; the local transport does).
     */
    default void optimizePath(String volume, String replicaId) throws java.io.IOException {
        throw new UnsupportedOperationException("volume " + volume + ": this transport does not carry path changes");
    }

    /**
     * The state every port of {@code volume} shares ({@link SharedVolumeState}), as the target of this
     * connection keeps it, or null where the volume has none or the transport does not carry it (the
     * default; the local transport does).
     */
    default SharedVolumeState sharedState(String volume) {
        return null;
    }

    /**
     * The compare-and-write {@code volume} orders with all its writes ({@link OrderedCompareAndWrite}),
     * or null where the volume has one port or the transport does not carry it (the default; the local
     * transport does).
     */
    default OrderedCompareAndWrite orderedCompareAndWrite(String volume) {
        return null;
    }

    @Override
    void close();
}
