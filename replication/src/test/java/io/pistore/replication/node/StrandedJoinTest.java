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
import org.apache.ratis.server.RaftServer;
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
                boolean caught = stopInJointConfiguration(n, gid, RaftPeerId.valueOf(name));
                joining.join(TimeUnit.SECONDS.toMillis(60));
                GroupMembership g = GroupMembership.of(NAME, peers.peerList(), ThreePeers.SETTINGS);
                if (g.members().stream().anyMatch(p -> p.getId().toString().equals(name))) {
                    g.change(List.of(), List.of(name)); // removed while down
                }
                ReplicaNode back = ReplicaNode.start(name, "127.0.0.1", port, home, ThreePeers.SETTINGS, peers.log::add);
                try {
                    if (!caught || !StrandedJoins.stranded(back.server().getDivision(gid), RaftPeerId.valueOf(name))) {
                        continue; // the new configuration got there first: try again under another name
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

    /** Waits for {@code n}'s log to hold the joint configuration adding {@code self}, and stops {@code n} at once; whether it did. */
    private static boolean stopInJointConfiguration(ReplicaNode n, RaftGroupId gid, RaftPeerId self) throws IOException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try {
            while (System.nanoTime() < end) {
                RaftServer.Division d;
                try {
                    d = n.server().getDivision(gid);
                } catch (IOException e) {
                    Thread.onSpinWait(); // not created yet
                    continue;
                }
                var c = d.getRaftConf();
                if (c != null && !c.getPreviousPeers().isEmpty()
                        && c.getPreviousPeers().stream().noneMatch(p -> p.getId().equals(self))) {
                    return true; // closed below, at once
                }
                if (c != null && c.getPreviousPeers().isEmpty() && c.getCurrentPeers().size() == 4
                        && d.getRaftLog().getLastCommittedIndex() >= c.getLogEntryIndex()) {
                    return false; // the new configuration, committed: the window passed
                }
                Thread.onSpinWait();
            }
            return false;
        } finally {
            n.close();
        }
    }
}
