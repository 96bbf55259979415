package io.pistore.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.volume.ReplicatedVolume;
import io.pistore.spi.PathState;
import io.pistore.testkit.Eventually;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The path state each peer reports for a replicated volume: optimized on the leader, non-optimized
 * on the followers (they forward), and so after a leadership transfer; inaccessible on a peer left
 * without a quorum.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReplicatedPathStateTest {
    @TempDir
    Path dir;

    @Test
    void leaderFollowersTransferAndNoQuorum() throws Exception {
        try (ThreePeers peers = ThreePeers.start(dir, "rv", BlockFormat.parse("512+8"), 64)) {
            ReplicatedVolume[] v = new ReplicatedVolume[3];
            try {
                for (int i = 0; i < 3; i++) {
                    v[i] = peers.node(i).open("rv");
                }
                int l = peers.readyLeader();
                awaitStates(v, l);
                int next = (l + 1) % 3;
                v[l].transferLeadership(ThreePeers.id(next));
                awaitStates(v, next);
                int last = (next + 1) % 3;
                peers.stop(l, last); // only the new leader is left: it steps down, no leader can be elected
                Eventually.await("the peer alone reports inaccessible",
                        () -> v[next].pathState() == PathState.INACCESSIBLE);
            } finally {
                for (ReplicatedVolume x : v) {
                    if (x != null) {
                        x.close();
                    }
                }
            }
        }
    }

    /** Waits until peer {@code leader} says optimized and the others non-optimized. */
    private static void awaitStates(ReplicatedVolume[] v, int leader) {
        Eventually.await("peer " + leader + " optimized, the others non-optimized", () -> {
            for (int i = 0; i < 3; i++) {
                if (v[i].pathState() != (i == leader ? PathState.OPTIMIZED : PathState.NON_OPTIMIZED)) {
                    return false;
                }
            }
            return true;
        });
        for (int i = 0; i < 3; i++) {
            assertEquals(i == leader ? PathState.OPTIMIZED : PathState.NON_OPTIMIZED, v[i].pathState(), "peer " + i);
        }
    }
}
