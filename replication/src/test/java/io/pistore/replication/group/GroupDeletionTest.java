package io.pistore.replication.group;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ReplicationException;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deleting a replicated volume: the group, its log and every member's replica go, the name can be
 * created again (and reads as zeros), a group without quorum is left whole, and a copy left on a peer
 * that was down is deleted there later.
 */
class GroupDeletionTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "rv";
    private static final long BLOCKS = 64;

    @TempDir
    Path dir;

    private ThreePeers peers;

    @AfterEach
    void stop() throws Exception {
        if (peers != null) {
            peers.close();
        }
    }

    private byte[] write(int node, long lba) throws Exception {
        byte[] b = new byte[FORMAT.dataSize()];
        new Random(lba).nextBytes(b);
        try (ServedVolume s = new ServedVolume(peers.node(node), NAME)) {
            s.device.writeSync(lba, ByteBuffer.wrap(b));
        }
        return b;
    }

    private byte[] read(int node, long lba) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(FORMAT.dataSize());
        try (ServedVolume s = new ServedVolume(peers.node(node), NAME)) {
            s.device.readSync(lba, b);
        }
        return b.array();
    }

    private void assertGone(int i) {
        Path d = peers.dir(i);
        String id = ThreePeers.id(i);
        assertNull(peers.node(i).replica(NAME), id + "'s replica");
        assertFalse(Files.exists(d.resolve("groups").resolve(NAME + ".peers")), id + "'s peer list");
        assertFalse(Files.exists(d.resolve("groups").resolve(NAME + ".applied")), id + "'s applied record");
        assertFalse(Files.exists(d.resolve("raft").resolve(ReplicaPeers.groupId(NAME).getUuid().toString())),
                id + "'s Raft log and snapshots");
    }

    private void recreateAndReadZeros(long lba) throws Exception {
        for (int i = 0; i < 3; i++) {
            peers.node(i).createReplica(NAME, FORMAT, BLOCKS, peers.peerList());
        }
        peers.readyLeader();
        assertArrayEquals(new byte[FORMAT.dataSize()], read(1, lba), "a block of the new volume reads as zeros");
    }

    @Test
    void deletesTheGroupOnEveryMemberAndTheNameCanBeCreatedAgain() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        byte[] b = write(0, 7);
        assertArrayEquals(b, read(2, 7));
        List<String> lines = peers.node(1).delete(NAME, false);
        assertTrue(lines.get(lines.size() - 1).equals("deleted rv on 3 member(s)"), String.join("\n", lines));
        for (int i = 0; i < 3; i++) {
            assertGone(i);
        }
        recreateAndReadZeros(7);
    }

    @Test
    void withoutQuorumNothingIsDeleted() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        byte[] b = write(0, 3);
        peers.stop(1, 2);
        ReplicationException e = assertThrows(ReplicationException.class, () -> peers.node(0).delete(NAME, true));
        // Refused either way, with nothing deleted: no leader answered, or (the moment after its
        // followers stopped, before it stepped down) the leader answered alone, without a quorum.
        assertTrue(e.getMessage().startsWith("volume rv: nothing deleted: no leader answered")
                || e.getMessage().matches("volume rv: nothing deleted: only 1 of 3 members answered \\(no quorum\\).*"),
                e.getMessage());
        assertNotNull(peers.node(0).replica(NAME), "n1 keeps its replica");
        peers.restart(1);
        peers.restart(2);
        peers.readyLeader();
        assertArrayEquals(b, read(0, 3), "the volume works on as before");
    }

    @Test
    void aMemberThatIsDownNeedsForceAndDeletesItsCopyWhenItRunsAgain() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, BLOCKS);
        write(0, 9);
        peers.awaitConverged();
        peers.stop(2);
        ReplicationException e = assertThrows(ReplicationException.class, () -> peers.node(0).delete(NAME, false));
        assertTrue(e.getMessage().contains("nothing deleted: n3 unreachable") && e.getMessage().contains("--force"),
                e.getMessage());
        assertNotNull(peers.node(0).replica(NAME), "refused: n1 keeps its replica");
        assertNotNull(peers.node(1).replica(NAME), "refused: n2 keeps its replica");

        List<String> lines = peers.node(0).delete(NAME, true);
        String all = String.join("\n", lines);
        assertTrue(all.contains("peer n3 was not reachable") && all.endsWith("deleted rv on 2 of 3 member(s); left on n3"),
                all);
        assertGone(0);
        assertGone(1);

        peers.restart(2); // its copy of the group comes back with it, and finds no quorum
        assertNotNull(peers.node(2).replica(NAME));
        lines = peers.node(2).delete(NAME, false);
        assertTrue(String.join("\n", lines).contains("peer n3 deleted its leftover replica"), String.join("\n", lines));
        assertGone(2);
        recreateAndReadZeros(9);
    }
}
