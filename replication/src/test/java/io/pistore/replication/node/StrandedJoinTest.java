package io.pistore.replication.node;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.group.GroupMembership;
import io.pistore.testkit.FreePorts;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A peer stopped in the middle of its own join, once the joint configuration that adds it reached its log
 * but before the new one did, and removed while down, comes back without elections (Ratis 3.2.0 waits
 * for a leader's first append to such a peer); it must still find out it was removed and leave, as every
 * other removed peer does ({@link StrandedJoins}).
 */
class StrandedJoinTest {
    private static final String NAME = "rv";
    /** Tries at stopping the joining peer inside its joint configuration: the window is a round trip or so. */
    private static final int TRIES = 8;

    @TempDir
    Path dir;

    @Test
    void aPeerStoppedInItsJointConfigurationAndRemovedLeavesOnceBack() throws Exception {
        try (ThreePeers peers = ThreePeers.start(dir.resolve("group"), NAME, BlockFormat.of(512, 8), 64)) {
            RaftGroupId gid = ReplicaPeers.groupId(NAME);
            for (int t = 0; t < TRIES; t++) {
                String name = "n" + (4 + t);
                int port = FreePorts.next();
                Path home = dir.resolve(name);
                ReplicaNode n = ReplicaNode.start(name, "127.0.0.1", port, home, ThreePeers.SETTINGS, peers.log::add);
                peers.readyLeader();
                Thread joining = new Thread(() -> {
                    try {
                        n.join(NAME, ReplicaPeers.parse(peers.peerList()), null);
                    } catch (IOException | RuntimeException e) {
                        // stopped under it: the change goes on without it
                    }
                }, "joining-" + name);
                joining.start();
                boolean caught = stopInJointConfiguration(n, gid, RaftPeerId.valueOf(name), joining);
                joining.join(TimeUnit.SECONDS.toMillis(60));
                GroupMembership g = GroupMembership.of(NAME, peers.peerList(), ThreePeers.SETTINGS);
                if (g.members().stream().anyMatch(p -> p.getId().toString().equals(name))) {
                    g.change(List.of(), List.of(name)); // removed while down
                }
                ReplicaNode back = ReplicaNode.start(name, "127.0.0.1", port, home, ThreePeers.SETTINGS, peers.log::add);
                try {
                    if (!caught || !strandedOnStart(back, gid, RaftPeerId.valueOf(name))) {
                        continue; // the new configuration got there first, or nothing of the join was durable: again
                    }
                    ThreePeers.await(() -> back.replica(NAME) == null, name + " to leave by itself once back");
                    assertTrue(peers.log.stream().anyMatch(l -> l.contains("replica " + name + " was left out")), peers.log.toString());
                    return;
                } finally {
                    back.close();
                }
            }
            fail("no try stopped the joining peer inside its joint configuration");
        }
    }

    /** Whether {@code n}, just started, holds group {@code gid} in the state {@link StrandedJoins} looks for. */
    private static boolean strandedOnStart(ReplicaNode n, RaftGroupId gid, RaftPeerId self) {
        try {
            return StrandedJoins.stranded(n.server().getDivision(gid), self);
        } catch (IOException e) {
            return false; // stopped before its group was written down: it came back without it
        }
    }

    /**
     * Waits, while {@code joining} runs (the join ends once its change committed or failed), for {@code n}'s
     * log to hold the joint configuration adding {@code self}, and stops {@code n} at once; whether it did.
     */
    private static boolean stopInJointConfiguration(ReplicaNode n, RaftGroupId gid, RaftPeerId self, Thread joining)
            throws IOException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try {
            while (joining.isAlive() && System.nanoTime() < end) {
                try {
                    var c = n.server().getDivision(gid).getRaftConf();
                    if (c != null && !c.getPreviousPeers().isEmpty()
                            && c.getPreviousPeers().stream().noneMatch(p -> p.getId().equals(self))) {
                        return true; // closed below, at once
                    }
                } catch (IOException e) {
                    // not created yet
                }
                Thread.onSpinWait();
            }
            return false;
        } finally {
            n.close();
        }
    }
}
