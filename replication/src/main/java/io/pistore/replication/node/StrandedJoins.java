package io.pistore.replication.node;

import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftConfiguration;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.util.LifeCycle;

/**
 * Asks, for a peer that came back in the middle of its own join, whether a change left it out meanwhile.
 * <p>
 * A peer whose log ends in the joint configuration of the change that added it (it stopped before the
 * new configuration reached it) is, to Ratis 3.2.0, not yet a voter: it starts waiting for a leader's
 * first append and holds no elections, so it is never told it has no leader, the question every other
 * removed peer asks once back. If the change that removed it committed meanwhile, no leader writes to it
 * again and it would keep its replica for good. Such a peer, still without a leader after the no-leader
 * timeout, asks the same way ({@code ask}: the members decide, a join still under way keeps it), and
 * again after each timeout while it stays so.
 */
final class StrandedJoins implements AutoCloseable {
    private final RaftServer server;
    private final RaftPeerId self;
    private final long waitMs;
    private final Map<RaftGroupId, String> names;
    private final BiConsumer<RaftGroupId, String> ask;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "pistore-stranded-joins");
        t.setDaemon(true);
        return t;
    });

    /** {@code ask}: the question for a group and its volume's name ({@code names}, read at each question). */
    StrandedJoins(RaftServer server, RaftPeerId self, Duration wait, Map<RaftGroupId, String> names,
            BiConsumer<RaftGroupId, String> ask) {
        this.server = server;
        this.self = self;
        this.waitMs = Math.max(1, wait.toMillis());
        this.names = names;
        this.ask = ask;
    }

    /** Looks at every group this peer holds now, and again one wait later at each one that came back in its join. */
    StrandedJoins watchAll() {
        for (RaftGroupId gid : server.getGroupIds()) {
            try {
                if (stranded(server.getDivision(gid), self)) {
                    later(gid);
                }
            } catch (IOException e) {
                // gone from this peer meanwhile: nothing to ask
            }
        }
        return this;
    }

    private void later(RaftGroupId gid) {
        try {
            timer.schedule(() -> check(gid), waitMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private void check(RaftGroupId gid) {
        RaftServer.Division d;
        try {
            d = server.getDivision(gid);
        } catch (IOException e) {
            return; // the group is gone from this peer
        }
        String name = names.get(gid);
        if (name != null && stranded(d, self)) {
            ask.accept(gid, name);
            later(gid);
        }
    }

    /**
     * Whether {@code d} waits for a leader's first append with a log that ends in a joint configuration
     * adding {@code self}: no leader known, not started, {@code self} among the new members only.
     */
    static boolean stranded(RaftServer.Division d, RaftPeerId self) {
        RaftConfiguration c = d.getRaftConf();
        return d.getInfo().getLeaderId() == null && d.getInfo().getLifeCycleState() == LifeCycle.State.STARTING
                && c != null && !c.getPreviousPeers().isEmpty()
                && c.getCurrentPeers().stream().anyMatch(p -> p.getId().equals(self))
                && c.getPreviousPeers().stream().noneMatch(p -> p.getId().equals(self));
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
