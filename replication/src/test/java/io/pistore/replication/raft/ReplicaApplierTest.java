package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.MemoryVolume;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.PiErrorKind;
import io.pistore.integrity.ScatterList;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.ratis.protocol.Message;
import org.junit.jupiter.api.Test;

/** What one replica does with each committed command, without Ratis: check, then store or refuse. */
class ReplicaApplierTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    private final MemoryVolume volume = new MemoryVolume("v", F, 32);
    private final List<String> log = new ArrayList<>();
    private final ReplicaStats stats = new ReplicaStats();
    private final ReplicaApplier applier = new ReplicaApplier("v", "n2", volume, log::add, stats);

    /** Blocks of random data with the PI of their LBAs: {data, metadata}. */
    static byte[][] blocks(long lba, int n, long seed) {
        byte[] d = new byte[n * F.dataSize()];
        new Random(seed).nextBytes(d);
        byte[] m = new byte[n * F.metadataSize()];
        Pi.generate(PiContext.builder(F).checks(CheckFlags.ALL).initialRefTag(F.refTagOf(lba)).build(),
                ScatterList.wrap(d), ScatterList.wrap(m), n);
        return new byte[][] {d, m};
    }

    private static ReplicaCommand command(ReplicaCommand.Op op, long lba, int n, byte[][] dm) {
        Message m = ReplicaCommand.carrying(op, lba, n, ScatterList.wrap(dm[0]), ScatterList.wrap(dm[1]), false);
        return ReplicaCommand.decode(m.getContent());
    }

    private byte[][] stored(long lba, int n) throws Exception {
        byte[] d = new byte[n * F.dataSize()];
        byte[] m = new byte[n * F.metadataSize()];
        volume.read(lba, n, ScatterList.wrap(d), ScatterList.wrap(m));
        return new byte[][] {d, m};
    }

    private static ReplicaCommand compareAndWrite(long lba, int n, byte[] verify, byte[][] dm) {
        byte[] both = java.util.Arrays.copyOf(verify, 2 * n * F.dataSize());
        System.arraycopy(dm[0], 0, both, n * F.dataSize(), n * F.dataSize());
        Message m = ReplicaCommand.carrying(ReplicaCommand.Op.COMPARE_AND_WRITE, lba, n, ScatterList.wrap(both),
                ScatterList.wrap(dm[1]), false);
        return ReplicaCommand.decode(m.getContent());
    }

    /** A compare-and-write that compares the bits of each block's metadata {@code mask} selects too. */
    private static ReplicaCommand compareAndWrite(long lba, int n, byte[][] verify, byte[] mask, byte[][] dm) {
        byte[] both = java.util.Arrays.copyOf(verify[0], 2 * n * F.dataSize());
        System.arraycopy(dm[0], 0, both, n * F.dataSize(), n * F.dataSize());
        int ms = F.metadataSize();
        byte[] meta = java.util.Arrays.copyOf(dm[1], (2 * n + 1) * ms);
        System.arraycopy(verify[1], 0, meta, n * ms, n * ms);
        System.arraycopy(mask, 0, meta, 2 * n * ms, ms);
        Message m = ReplicaCommand.carrying(ReplicaCommand.Op.COMPARE_AND_WRITE, lba, n, ScatterList.wrap(both),
                ScatterList.wrap(meta), false);
        return ReplicaCommand.decode(m.getContent());
    }

    @Test
    void aCompareAndWriteWithMetadataComparesTheMaskedBitsBlockByBlockAfterTheData() throws Exception {
        byte[][] old = blocks(20, 3, 21);
        old[1][8 + 2] = 0x12; // the second block's application tag: the writer's, unchecked
        assertTrue(applier.apply(command(ReplicaCommand.Op.WRITE, 20, 3, old)).isDone());
        byte[] all = {-1, -1, -1, -1, -1, -1, -1, -1};
        byte[] noApp = {-1, -1, 0, 0, -1, -1, -1, -1};
        int ms = F.metadataSize();
        int dl = 3 * F.dataSize();

        byte[][] app = {old[0], old[1].clone()};
        app[1][ms + 2] ^= 0x40;
        ApplyOutcome o = applier.apply(compareAndWrite(20, 3, app, all, blocks(20, 3, 22)));
        assertEquals(dl + ms + 2, o.miscompareOffset(), "the second block's application tag: " + o.describe());
        byte[][] both = {old[0].clone(), app[1]};
        both[0][2 * F.dataSize() + 9] ^= 1;
        assertEquals(dl + ms + 2, applier.apply(compareAndWrite(20, 3, both, all, blocks(20, 3, 22))).miscompareOffset(),
                "block by block: the second block's tag before the third block's data");
        assertEquals(2 * F.dataSize() + 9, applier.apply(compareAndWrite(20, 3, both, noApp, blocks(20, 3, 22))).miscompareOffset(),
                "bits outside the mask are not compared");
        assertArrayEquals(old[0], stored(20, 3)[0], "nothing written after a difference");

        byte[][] next = blocks(20, 3, 23);
        assertTrue(applier.apply(compareAndWrite(20, 3, app, noApp, next)).isDone(), "equal under the mask");
        byte[][] s = stored(20, 3);
        assertArrayEquals(next[0], s[0]);
        assertArrayEquals(next[1], s[1], "the written blocks' metadata, not the compared or the mask");
        ReplicaCommand shortMask = ReplicaCommand.decode(ReplicaCommand.carrying(ReplicaCommand.Op.COMPARE_AND_WRITE, 20, 3,
                ScatterList.wrap(new byte[2 * dl]), ScatterList.wrap(new byte[2 * 3 * ms]), false).getContent());
        assertTrue(applier.misfit(shortMask) != null, "metadata to compare without its mask");
    }

    @Test
    void aCompareAndWriteWritesOnlyWhatItFoundEqualAndSaysWhereItDiffered() throws Exception {
        byte[][] old = blocks(6, 3, 11);
        assertTrue(applier.apply(command(ReplicaCommand.Op.WRITE, 6, 3, old)).isDone());
        byte[][] next = blocks(6, 3, 12);
        byte[] wrong = old[0].clone();
        wrong[F.dataSize() + 100] ^= 1; // the second block's byte 100
        ApplyOutcome o = applier.apply(compareAndWrite(6, 3, wrong, next));
        assertEquals(F.dataSize() + 100, o.miscompareOffset(), o.describe());
        assertEquals(o.miscompareOffset(), ApplyOutcome.decode(o.encode().getContent()).miscompareOffset(), "kept on its way back");
        assertArrayEquals(old[0], stored(6, 3)[0], "nothing written after a difference");

        assertTrue(applier.apply(compareAndWrite(6, 3, old[0], next)).isDone());
        assertEquals(-1, ApplyOutcome.done().miscompareOffset());
        byte[][] s = stored(6, 3);
        assertArrayEquals(next[0], s[0], "written once every byte was equal");
        assertArrayEquals(next[1], s[1]);

        byte[][] bad = blocks(6, 3, 13);
        bad[0][7] ^= 1; // its data no longer matches its guard
        assertEquals(ApplyOutcome.Code.REFUSED_PI, applier.apply(compareAndWrite(6, 3, next[0], bad)).code);
        assertArrayEquals(next[0], stored(6, 3)[0], "a write half that fails its check is refused, equal or not");

        // a stored copy that fails its check cannot be compared: nothing written (a scrub repairs it)
        byte[] rotten = next[0].clone();
        rotten[F.dataSize() * 2 + 3] ^= 4;
        volume.write(6, 3, ScatterList.wrap(rotten), ScatterList.wrap(next[1]), false);
        ApplyOutcome r = applier.apply(compareAndWrite(6, 3, rotten, blocks(6, 3, 14)));
        assertEquals(ApplyOutcome.Code.FAILED, r.code, r.describe());
        assertTrue(r.describe().contains("fails its check on this replica"), r.describe());
        assertArrayEquals(rotten, stored(6, 3)[0]);
        // checked against a version of the shared state other than the one applied here (0): refused
        byte[] both = java.util.Arrays.copyOf(rotten, 6 * F.dataSize());
        ReplicaCommand stale = ReplicaCommand.decode(ReplicaCommand.carrying(ReplicaCommand.Op.COMPARE_AND_WRITE, 6, 3,
                ScatterList.wrap(both), ScatterList.wrap(next[1]), false, new io.pistore.spi.WriteFence(9, 1, 0, 5)).getContent());
        assertTrue(applier.apply(stale).isViewChanged(), "a stale view is refused before anything is compared");
        ReplicaCommand half = ReplicaCommand.decode(ReplicaCommand.carrying(ReplicaCommand.Op.COMPARE_AND_WRITE, 6, 3,
                ScatterList.wrap(next[0]), ScatterList.wrap(next[1]), false).getContent());
        assertTrue(applier.misfit(half) != null, "the data of one copy of the blocks is not a compare and write");
    }

    private static ReplicaCommand numbered(ReplicaCommand c, long seq) {
        byte[] both = new byte[c.data.remaining()];
        c.data.duplicate().get(both);
        byte[] meta = new byte[c.metadata.remaining()];
        c.metadata.duplicate().get(meta);
        return ReplicaCommand.decode(ReplicaCommand.carrying(c.op, c.lba, c.blocks, ScatterList.wrap(both), ScatterList.wrap(meta),
                false, new io.pistore.spi.WriteFence(77, 1, seq, 0)).getContent());
    }

    @Test
    void aCompareAndWriteSentAgainAnswersWhatItsFirstCopyDidWithoutComparingAgain() throws Exception {
        byte[][] old = blocks(10, 2, 21);
        assertTrue(applier.apply(command(ReplicaCommand.Op.WRITE, 10, 2, old)).isDone());
        byte[][] next = blocks(10, 2, 22);
        ReplicaCommand won = numbered(compareAndWrite(10, 2, old[0], next), 1);
        assertTrue(applier.apply(won).isDone());
        assertTrue(applier.apply(won).isDone(), "the copy sent again answers done, although the blocks now differ");
        assertArrayEquals(next[0], stored(10, 2)[0]);

        byte[][] other = blocks(10, 2, 23);
        ReplicaCommand lost = numbered(compareAndWrite(10, 2, old[0], other), 2);
        long offset = java.util.Arrays.mismatch(next[0], old[0]);
        assertEquals(offset, applier.apply(lost).miscompareOffset());
        assertEquals(offset, applier.apply(lost).miscompareOffset(), "and a lost one what it answered");
        assertArrayEquals(next[0], stored(10, 2)[0]);
        assertEquals(2, stats.repeatedWrites());
    }

    @Test
    void aWriteThatPassesIsStored() throws Exception {
        byte[][] w = blocks(4, 3, 1);
        assertTrue(applier.apply(command(ReplicaCommand.Op.WRITE, 4, 3, w)).isDone());
        byte[][] s = stored(4, 3);
        assertArrayEquals(w[0], s[0]);
        assertArrayEquals(w[1], s[1]);
    }

    @Test
    void aWriteWhoseDataFailsItsCheckHereIsRefusedReportedAndStoresNothing() throws Exception {
        byte[][] before = stored(0, 32);
        byte[][] w = blocks(4, 3, 2);
        w[0][F.dataSize() + 17] ^= 0x20; // the second block's data changed after its PI was made
        ApplyOutcome o = applier.apply(command(ReplicaCommand.Op.WRITE, 4, 3, w));
        assertEquals(ApplyOutcome.Code.REFUSED_PI, o.code);
        assertEquals(5, o.lba);
        assertEquals(PiErrorKind.GUARD, o.error.kind());
        assertEquals(1, stats.refusedWrites());
        byte[][] after = stored(0, 32);
        assertArrayEquals(before[0], after[0], "no block of the refused write was stored");
        assertArrayEquals(before[1], after[1]);
        assertTrue(log.get(0).contains("volume v replica n2") && log.get(0).contains("lba=5 error=guard"), log.get(0));
        // The outcome survives its trip back to the writer.
        ApplyOutcome back = ApplyOutcome.decode(o.encode().getContent());
        assertEquals(o.describe(), back.describe());
    }

    @Test
    void theLeaderDoesNotCheckAgainWhatItCheckedAsTheWriteEntered() throws Exception {
        // A write the leader checked on entry is applied as it stands: the check is not repeated
        // (a corrupted copy here stands for "not checked again", which a counter would not show).
        byte[][] w = blocks(4, 2, 3);
        w[0][9] ^= 0x01;
        assertTrue(applier.apply(command(ReplicaCommand.Op.WRITE, 4, 2, w), true).isDone());
        assertEquals(0, stats.refusedWrites());
        assertArrayEquals(w[0], stored(4, 2)[0]);
        // Unchecked (a follower), the same write is refused.
        assertEquals(ApplyOutcome.Code.REFUSED_PI, applier.apply(command(ReplicaCommand.Op.WRITE, 4, 2, w), false).code);
        // Checked or not, a command that does not fit the volume fails.
        assertEquals(ApplyOutcome.Code.FAILED, applier.apply(command(ReplicaCommand.Op.WRITE, 31, 2, blocks(31, 2, 4)), true).code);
    }

    @Test
    void aType1WriteWhoseRefTagIsNotItsLbaIsRefused() throws Exception {
        byte[][] w = blocks(9, 1, 3); // PI made for LBA 9, sent to LBA 10
        ApplyOutcome o = applier.apply(command(ReplicaCommand.Op.WRITE, 10, 1, w));
        assertEquals(ApplyOutcome.Code.REFUSED_PI, o.code);
        assertEquals(PiErrorKind.REF_TAG, o.error.kind());
    }

    @Test
    void aRepairRewritesOnlyTheBlocksWhoseCopyHereFails() throws Exception {
        byte[][] old = blocks(2, 2, 4);
        applier.apply(command(ReplicaCommand.Op.WRITE, 2, 2, old));
        // Block 2 rots here; block 3 is written again, newer than the good copy the repair carries.
        byte[][] rotten = stored(2, 1);
        rotten[0][3] ^= 0x01;
        volume.write(2, 1, ScatterList.wrap(rotten[0]), ScatterList.wrap(rotten[1]), false);
        byte[][] newer = blocks(3, 1, 5);
        applier.apply(command(ReplicaCommand.Op.WRITE, 3, 1, newer));

        assertTrue(applier.apply(command(ReplicaCommand.Op.REPAIR, 2, 2, old)).isDone());
        byte[][] s = stored(2, 2);
        byte[] want = new byte[2 * F.dataSize()];
        System.arraycopy(old[0], 0, want, 0, F.dataSize());
        System.arraycopy(newer[0], 0, want, F.dataSize(), F.dataSize());
        assertArrayEquals(want, s[0], "block 2 repaired, block 3 keeps its newer data");
        assertEquals(1, stats.rewrittenBlocks());
        assertTrue(log.stream().anyMatch(l -> l.contains("volume v replica n2: repaired lba=2 error=guard")), log.toString());
    }

    @Test
    void aRepairCarryingABadCopyWritesNothing() throws Exception {
        byte[][] good = blocks(6, 1, 6);
        applier.apply(command(ReplicaCommand.Op.WRITE, 6, 1, good));
        byte[][] rotten = stored(6, 1);
        rotten[0][0] ^= 0x01;
        volume.write(6, 1, ScatterList.wrap(rotten[0]), ScatterList.wrap(rotten[1]), false);
        byte[][] badCopy = blocks(6, 1, 7);
        badCopy[0][1] ^= 0x01;
        assertEquals(ApplyOutcome.Code.REFUSED_PI, applier.apply(command(ReplicaCommand.Op.REPAIR, 6, 1, badCopy)).code);
        assertArrayEquals(rotten[0], stored(6, 1)[0], "never \"repaired\" with wrong data");
        assertEquals(0, stats.rewrittenBlocks());
    }

    @Test
    void aCommandThatDoesNotFitTheVolumeFailsWithoutTouchingIt() {
        ApplyOutcome o = applier.apply(ReplicaCommand.decode(
                ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, 31, 2, false).getContent()));
        assertEquals(ApplyOutcome.Code.FAILED, o.code);
        assertTrue(o.message.contains("does not fit a volume of 32 blocks"), o.message);
        assertEquals(1, stats.failedApplies());
    }

    @Test
    void aResizeGrowsTheReplicaOnceAndNeverShrinksIt() throws Exception {
        List<Long> grown = new ArrayList<>();
        ReplicaApplier growing = new ReplicaApplier("v", "n2", volume, log::add, stats, grown::add);
        assertTrue(growing.apply(command(ReplicaCommand.Op.RESIZE, 48)).isDone());
        assertEquals(List.of(48L), grown);
        assertTrue(growing.apply(command(ReplicaCommand.Op.RESIZE, 32)).isDone(), "its own size: done, as in a replay");
        assertTrue(growing.apply(command(ReplicaCommand.Op.RESIZE, 8)).isDone(), "a smaller count: nothing shrinks");
        assertEquals(List.of(48L), grown, "grown once");
        assertTrue(log.contains("volume v replica n2: grown from 32 to 48 blocks"), log.toString());
        ApplyOutcome cannot = applier.apply(command(ReplicaCommand.Op.RESIZE, 64));
        assertFalse(cannot.isDone(), "a replica without a way to grow fails the entry");
        assertTrue(cannot.describe().contains("this replica cannot grow"), cannot.describe());
        assertFalse(applier.apply(command(ReplicaCommand.Op.RESIZE, 0)).isDone(), "no volume of no blocks");
    }

    private static ReplicaCommand command(ReplicaCommand.Op op, long lba) {
        return ReplicaCommand.decode(ReplicaCommand.plain(op, lba, 0, false).getContent());
    }

    @Test
    void aSnapshotOfMoreBlocksGrowsTheReplicaBeforeItIsRestored(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        byte[][] w = blocks(20, 1, 9);
        java.nio.file.Path image = dir.resolve("image");
        try (io.pistore.engine.volume.VolumeStore bigger = io.pistore.engine.volume.VolumeStore.open(image)) {
            bigger.create("v", F, 24).write(20, 1, ScatterList.wrap(w[0]), ScatterList.wrap(w[1]), true);
            bigger.copyHomeFiles("v", dir.resolve("image.data"), dir.resolve("image.meta")); // as a snapshot holds them
        }
        try (io.pistore.engine.volume.VolumeStore replica = io.pistore.engine.volume.VolumeStore.open(dir.resolve("r"))) {
            replica.create("v", F, 16);
            new ReplicaFiles(replica, "v", dir.resolve("v.applied")).restoreFrom(dir.resolve("image.data"),
                    dir.resolve("image.meta"));
            assertEquals(24, replica.get("v").blockCount());
            byte[] d = new byte[F.dataSize()];
            byte[] m = new byte[F.metadataSize()];
            replica.get("v").read(20, 1, ScatterList.wrap(d), ScatterList.wrap(m));
            assertArrayEquals(w[0], d);
            assertArrayEquals(w[1], m);
        }
    }
}
