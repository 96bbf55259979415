package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

/**
 * The strict verdict of a kill loop, block by block and scrub by scrub. After a crash and restart a
 * block must read back, with every PI check passing, exactly one complete version the
 * {@link WriteHistory} allows: its durable version or a later write. Everything else is counted —
 * a read that fails its PI check (a <b>torn</b> block: a write cut between its metadata and its
 * data), an older or unknown complete version (<b>stale or lost</b>), a block that passes its
 * checks but is no version at all (a <b>silent mix</b>) — and so is every scrub that is not clean.
 * {@link #assertStrict} wants all of them to be zero.
 */
final class RecoveryCheck {
    /** A block's state when it failed its check: the next kill point rewrites it first. */
    static final long REPAIR = -2;
    private static final int MAX_PROBLEM_LINES = 40;

    long kills;
    long ackedWrites;
    long fuaWrites;
    long zeroWrites;
    long flushes;
    long blocksChecked;
    long durableVerified;
    long inFlux;
    long torn;
    long staleOrLost;
    long silentMixes;
    long killsWithTornBlocks;
    long scrubs;
    long uncleanScrubs;
    long scrubBadBlocks;
    private long tornBefore;
    private final List<String> problems = new ArrayList<>();

    /** Checks one block's read-back against what it may hold; returns what it holds now (or {@link #REPAIR}). */
    long check(int lba, CrashHost.Readback r, WriteHistory.Allowed a) {
        blocksChecked++;
        if (!a.settled()) {
            inFlux++;
        }
        if (r.failed()) {
            torn++;
            problem("kill " + kills + ": torn block, lba " + lba + " failed its PI check (" + r.piError()
                    + "); it may hold " + a.versions());
            return REPAIR;
        }
        long v = BlockVersions.versionOf(lba, r.data(), 0);
        if (v == BlockVersions.MIX) {
            silentMixes++;
            problem("kill " + kills + ": silent mix, lba " + lba + " passed its PI checks but is no version; it may hold "
                    + a.versions());
            return REPAIR;
        }
        if (!a.versions().contains(v)) {
            staleOrLost++;
            problem("kill " + kills + ": stale or lost, lba " + lba + " read version " + v + "; it may hold " + a.versions());
            return v;
        }
        if (a.durableWrittenNow()) {
            durableVerified++;
        }
        return v;
    }

    /** One kill point ended: the load's counts. */
    void killed(WriteHistory h, CrashLoad load) {
        kills++;
        ackedWrites += h.acknowledgedWrites();
        fuaWrites += load.fuaWrites.get();
        zeroWrites += load.zeroWrites.get();
        flushes += load.flushes.get();
    }

    /** All blocks of this kill point were read. */
    void readBackDone() {
        if (torn > tornBefore) {
            killsWithTornBlocks++;
        }
        tornBefore = torn;
    }

    /** What a {@code pistore scrub} run said. */
    record Scrub(int exitCode, String output) {
    }

    /** A {@code pistore scrub} after the kill point. */
    void scrubbed(Scrub s) {
        int exitCode = s.exitCode();
        String output = s.output();
        scrubs++;
        long bad = output.lines().filter(l -> l.startsWith("lba=")).count();
        scrubBadBlocks += bad;
        if (exitCode != 0) {
            uncleanScrubs++;
            problem("kill " + kills + ": scrub exit " + exitCode + ": "
                    + output.lines().filter(l -> !l.startsWith("lba=")).reduce((x, y) -> y).orElse(""));
        }
    }

    private void problem(String line) {
        if (problems.size() < MAX_PROBLEM_LINES) {
            problems.add(line);
            System.out.println("[crash] " + line);
        }
    }

    String figures() {
        return "kills=" + kills + " acked_block_writes=" + ackedWrites + " fua_requests=" + fuaWrites
                + " write_zeroes_requests=" + zeroWrites + " flushes=" + flushes + " blocks_checked=" + blocksChecked
                + " durable_blocks_verified=" + durableVerified + " blocks_in_flux=" + inFlux + " torn_blocks=" + torn
                + " kills_with_torn_blocks=" + killsWithTornBlocks + " stale_or_lost=" + staleOrLost
                + " silent_mixes=" + silentMixes + " scrubs=" + scrubs + " unclean_scrubs=" + uncleanScrubs
                + " scrub_bad_blocks=" + scrubBadBlocks;
    }

    void assertStrict() {
        String why = String.join("\n", problems);
        assertEquals(0, silentMixes, "silent mixes\n" + why);
        assertEquals(0, staleOrLost, "acknowledged durable writes lost or stale data back\n" + why);
        assertEquals(0, torn, "torn blocks (PI errors after restart)\n" + why);
        assertEquals(0, uncleanScrubs, "scrubs that found bad blocks\n" + why);
        assertTrue(durableVerified > 0, "the load never made a write durable before a kill");
    }
}
