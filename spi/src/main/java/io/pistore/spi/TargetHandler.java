package io.pistore.spi;

import io.pistore.integrity.PiErrorKind;
import java.util.List;
import java.util.function.Consumer;

/**
 * The target side's callback, implemented by the engine: a transport's listener hands it each
 * request it receives, with buffers already laid out as {@link BlockRequest} describes, and delivers
 * the completion back to the host. {@code execute} may complete on any thread, exactly once.
 */
public interface TargetHandler {
    /** The volumes this target serves (for discovery). */
    List<VolumeInfo> volumes();

    /**
     * Executes a request. {@code duty} says what is left of its PI work for the engine: whether it
     * generates the PI of a write ({@link PiDuty#generates} the target), and which check fields a
     * transport has already taken on ({@link PiDuty#left} are the engine's). For a write, those were
     * checked on the way in; for a read (which then must carry a metadata list), the transport checks
     * them on the way back (the RDMA target's integrity MR, the TCP host), so the engine returns the
     * stored PI without checking those fields again.
     */
    void execute(BlockRequest request, PiDuty duty, Consumer<Completion> done);

    /**
     * The transport answered a request of {@code volume} with a PI error it caught itself, on the
     * way in, without executing it (the TCP target's check of a write's arriving bytes): for the
     * target's counters, which would not see that request otherwise.
     */
    default void piErrorInTransport(String volume, Operation op, PiErrorKind kind) {
    }

    /**
     * Whether this target serves {@link BlockRequest#readMetadata} (a read of metadata alone). By
     * default not: such a request then never reaches it.
     */
    default boolean readsMetadataOnly() {
        return false;
    }

    /**
     * This target's path state for {@code volume}, one of {@link #volumes} ({@link PathState}); a
     * transport that reports path states to hosts asks it often (every few tens of milliseconds while
     * a host waits for a change), so it must be cheap and must not block. By default every volume is
     * optimized here (a target whose volumes are not replicated).
     */
    default PathState pathState(String volume) {
        return PathState.OPTIMIZED;
    }

    /**
     * Every peer that serves {@code volume} with its path state as this target sees them ({@link
     * PathGroup}), or null for a volume only this target serves (the default). Cheap, never blocking.
     */
    default PathGroup pathGroup(String volume) {
        return null;
    }

    /**
     * Makes {@code replicaId}'s path to {@code volume} the optimized one (its peer takes the lead of
     * the volume's group), waiting at most the volume's operation timeout; see
     * {@link HostConnection#optimizePath}. By default a volume has one path and refuses.
     */
    default void optimizePath(String volume, String replicaId) throws java.io.IOException {
        throw new UnsupportedOperationException("volume " + volume + " has one path");
    }

    /**
     * The state every port of {@code volume} shares ({@link SharedVolumeState}); null for a volume
     * only this target serves (the default) or a name it does not serve.
     */
    default SharedVolumeState sharedState(String volume) {
        return null;
    }

    /** The compare-and-write {@code volume} orders with all its writes ({@link OrderedCompareAndWrite}), or null (the default). */
    default OrderedCompareAndWrite orderedCompareAndWrite(String volume) {
        return null;
    }

    /** A host connected (for the one log line per connection a target prints); {@code peer} names it. */
    default void connected(String peer) {
    }

    /** A host's connection ended; {@code reason} is one line ("closed by peer", "bad magic 0x…", …). */
    default void disconnected(String peer, String reason) {
    }
}
