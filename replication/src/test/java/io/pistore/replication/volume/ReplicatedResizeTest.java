package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockIoException;
import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.spi.Status;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replicated volume grows through its log: every replica grows, in order with the writes, so a
 * write to a new block is stored everywhere; a follower that was down grows when it catches up; the
 * size survives a restart; it never shrinks.
 */
class ReplicatedResizeTest {
    private static final String NAME = "rv";
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);

    @TempDir
    Path dir;

    private ThreePeers peers;

    @AfterEach
    void stop() throws Exception {
        if (peers != null) {
            peers.close();
        }
    }

    private static byte[] random(long seed) {
        byte[] d = new byte[FORMAT.dataSize()];
        new Random(seed).nextBytes(d);
        return d;
    }

    @Test
    void everyReplicaGrowsAndServesTheNewBlocks() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        int leader = peers.leader();
        int follower = (leader + 1) % 3;
        int down = (leader + 2) % 3;
        java.util.List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        for (int i = 0; i < 3; i++) {
            String id = ThreePeers.id(i);
            peers.node(i).onReplicaGrown(v -> heard.add(id + " " + v));
        }
        peers.stop(down);
        byte[] d = random(1);
        try (ServedVolume s = new ServedVolume(peers.node(follower), NAME)) {
            BlockIoException beyond = assertThrows(BlockIoException.class, () -> s.device.writeSync(100, ByteBuffer.wrap(d)));
            assertEquals(Status.LBA_OUT_OF_RANGE, beyond.completion().status());
            s.volume.grow(128); // from a follower: through the leader, like a write
            ThreePeers.await(() -> peers.node(follower).replica(NAME).blockCount() == 128, "the follower to grow");
            assertEquals(128, s.volume.blockCount(), "a peer's volume is as large as its replica");
            s.device.writeSync(100, ByteBuffer.wrap(d));
            IllegalArgumentException shrink = assertThrows(IllegalArgumentException.class, () -> s.volume.grow(100));
            assertTrue(shrink.getMessage().contains("shrinking to 100 would drop data"), shrink.getMessage());
            s.volume.grow(128); // the same size: nothing to do
        }
        assertEquals(128, peers.node(leader).replica(NAME).blockCount());
        ThreePeers.await(() -> heard.size() == 2, "both running peers to say their replica grew");
        assertTrue(heard.contains(ThreePeers.id(leader) + " rv") && heard.contains(ThreePeers.id(follower) + " rv"),
                heard.toString());
        peers.restart(down);
        ThreePeers.await(() -> peers.node(down).replica(NAME).blockCount() == 128, "the peer that was down to grow");
        peers.awaitConverged();
        for (int i = 0; i < 3; i++) {
            byte[] back = new byte[FORMAT.dataSize()];
            peers.node(i).replica(NAME).read(100, 1, io.pistore.integrity.ScatterList.wrap(back),
                    io.pistore.integrity.ScatterList.wrap(new byte[FORMAT.metadataSize()]));
            assertArrayEquals(d, back, "block 100 on " + ThreePeers.id(i));
        }
        peers.stop(follower);
        peers.restart(follower);
        assertEquals(128, peers.node(follower).replica(NAME).blockCount(), "grown durably: the size after a restart");
        try (ServedVolume s = new ServedVolume(peers.node(follower), NAME)) {
            ByteBuffer back = ByteBuffer.allocate(FORMAT.dataSize());
            s.device.readSync(100, back);
            assertArrayEquals(d, back.array());
        }
        assertTrue(peers.log.stream().anyMatch(l -> l.contains("grown from 64 to 128 blocks")), peers.log.toString());
        // Straight to the leader, past the sender's own check (a peer whose replica lags behind): refused on entry.
        try (org.apache.ratis.client.RaftClient raw = org.apache.ratis.client.RaftClient.newBuilder()
                .setRaftGroup(peers.node(peers.leader()).open(NAME).group()).setProperties(ThreePeers.SETTINGS.client())
                .build()) {
            String why;
            try {
                org.apache.ratis.protocol.RaftClientReply reply = raw.io().send(
                        io.pistore.replication.raft.ReplicaCommand.plain(io.pistore.replication.raft.ReplicaCommand.Op.RESIZE,
                                96, 0, false));
                why = reply.isSuccess() ? "accepted" : String.valueOf(reply.getException());
            } catch (java.io.IOException e) {
                why = String.valueOf(e.getMessage());
            }
            assertTrue(why.contains("volume rv has 128 blocks; shrinking to 96 would drop data"), why);
        }
        assertEquals(128, peers.node(peers.leader()).replica(NAME).blockCount());
    }
}
