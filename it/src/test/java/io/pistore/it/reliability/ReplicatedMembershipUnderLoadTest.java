package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.testkit.Eventually;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A membership change across processes under load: three {@code serve} processes hold replicated
 * volume {@code rv}, each in a network namespace of its own ({@link NetnsLab}); while four writers
 * go on through {@code n1}, a fourth {@code serve} (empty data directory, its own namespace) is
 * added with {@code pistore replicas add}. Then every acknowledged write reads back through the new
 * member, all four replicas scrub clean and catch up, and once stopped their data files are equal.
 * And the leader cut off by the network and replaced under the same load through another peer
 * ({@code pistore replicas replace}): the writes wait for the new leader, the change needs only the
 * members that answer, and once its link is back the old leader learns that it was left out and
 * deletes its replica by itself.
 * Root only (skipped otherwise, with the reason); {@code -Dpistore.netns.seconds=S} writes S
 * seconds before and after the change (default 2).
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class ReplicatedMembershipUnderLoadTest {
    @TempDir
    Path dir;

    @BeforeEach
    void needsNamespaces() {
        NetnsLab.assumeAvailable();
    }

    @Test
    void aFourthPeerAddedUnderLoadLosesNoWrite() throws Exception {
        try (NetnsGroup g = new NetnsGroup(dir, 4, 3, "4MiB")) {
            g.start(4);
            BlockDevice dev = g.device(1);
            AckedWriter w = new AckedWriter(dev, ReplicatedPartitionTest.BLOCKS, 4);
            int during;
            String added;
            try {
                ReplicatedPartitionTest.phase(w, 20);
                int before = w.acknowledged();
                g.log("adding n4");
                added = NetnsGroup.cli("replicas", "add", NetnsGroup.VOLUME, "--data", g.data(4), "--replicas",
                        g.peers(3));
                during = w.acknowledged() - before;
                g.log("n4 added; " + during + " writes acknowledged meanwhile");
                ReplicatedPartitionTest.phase(w, 20);
            } finally {
                w.close();
            }
            w.rethrow();
            assertTrue(added.startsWith("volume rv: replica n4 joined, caught up; members n1,n2,n3 -> n1,n2,n3,n4"),
                    added);
            assertTrue(during > 0, "writes were acknowledged while the change ran");
            String scrub = g.verifyEverywhere(w, 4, 4);
            Figures.record("replicated membership under load", "3 serve processes in network namespaces, a 4th added "
                    + "with 'replicas add' under 4 writers through n1: " + w.acknowledged() + " writes acknowledged ("
                    + during + " while the change ran), " + w.failed() + " failed; every write read back through n4, "
                    + scrub + "; data files of the 4 equal");
        }
    }

    @Test
    void aLeaderCutOffIsReplacedAndLeavesOnceItsLinkIsBack() throws Exception {
        try (NetnsGroup g = new NetnsGroup(dir, 4, 3, "4MiB")) {
            g.start(4);
            g.lead("n1", 3);
            BlockDevice dev = g.device(2);
            AckedWriter w = new AckedWriter(dev, ReplicatedPartitionTest.BLOCKS, 4);
            String replaced;
            int whileCut;
            try {
                ReplicatedPartitionTest.phase(w, 20);
                g.lab.cut(1);
                g.log("n1 (the leader) cut off; replacing it by n4");
                int before = w.acknowledged();
                replaced = NetnsGroup.cli("replicas", "replace", NetnsGroup.VOLUME, "--old", "n1", "--data", g.data(4),
                        "--replicas", g.peers(3)).trim();
                g.log(replaced);
                ReplicatedPartitionTest.phase(w, 20);
                whileCut = w.acknowledged() - before;
                assertTrue(Files.exists(g.replicaData(1)), "n1 cannot have heard of the change while cut off");
                g.lab.heal(1);
                g.log("n1 healed");
                try {
                    Eventually.await("n1 to learn it was replaced", Duration.ofSeconds(60),
                            () -> g.output(1).contains("replica n1 left the group; its replica is deleted"));
                } catch (AssertionError e) {
                    throw new AssertionError(e.getMessage() + "; n1's output:\n" + g.output(1), e);
                }
                g.log("n1 left the group");
                ReplicatedPartitionTest.phase(w, 20);
            } finally {
                w.close();
            }
            w.rethrow();
            assertTrue(replaced.startsWith("volume rv: replica n4 joined, caught up; members n1,n2,n3 -> n2,n3,n4"),
                    replaced);
            // Writes wait for the new leader at n2; one that waits past the operation timeout (on a
            // machine loaded by a whole build: the cut, an election and the change at once) fails as
            // a timeout, which AckedWriter allows for (any other failure fails the load) and checks below.
            assertFalse(Files.exists(g.replicaData(1)), "n1 deleted its replica");
            String scrub = g.verifyEverywhere(w, 4, 2, 3, 4);
            Figures.record("replicated leader replaced while cut off", "3 serve processes in network namespaces, the "
                    + "leader n1 cut off and replaced by a 4th with 'replicas replace' under 4 writers through n2: "
                    + w.acknowledged() + " writes acknowledged (" + whileCut + " from the cut until " + seconds()
                    + " s after the change), " + w.failed() + " failed; once healed n1 deleted its replica by itself; "
                    + "every write read back through n4, " + scrub + "; data files of n2, n3, n4 equal");
        }
    }

    private static int seconds() {
        return ReplicatedPartitionTest.seconds();
    }
}
