package io.pistore.transport.rdma.internal;

import io.pistore.spi.PeerList;
import io.pistore.spi.AnswerScreen;
import io.pistore.spi.ReconnectingHostQueue;
import io.pistore.spi.VolumeInfo;
import io.pistore.transport.rdma.RdmaOptions;
import java.io.IOException;
import java.util.List;
import java.util.function.Consumer;

/**
 * One rdma host queue that outlives its QP, with the tcp host's semantics
 * ({@link ReconnectingHostQueue}: requests in flight on a lost connection fail, new ones fail at once
 * while the queue reconnects in the background with backoff, round robin over the target's
 * {@link PeerList}). A connection is lost when the target closed it, its process died, or the QP went
 * to the error state after its retries.
 *
 * <p>The first attempt after a loss releases the dead connection's resources (its QP, CQ, command
 * buffers, staging buffers and integrity MRs, all registered in the connection's PD) before any new
 * ones are made. A new queue is used only if the target lists the same volumes as at connect time;
 * with a list of peers, a peer that has no volume the host uses is passed over
 * ({@link ReconnectingHostQueue}).
 */
final class RdmaReconnectingQueue extends ReconnectingHostQueue<RdmaHostQueue> {
    private static final System.Logger LOG = System.getLogger("io.pistore.transport.rdma");

    private final RdmaHostConnection owner;
    private final ReconnectScheduler scheduler;
    private final RdmaOptions options;
    private final PeerList<String> peers;

    RdmaReconnectingQueue(RdmaHostConnection owner, ReconnectScheduler scheduler, RdmaOptions options, PeerList<String> peers,
                      int peerIndex, int index, RdmaHostQueue first) {
        super("rdma", LOG, peers.names(), peerIndex, index);
        this.owner = owner;
        this.scheduler = scheduler;
        this.options = options;
        this.peers = peers;
        start(first);
    }

    @Override
    protected RdmaHostQueue connect(int p) throws IOException {
        return owner.openQueue(peers.name(p), index);
    }

    @Override
    protected void beforeReconnecting(RdmaHostQueue lost) {
        lost.close(); // release the dead QP and its MRs before making new ones (idempotent)
    }

    @Override
    protected List<VolumeInfo> volumesOf(RdmaHostQueue q) {
        return q.listed;
    }

    @Override
    protected void screenAnswers(RdmaHostQueue q, AnswerScreen screen) {
        q.screen(screen);
    }

    @Override
    protected void drop(RdmaHostQueue q, String reason) {
        q.drop(reason);
    }

    @Override
    protected boolean isShut(RdmaHostQueue q) {
        return q.isShut();
    }

    @Override
    protected void onLost(RdmaHostQueue q, Consumer<String> lost) {
        q.onLost(lost);
    }

    @Override
    protected void release(RdmaHostQueue q) {
        q.close();
    }

    @Override
    protected boolean schedule(Runnable attempt, long delayMillis) {
        return scheduler.schedule(attempt, delayMillis);
    }

    @Override
    protected boolean reconnectEnabled() {
        return options.reconnect();
    }

    @Override
    protected long reconnectDelayMillis() {
        return options.reconnectDelayMillis();
    }

    @Override
    protected long reconnectMaxDelayMillis() {
        return options.reconnectMaxDelayMillis();
    }

    @Override
    public String toString() {
        return "rdma queue " + index + " to " + peer();
    }
}
