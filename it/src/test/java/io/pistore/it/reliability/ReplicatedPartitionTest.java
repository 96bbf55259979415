package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.pistore.engine.BlockDevice;
import io.pistore.replication.group.GroupStatus;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replicated volume on three {@code serve} processes, each in a network namespace of its own
 * ({@link NetnsLab}): a follower is cut off (its link dropped) while writes go on through the
 * leader; once healed it catches up from the leader's log, every replica scrubs clean, every
 * acknowledged write reads back, and once the peers stop their data files are equal. And the same
 * load over links with delay and loss ({@code tc netem}), or loss alone where the kernel has no netem
 * ({@link NetnsLab#impair}).
 * Root only (skipped otherwise, with the reason). {@code -Dpistore.netns.rounds=N} cuts a follower
 * N times (default 1), {@code -Dpistore.netns.seconds=S} writes S seconds per phase (default 2).
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class ReplicatedPartitionTest {
    static final int BLOCKS = 1024;

    @TempDir
    Path dir;

    @BeforeEach
    void needsNamespaces() {
        NetnsLab.assumeAvailable();
    }

    static int seconds() {
        return Integer.getInteger("pistore.netns.seconds", 2);
    }

    /** Lets the load write for the phase's seconds, with at least {@code atLeast} writes acknowledged. */
    static void phase(AckedWriter w, int atLeast) throws InterruptedException {
        Thread.sleep(TimeUnit.SECONDS.toMillis(seconds())); // not a synchronisation: the phase's length
        w.awaitAcknowledged(atLeast, 120);
    }

    @Test
    void aFollowerCutOffCatchesUpAndScrubsClean() throws Exception {
        int rounds = Integer.getInteger("pistore.netns.rounds", 1);
        try (NetnsGroup g = new NetnsGroup(dir, 3, 3, "4MiB")) {
            g.start(3);
            g.lead("n1", 3);
            BlockDevice dev = g.device(1);
            int whileCut = 0;
            AckedWriter w = new AckedWriter(dev, BLOCKS, 4);
            try {
                phase(w, 20);
                for (int r = 0; r < rounds; r++) {
                    int cut = 2 + r % 2; // a follower: n1 leads (moved back each round)
                    if (r > 0) {
                        g.lead("n1", 3);
                    }
                    g.lab.cut(cut);
                    g.log("n" + cut + " cut off");
                    int before = w.acknowledged();
                    phase(w, 20);
                    GroupStatus s = g.status(3);
                    GroupStatus.Member m = s.members.get(cut - 1);
                    assertFalse(m.reachable(), "n" + cut + " is cut off:\n" + String.join("\n", s.describe()));
                    int acked = w.acknowledged() - before;
                    whileCut += acked;
                    g.lab.heal(cut);
                    g.log("n" + cut + " healed; " + acked + " writes acknowledged while cut off");
                    phase(w, 20);
                }
            } finally {
                w.close();
            }
            w.rethrow();
            String scrub = g.verifyEverywhere(w, 2, 3);
            Figures.record("replicated partition", "3 serve processes in network namespaces, a follower cut off "
                    + rounds + " time(s) for " + seconds() + " s under 4 writers through the leader: "
                    + w.acknowledged() + " writes acknowledged (" + whileCut + " while cut off), " + w.failed()
                    + " failed; it caught up, every write read back through n2, " + scrub + "; data files equal");
        }
    }

    @Test
    void writesCompleteOverDelayAndLoss() throws Exception {
        try (NetnsGroup g = new NetnsGroup(dir, 3, 3, "4MiB")) {
            NetnsLab.Impairment how = g.lab.impair(20, 1);
            Assumptions.assumeTrue(how.applied() != null, "neither delay nor loss: " + how.missing());
            if (how.missing() != null) {
                System.out.println("writes over " + how.applied() + "; " + how.missing());
            }
            g.start(3);
            BlockDevice dev = g.device(1);
            AckedWriter w = new AckedWriter(dev, BLOCKS, 4);
            try {
                phase(w, 20);
                phase(w, 20);
            } finally {
                w.close();
            }
            w.rethrow();
            String scrub = g.verifyEverywhere(w, 3, 3);
            Figures.record("replicated delay and loss", "3 serve processes in network namespaces, every link "
                    + how.applied() + " both ways, 4 writers: " + w.acknowledged() + " writes acknowledged, all read "
                    + "back, " + w.failed() + " failed; " + scrub + "; data files equal");
        }
    }
}
