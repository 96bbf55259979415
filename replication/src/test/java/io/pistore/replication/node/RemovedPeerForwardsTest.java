package io.pistore.replication.node;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.group.GroupMembership;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a peer hears when it gives up its replica, and what its served volume then does. A peer
 * removed while it was down comes back holding the old configuration only: it never learns the
 * change that removed it (no member sends it the log any more). Its first election is answered by
 * the leader with "you were removed", Ratis closes its group, and the peer leaves by itself once a
 * member confirms the change; it must report a membership change, so its serve keeps forwarding
 * hosts' requests to the members instead of dropping the volume (hosts there would get
 * NO_SUCH_VOLUME while the volume lives on). A deleted volume, on the other hand, is reported as
 * gone on every member.
 */
class RemovedPeerForwardsTest {
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

    private static void listen(ReplicaNode n, Map<String, Boolean> heard) {
        n.onReplicaRemoved((name, byChange) -> heard.put(n.id() + " " + name, byChange));
    }

    /**
     * A follower of leader {@code l}, stopped while a change removes it (so it misses the joint and
     * the new configuration), left stopped; its index.
     */
    private int removedWhileDown(int l) throws Exception {
        int a = (l + 1) % 3;
        GroupMembership g = GroupMembership.of(NAME, peers.peerList(), ThreePeers.SETTINGS);
        peers.stop(a);
        GroupMembership.Change down = g.change(List.of(), List.of(ThreePeers.id(a)));
        assertEquals(2, down.after.size(), ReplicaPeers.describe(down.after));
        return a;
    }

    @Test
    void aPeerThatNeverLearntItsRemovalKeepsForwardingToTheMembers() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        int l = peers.leader();
        int a = removedWhileDown(l);
        peers.restart(a);
        ReplicaNode removed = peers.node(a);
        Map<String, Boolean> heard = new ConcurrentHashMap<>();
        listen(removed, heard);
        try (ServedVolume s = new ServedVolume(removed, NAME)) { // its serve attached the volume at start
            byte[] before = block(1);
            s.device.writeSync(1, ByteBuffer.wrap(before));

            // Nobody tells it to leave: its own election timeout starts what ends in its leaving.
            String key = ThreePeers.id(a) + " " + NAME;
            ThreePeers.await(() -> heard.containsKey(key), "the removed peer to leave by itself");
            assertNull(removed.replica(NAME), "the removed peer holds no replica");
            assertEquals(Boolean.TRUE, heard.get(key), "reported as a membership change (the group lives on): "
                    + peers.log);
            assertTrue(peers.log.contains("volume rv: replica " + ThreePeers.id(a) + " was left out by a membership "
                    + "change it did not hear of (down or cut off meanwhile); leaving the group"), peers.log.toString());

            // Its served volume forwards to the members: a write and reads through it, after the removal.
            byte[] after = block(2);
            s.device.writeSync(2, ByteBuffer.wrap(after));
            assertArrayEquals(before, read(s, 1), "a block written before the removal, read through the removed peer");
            assertArrayEquals(after, read(s, 2), "a block written through the removed peer after its removal");
        }
        // The members hold the write made through the removed peer.
        try (ServedVolume m = new ServedVolume(peers.node(l), NAME)) {
            assertArrayEquals(block(2), read(m, 2), "the write forwarded by the removed peer, read on the leader");
        }
    }

    /**
     * The leader's answer to a removed peer's election is what closes its group; with the leader
     * down too, no election of the removed peer is ever answered so (and in a group of four, two
     * members' refusals can come first every time). After several election timeouts without a leader
     * it asks the members it knew, and the one left, holding the group without it, confirms.
     */
    @Test
    void aPeerRemovedWhileDownLeavesByItselfWhenNoLeaderAnswersItsElection() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        int l = peers.leader();
        int a = removedWhileDown(l);
        peers.stop(l); // the one peer whose answer to an election says "removed"
        peers.restart(a);
        ReplicaNode removed = peers.node(a);
        Map<String, Boolean> heard = new ConcurrentHashMap<>();
        listen(removed, heard);
        String key = ThreePeers.id(a) + " " + NAME;
        ThreePeers.await(() -> heard.containsKey(key), "the removed peer to leave by itself, with no leader to tell it");
        assertNull(removed.replica(NAME), "the removed peer holds no replica");
        assertEquals(Boolean.TRUE, heard.get(key), "reported as a membership change: " + peers.log);
        assertTrue(peers.log.contains("volume rv: replica " + ThreePeers.id(a) + " was left out by a membership "
                + "change it did not hear of (down or cut off meanwhile); leaving the group"), peers.log.toString());
        int b = (l + 2) % 3;
        assertNotNull(peers.node(b).replica(NAME), "the member left keeps its replica, though it has no leader either");
    }

    @Test
    void aDeletedVolumeIsReportedAsGoneOnEveryMember() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        Map<String, Boolean> heard = new ConcurrentHashMap<>();
        for (int i = 0; i < 3; i++) {
            listen(peers.node(i), heard);
        }
        int f = (peers.leader() + 1) % 3;
        List<String> lines = peers.node(f).delete(NAME, false);
        assertEquals("deleted rv on 3 member(s)", lines.get(lines.size() - 1), String.join("\n", lines));
        ThreePeers.await(() -> heard.size() == 3, "every member to report the removal: " + heard);
        for (int i = 0; i < 3; i++) {
            assertEquals(Boolean.FALSE, heard.get(ThreePeers.id(i) + " " + NAME), "member " + ThreePeers.id(i)
                    + " reports the group gone, not a membership change: " + heard);
        }
    }

    private static byte[] block(int seed) {
        byte[] d = new byte[FORMAT.dataSize()];
        new Random(seed).nextBytes(d);
        return d;
    }

    private static byte[] read(ServedVolume s, long lba) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(FORMAT.dataSize());
        s.device.readSync(lba, b);
        return b.array();
    }
}
