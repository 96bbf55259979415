package io.pistore.transport.rdma.internal;

import io.pistore.spi.PeerList;
import io.pistore.spi.ReconnectPolicy;
import io.pistore.spi.ReconnectingHostQueue;
import io.pistore.spi.ReconnectingPeerQueue;
import io.pistore.transport.rdma.RdmaOptions;
import java.io.IOException;

/**
 * One rdma host queue that outlives its QP, with the tcp host's semantics
 * ({@link ReconnectingHostQueue}: requests in flight on a lost connection fail, new ones fail at once
 * while the queue reconnects in the background with backoff, round robin over the target's
 * {@link PeerList}). A connection is lost when the target closed it, its process died, or the QP went
 * to the error state after its retries.
 *
 * <p>The first attempt after a loss releases the dead connection's resources (its QP, CQ, command
 * buffers, staging buffers and integrity MRs, all registered in the connection's PD) before any new
 * ones are made. Which peers and volumes a new queue may use: {@link ReconnectingHostQueue} (a single
 * target with what it lists now; with a list of peers, a peer that has no volume the host uses is
 * passed over).
 */
final class RdmaReconnectingQueue extends ReconnectingPeerQueue<RdmaHostQueue> {
    static final System.Logger LOG = System.getLogger("io.pistore.transport.rdma");

    private final RdmaHostConnection owner;
    private final PeerList<String> peers;

    RdmaReconnectingQueue(RdmaHostConnection owner, ReconnectPolicy policy, PeerList<String> peers, int peerIndex,
                          int index, RdmaHostQueue first) {
        super("rdma", LOG, peers.names(), peerIndex, index, policy);
        this.owner = owner;
        this.peers = peers;
        start(first);
    }

    /** How an rdma host reconnects: {@code rdma.reconnect*}, on {@code scheduler}'s thread. */
    static ReconnectPolicy policy(RdmaOptions options, ReconnectScheduler scheduler) {
        return new ReconnectPolicy(options.reconnect(), options.reconnectDelayMillis(), options.reconnectMaxDelayMillis(),
                scheduler::schedule);
    }

    @Override
    protected RdmaHostQueue connect(int p) throws IOException {
        return owner.openQueue(peers.name(p), index);
    }

    @Override
    protected void beforeReconnecting(RdmaHostQueue lost) {
        lost.shutdown(); // release the dead QP and its MRs before making new ones (idempotent)
    }

    /**
     * A metadata-only read goes as one (READ with {@link Capsule#F_METADATA_ONLY}); a target that
     * refuses it (INVALID_FIELD: an older pistore, or an engine that does not serve such reads) gets
     * the blocks read whole, with no PI check asked, and the data dropped.
     */
    @Override
    public java.util.concurrent.CompletableFuture<io.pistore.spi.Completion> submit(io.pistore.spi.BlockRequest r) {
        if (!r.isMetadataOnly()) {
            return super.submit(r);
        }
        io.pistore.spi.VolumeInfo v = owner.volume(r.volume());
        return super.submit(r).thenCompose(c -> c.status() != io.pistore.spi.Status.INVALID_FIELD || v == null
                || v.format().metadataSize() == 0 ? java.util.concurrent.CompletableFuture.completedFuture(c)
                : super.submit(r.wholeReadInstead(v.format())));
    }

    @Override
    public String toString() {
        return "rdma queue " + index + " to " + peer();
    }
}
