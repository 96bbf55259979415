package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A read through a follower right after its leader died goes to the next leader as soon as this
 * peer knows it, not once a request to the dead leader ran out of its attempt time (writes, which
 * Ratis's client moves on a broken connection, too). Here the attempt
 * time (the election's and an RPC's, 30.6 s) is longer than the operation timeout (20 s): a read that
 * waited one attempt out would fail.
 */
class SurvivorsAfterLeaderLossTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final ReplicationSettings SETTINGS = ThreePeers.SETTINGS
            .withRpcTimeout(Duration.ofSeconds(30))
            .withOperationTimeout(Duration.ofSeconds(20));

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
    void readsAndWritesThroughTheSurvivorsRightAfterTheLeaderDiedAreAnsweredWithinTheOperationTimeout() throws Exception {
        assertTrue(SETTINGS.attemptTimeout().compareTo(SETTINGS.operationTimeout()) > 0);
        peers = ThreePeers.start(dir, "rv", FORMAT, 256, SETTINGS);
        int leader = peers.readyLeader();
        Random r = new Random(7);
        Map<Long, byte[]> acked = new HashMap<>();
        ServedVolume[] survivors = {new ServedVolume(peers.node((leader + 1) % 3), "rv"),
                new ServedVolume(peers.node((leader + 2) % 3), "rv")};
        try {
            survivors[0].writeRandom(0, 16, r, acked);
            for (ServedVolume s : survivors) { // each survivor read once: its follower-read path is warm
                assertArrayEquals(acked.get(0L), read(s, 0));
            }
            peers.stop(leader);
            // Both at once, at once: neither survivor knows the next leader yet.
            Thread[] readers = new Thread[2];
            Throwable[] failed = new Throwable[2];
            for (int i = 0; i < 2; i++) {
                ServedVolume s = survivors[i];
                int k = i;
                readers[i] = new Thread(() -> {
                    try {
                        for (long lba = 0; lba < 16; lba++) {
                            assertArrayEquals(acked.get(lba), read(s, lba), "lba " + lba + " through survivor " + k);
                        }
                        // and writes, each read back through the other survivor once both are done
                        for (long lba = 100 + 50 * k; lba < 110 + 50 * k; lba++) {
                            s.device.writeSync(lba, ByteBuffer.wrap(block(lba)));
                        }
                    } catch (Throwable t) {
                        failed[k] = t;
                    }
                }, "reader-" + i);
                readers[i].start();
            }
            for (int i = 0; i < 2; i++) {
                readers[i].join();
                if (failed[i] != null) {
                    throw new AssertionError("a read through survivor " + i + " failed: " + failed[i], failed[i]);
                }
            }
            for (int k = 0; k < 2; k++) {
                for (long lba = 100 + 50 * k; lba < 110 + 50 * k; lba++) {
                    assertArrayEquals(block(lba), read(survivors[1 - k], lba), "lba " + lba + " written through survivor " + k);
                }
            }
        } finally {
            for (ServedVolume s : survivors) {
                s.close();
            }
        }
    }

    private static byte[] block(long lba) {
        byte[] b = new byte[FORMAT.dataSize()];
        new Random(lba).nextBytes(b);
        return b;
    }

    private static byte[] read(ServedVolume s, long lba) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(FORMAT.dataSize());
        s.device.readSync(lba, b);
        return b.array();
    }
}
