package io.pistore.replication.raft;

import io.pistore.engine.scrub.Scrubber;
import io.pistore.integrity.UnwrittenBlock;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiError;
import io.pistore.integrity.ScatterList;
import java.util.Map;
import java.util.TreeMap;

/**
 * The PI checks a replica can make on blocks without the writer's request, the same ones a scrub
 * makes ({@link Scrubber#checks}): the guard always, the reference tag for Type 1 where it follows the
 * LBA, never the application tag, which belongs to the writer. Block indexes in results are relative
 * to {@code lba}.
 */
public final class StoredBlockCheck {
    private StoredBlockCheck() {
    }

    private static PiContext context(BlockFormat f, long lba) {
        return PiContext.builder(f).checks(Scrubber.checks(f)).initialRefTag(f.refTagOf(lba)).build();
    }

    /**
     * The first block of a write that fails, or null. Blocks carrying the unwritten tuple pass, as they
     * do in every PI check: a write is held to the same rule on every replica as on an unreplicated target.
     */
    public static PiError firstWriteError(BlockFormat f, long lba, ScatterList data, ScatterList metadata, int blocks) {
        return firstWriteError(f, lba, data, metadata, blocks, io.pistore.spi.PiDuty.NONE);
    }

    /**
     * {@link #firstWriteError} unless {@code duty} shows that a hop on this peer already checked what a
     * replica checks (the guard, the Type 1 reference tag against the LBA): then null, unchecked.
     */
    public static PiError firstWriteError(BlockFormat f, long lba, ScatterList data, ScatterList metadata, int blocks,
            io.pistore.spi.PiDuty duty) {
        if (duty.covers(Scrubber.checks(f))) {
            return null;
        }
        if (!f.hasPi()) {
            return null;
        }
        return Pi.verify(context(f, lba), data, metadata, blocks);
    }

    /**
     * Whether every stored block passes {@link #badStoredBlocks}'s checks: the same checks, stopping at
     * the first failure, with nothing allocated for the answer.
     */
    public static boolean allPass(BlockFormat f, long lba, ScatterList data, ScatterList metadata, int blocks) {
        if (!f.hasPi()) {
            return true;
        }
        return Pi.verify(context(f, lba), data, metadata, blocks) == null
                && UnwrittenBlock.firstDataError(f, data, metadata, blocks) == null;
    }

    /**
     * Every stored block that fails, by relative index: the PI checks, and for blocks with the
     * unwritten tuple, that their data is the zeros the tuple stands for.
     */
    public static Map<Integer, PiError> badStoredBlocks(BlockFormat f, long lba, ScatterList data, ScatterList metadata,
            int blocks) {
        Map<Integer, PiError> bad = new TreeMap<>();
        if (!f.hasPi()) {
            return bad;
        }
        for (PiError e : Pi.verifyAll(context(f, lba), data, metadata, blocks, blocks)) {
            bad.putIfAbsent((int) e.blockIndex(), e);
        }
        UnwrittenBlock.checkData(f, data, metadata, blocks, e -> bad.putIfAbsent((int) e.blockIndex(), e));
        return bad;
    }
}
