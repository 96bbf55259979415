package io.pistore.replication.group;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The view of a group: leader, members, log indexes and lag, with every peer up and with one down. */
class GroupStatusTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "rv";

    @TempDir
    Path dir;

    private ThreePeers peers;

    @AfterEach
    void close() throws Exception {
        if (peers != null) {
            peers.close();
        }
    }

    @Test
    void everyPeerAnswersWithItsRoleAndIndexesAndAStoppedOneShowsUnreachable() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        byte[] data = new byte[4 * FORMAT.dataSize()];
        new Random(3).nextBytes(data);
        try (ServedVolume s = new ServedVolume(peers.node(0), NAME)) {
            s.device.writeSync(0, ByteBuffer.wrap(data));
        }
        peers.awaitConverged();
        int leader = peers.leader();
        long applied = peers.node(leader).appliedIndex(NAME);
        // The leader's commit index reaches a follower with the next append or heartbeat: wait for it.
        GroupStatus[] s = new GroupStatus[1];
        ThreePeers.await(() -> {
            s[0] = GroupStatus.of(NAME, peers.peerList(), ThreePeers.SETTINGS);
            return s[0].members.stream().allMatch(m -> m.reachable() && m.committedIndex >= applied);
        }, "every peer to report the commit index " + applied);
        assertNotNull(s[0].leader());
        assertEquals(ThreePeers.id(leader), s[0].leader().id);
        assertEquals(3, s[0].members.size());
        for (GroupStatus.Member m : s[0].members) {
            assertEquals(m.id.equals(ThreePeers.id(leader)) ? "LEADER" : "FOLLOWER", m.role, m.id);
            assertTrue(m.appliedIndex >= applied, m.id + " applied " + m.appliedIndex);
            assertEquals(0, s[0].lag(m), m.id);
        }
        assertTrue(s[0].describe().get(3).startsWith("volume rv: leader " + ThreePeers.id(leader) + ", 3 of 3"),
                String.join("\n", s[0].describe()));

        int follower = (leader + 1) % 3;
        peers.stop(follower);
        GroupStatus after = GroupStatus.of(NAME, peers.peerList(), ThreePeers.SETTINGS);
        GroupStatus.Member gone = after.members.get(follower);
        assertFalse(gone.reachable());
        assertEquals(-1, after.lag(gone));
        assertTrue(after.describe().get(follower).contains("unreachable: "), after.describe().get(follower));
        assertTrue(after.describe().get(3).endsWith("2 of 3 peers answered"), after.describe().get(3));
    }
}
