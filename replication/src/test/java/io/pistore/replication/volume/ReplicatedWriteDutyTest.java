package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import io.pistore.spi.PiDuty;
import io.pistore.spi.Protection;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replicated write is checked once on the peer it arrives at (by the hop its PI duty names, or by
 * the volume), not again by the leader's entry check when that peer leads, and by every follower
 * before it applies. Shown with a write whose duty vouches for a block that is in fact bad: only the
 * followers catch it, each once.
 */
class ReplicatedWriteDutyTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final String NAME = "dv";
    private static final Protection PASS_ALL = Protection.pass(CheckFlags.ALL, 5, 0, 0);

    @TempDir
    Path dir;

    private ThreePeers peers;

    @AfterEach
    void stop() throws Exception {
        if (peers != null) {
            peers.close();
        }
    }

    @Test
    void aWriteCheckedOnTheWayInIsCheckedByNoOtherHopOfItsPeerAndByEveryFollower() throws Exception {
        peers = ThreePeers.start(dir, NAME, FORMAT, 64);
        int l = peers.readyLeader();
        byte[] data = new byte[2 * FORMAT.dataSize()];
        new Random(8).nextBytes(data);
        byte[] meta = new byte[2 * FORMAT.metadataSize()];
        Pi.generate(PiContext.builder(FORMAT).initialRefTag(5).build(), ScatterList.wrap(data), ScatterList.wrap(meta), 2);
        meta[FORMAT.metadataSize()] ^= 0x01; // block 6's guard no longer matches its data
        byte[] before = Arrays.copyOfRange(peers.contents(l)[1], 6 * 8, 7 * 8);
        try (ServedVolume s = new ServedVolume(peers.node(l), NAME)) {
            // A duty that covers what a replica checks only in part does not spare the volume its check.
            io.pistore.engine.volume.PiRefusedException e = assertThrows(io.pistore.engine.volume.PiRefusedException.class,
                    () -> s.volume.write(5, 2,
                    ScatterList.wrap(data), ScatterList.wrap(meta), false,
                    PiDuty.of(PASS_ALL).checkedBy(PiDuty.Hop.WIRE, CheckFlags.of(false, true, true))));
            assertTrue(e.getMessage().contains("lba=6 error=guard"), e.getMessage());
            // One that covers guard and ref: the volume sends it as it is, and this peer, leading, takes
            // it into its log without checking it again.
            long local = s.volume.localEntryCount();
            s.volume.write(5, 2, ScatterList.wrap(data), ScatterList.wrap(meta), false,
                    PiDuty.of(PASS_ALL).checkedBy(PiDuty.Hop.WIRE));
            assertEquals(local + 1, s.volume.localEntryCount(), "into this peer's own log, in process");
        }
        peers.awaitConverged();
        for (int i = 0; i < 3; i++) {
            byte[] m = Arrays.copyOfRange(peers.contents(i)[1], 6 * 8, 7 * 8);
            long refused = peers.node(i).stats(NAME).refusedWrites();
            if (i == l) {
                assertEquals(0, refused, "the leader checked nothing again");
                assertArrayEquals(Arrays.copyOfRange(meta, 8, 16), m, "the leader applied what its own hops vouched for");
            } else {
                assertEquals(1, refused, "follower " + ThreePeers.id(i) + " checked it once, before applying");
                assertArrayEquals(before, m, "follower " + ThreePeers.id(i) + " stored nothing");
            }
        }
    }
}
