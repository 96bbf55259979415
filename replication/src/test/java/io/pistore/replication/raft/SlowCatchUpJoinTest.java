package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.group.GroupMembership;
import io.pistore.replication.node.ReplicaNode;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A peer whose catching up takes several times the membership timeout joins, since it keeps
 * receiving the log (each entry's data slowed on the new peer here, as a large volume on a slow link
 * or disk would be): with a fixed
 * bound it would have been refused once the timeout passed.
 */
class SlowCatchUpJoinTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    /** 64 MiB: the most a join of it may take (its copy five times at 32 MiB/s) is 10 s beyond the timeout. */
    private static final long BLOCKS = 1 << 17;
    /** 16 MiB of it written: what the new peer catches up with. */
    private static final long WRITTEN = 1 << 15;

    @TempDir
    Path dir;

    @AfterEach
    void noHook() {
        VolumeStateMachine.beforeEntryData = id -> { };
    }

    @Test
    void aJoinLongerThanTheTimeoutButProgressingJoins() throws Exception {
        try (ThreePeers peers = ThreePeers.start(dir, "rv", FORMAT, BLOCKS)) {
            try (ServedVolume s = new ServedVolume(peers.node(peers.leader()), "rv")) {
                byte[] d = new byte[512 * FORMAT.dataSize()];
                Random r = new Random(3);
                for (long lba = 0; lba < WRITTEN; lba += 512) { // 64 entries to catch up with
                    r.nextBytes(d);
                    s.device.writeSync(lba, ByteBuffer.wrap(d));
                }
            }
            Duration timeout = Duration.ofMillis(400);
            try (ReplicaNode n4 = ReplicaNode.start("n4", "127.0.0.1", 0, dir.resolve("n4"),
                    ThreePeers.SETTINGS.withMembershipTimeout(timeout), peers.log::add)) {
                org.apache.ratis.protocol.RaftPeerId slow = n4.peer().getId();
                java.util.concurrent.atomic.AtomicInteger slowed = new java.util.concurrent.atomic.AtomicInteger();
                VolumeStateMachine.beforeEntryData = id -> {
                    if (id.equals(slow)) {
                        slowed.incrementAndGet();
                        try {
                            Thread.sleep(40); // not a synchronisation: a slow disk or link, simulated
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                };
                GroupMembership.Change c = n4.join("rv", ReplicaPeers.parse(peers.peerList()), null);
                int pauses = slowed.get();
                assertTrue(c.after.contains(n4.peer()), ReplicaPeers.describe(c.after));
                // The join outlasted its timeout twice over at least (each pause 40 ms), or this shows nothing.
                assertTrue(pauses * 40L > 2 * timeout.toMillis(), "only " + pauses + " entries were slowed during the join");
                System.out.println("join with " + pauses + " entries' data slowed 40 ms each on the new peer, against a "
                        + "membership timeout of " + timeout.toMillis() + " ms");
            }
        }
    }
}
