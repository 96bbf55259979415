package io.pistore.replication.volume;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicationSettings;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A read through a follower right after its leader died goes to the next leader as soon as this
 * peer knows it, not once a request to the dead leader ran out of its attempt time (writes, which
 * Ratis's client moves on a broken connection, too). Here the attempt time (the election's and an
 * RPC's, 30.6 s) is longer than the operation timeout (20 s): a request that waited one attempt out
 * would fail.
 */
class SurvivorsAfterLeaderLossTest {
    private static final ReplicationSettings SETTINGS = ThreePeers.SETTINGS
            .withRpcTimeout(Duration.ofSeconds(30))
            .withOperationTimeout(Duration.ofSeconds(20));

    @Test
    void readsAndWritesThroughTheSurvivorsRightAfterTheLeaderDiedAreAnsweredWithinTheOperationTimeout(@TempDir Path dir)
            throws Exception {
        assertTrue(SETTINGS.attemptTimeout().compareTo(SETTINGS.operationTimeout()) > 0);
        try (ThreePeers peers = ThreePeers.start(dir, "rv", BlockFormat.of(512, 8), 256, SETTINGS)) {
            int leader = peers.readyLeader();
            Map<Long, byte[]> acked = new ConcurrentHashMap<>();
            ServedVolume[] survivors = {new ServedVolume(peers.node((leader + 1) % 3), "rv"),
                    new ServedVolume(peers.node((leader + 2) % 3), "rv")};
            try {
                survivors[0].writeRandom(0, 16, new Random(7), acked);
                for (ServedVolume s : survivors) { // each survivor read once: its follower-read path is warm
                    assertArrayEquals(acked.get(0L), s.readReceived(0, 0));
                }
                peers.stop(leader);
                // Both at once, at once: neither survivor knows the next leader yet. Reads first (a
                // read moving a shared client's leader once left the next write waiting out its attempt).
                Thread[] clients = new Thread[2];
                Throwable[] failed = new Throwable[2];
                for (int i = 0; i < 2; i++) {
                    ServedVolume s = survivors[i];
                    int k = i;
                    clients[i] = new Thread(() -> {
                        try {
                            for (long lba = 0; lba < 16; lba++) {
                                assertArrayEquals(acked.get(lba), s.readReceived(lba, 0), "lba " + lba + " through survivor " + k);
                            }
                            s.writeRandom(100 + 50 * k, 110 + 50 * k, new Random(k), acked);
                        } catch (Throwable t) {
                            failed[k] = t;
                        }
                    }, "client-" + i);
                    clients[i].start();
                }
                for (int i = 0; i < 2; i++) {
                    clients[i].join();
                    if (failed[i] != null) {
                        throw new AssertionError("a request through survivor " + i + " failed: " + failed[i], failed[i]);
                    }
                }
                for (int k = 0; k < 2; k++) { // each survivor's writes read back through the other
                    for (long lba = 100 + 50 * k; lba < 110 + 50 * k; lba++) {
                        assertArrayEquals(acked.get(lba), survivors[1 - k].readReceived(lba, 0), "lba " + lba);
                    }
                }
            } finally {
                for (ServedVolume s : survivors) {
                    s.close();
                }
            }
        }
    }
}
