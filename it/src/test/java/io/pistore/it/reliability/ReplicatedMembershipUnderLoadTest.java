package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import java.nio.file.Path;
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
}
