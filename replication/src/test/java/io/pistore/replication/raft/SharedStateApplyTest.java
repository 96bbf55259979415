package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.MemoryVolume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.engine.volume.ViewChangedException;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.SharedVolumeState.Versioned;
import io.pistore.spi.WriteFence;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.server.storage.StorageImplUtils;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.util.SizeInBytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The volume's shared state on one replica, without Ratis: a change set or not by the version it
 * expects, its version the entry's index; a write checked against another version refused before
 * its fence counts and before anything is written; the state through a snapshot's files.
 */
class SharedStateApplyTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    @TempDir
    Path dir;

    private final MemoryVolume volume = new MemoryVolume("v", F, 32);
    private final List<String> log = new ArrayList<>();
    private final ReplicaStats stats = new ReplicaStats();
    private final SharedStateBoard board = new SharedStateBoard();
    private final ReplicaApplier applier = new ReplicaApplier("v", "n2", volume, log::add, stats, null, board);
    private final List<Versioned> heard = new ArrayList<>();

    private static ReplicaCommand change(long expected, long nonce, String value) {
        return ReplicaCommand.decode(ReplicaCommand.sharedState(expected, nonce, value.getBytes(StandardCharsets.UTF_8))
                .getContent());
    }

    private static ReplicaCommand write(long lba, byte[][] dm, WriteFence fence) {
        return ReplicaCommand.decode(ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, lba, dm[0].length / F.dataSize(),
                ScatterList.wrap(dm[0]), ScatterList.wrap(dm[1]), false, fence).getContent());
    }

    /** Applies {@code c} as the command of log entry {@code index}. */
    private ApplyOutcome apply(long index, ReplicaCommand c) {
        applier.entering(index);
        return applier.apply(c);
    }

    private byte[] stored(long lba, int n) throws Exception {
        byte[] d = new byte[n * F.dataSize()];
        volume.read(lba, n, ScatterList.wrap(d), ScatterList.wrap(new byte[n * F.metadataSize()]));
        return d;
    }

    private static String text(Versioned v) {
        return new String(v.value(), StandardCharsets.UTF_8);
    }

    @Test
    void aChangeIsSetOnlyFromTheVersionItExpectsAndTakesItsEntrysIndex() {
        board.watch(heard::add);
        assertEquals(0, board.current().version(), "never set");
        ApplyOutcome first = apply(5, change(0, 11, "a"));
        assertTrue(first.isShared() && first.sharedSet(), first.describe());
        assertEquals(5, first.sharedVersion());
        assertEquals(5, board.current().version());
        assertEquals("a", text(board.current()));

        ApplyOutcome late = apply(6, change(0, 12, "b")); // another port's change, checked against version 0
        assertTrue(late.isShared() && !late.sharedSet(), late.describe());
        assertEquals(5, late.sharedVersion(), "the version that came first");
        assertEquals("a", text(board.current()), "nothing changed");

        ApplyOutcome again = apply(7, change(0, 11, "a")); // the first change's entry sent again
        assertTrue(again.sharedSet(), "a second copy of the change set is answered set");
        assertEquals(5, again.sharedVersion());

        ApplyOutcome next = apply(9, change(5, 13, "c"));
        assertTrue(next.sharedSet());
        assertEquals(9, board.current().version());
        // a second change in the same entry that expects its index is not set: versions only grow
        assertFalse(apply(9, change(9, 14, "d")).sharedSet());
        assertEquals(List.of(5L, 9L), heard.stream().map(Versioned::version).toList(), "watchers hear each change set, once");
        assertEquals("c", text(heard.get(1)));
        // the outcomes travel back to the writer as they are
        for (ApplyOutcome o : List.of(first, late)) {
            ApplyOutcome back = ApplyOutcome.decode(o.encode().getContent());
            assertTrue(back.isShared());
            assertEquals(o.sharedSet(), back.sharedSet());
            assertEquals(o.sharedVersion(), back.sharedVersion());
        }
        assertFalse(apply(10, ReplicaCommand.decode(ReplicaCommand.plain(ReplicaCommand.Op.SHARED_STATE, 9, 0, false)
                .getContent())).isShared(), "a change without its nonce fails");
    }

    @Test
    void aCheckSetsNothingAndAnswersTheVersionWhereItStands() throws Exception {
        apply(3, change(0, 1, "x"));
        ApplyOutcome check = apply(4, ReplicaCommand.decode(ReplicaCommand.sharedStateCheck().getContent()));
        assertTrue(check.isShared(), check.describe());
        assertFalse(check.sharedSet(), "a check sets nothing");
        assertEquals(3, check.sharedVersion(), "the version at its place in the log");
        assertTrue(apply(5, change(3, 2, "y")).sharedSet(), "the version did not move: the next change from it is set");
        ApplyOutcome bad = apply(6, ReplicaCommand.decode(ReplicaCommand.plain(ReplicaCommand.Op.SHARED_STATE, -2, 0, false)
                .getContent()));
        assertFalse(bad.isShared(), "an expected version below -1 is refused: " + bad.describe());
    }

    @Test
    void aWriteOfAnotherViewIsRefusedBeforeItsFenceCountsAndWritesNothing() throws Exception {
        apply(3, change(0, 1, "x"));
        byte[][] first = ReplicaApplierTest.blocks(4, 2, 1);
        assertTrue(apply(4, write(4, first, new WriteFence(42, 1, 1, 4))).isDone(), "the current view");

        byte[][] stale = ReplicaApplierTest.blocks(4, 2, 2);
        ApplyOutcome o = apply(5, write(4, stale, new WriteFence(77, 5, 1, 3)));
        assertTrue(o.isViewChanged(), o.describe());
        assertTrue(o.describe().contains("version 2") && o.describe().contains("version 3"), o.describe());
        assertArrayEquals(first[0], stored(4, 2), "nothing written");
        assertEquals(0, applier.fences().highest(77), "the fence table did not admit it");
        ApplyOutcome zeroes = apply(6, ReplicaCommand.decode(ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, 4, 2, false,
                new WriteFence(77, 5, 2, 5)).getContent()));
        assertTrue(zeroes.isViewChanged(), "a later version than the replica's is another view too");
        ApplyOutcome dealloc = apply(7, ReplicaCommand.decode(ReplicaCommand.plain(ReplicaCommand.Op.DEALLOCATE, 4, 2, false,
                new WriteFence(77, 5, 3, 1)).getContent()));
        assertTrue(dealloc.isViewChanged());
        assertArrayEquals(first[0], stored(4, 2));
        assertEquals(3, stats.viewChangedWrites());
        // passed over at a restart, such a write moves no fence either
        applier.admitOnly(write(4, stale, new WriteFence(77, 6, 1, 3)));
        assertEquals(0, applier.fences().highest(77));

        byte[][] unchecked = ReplicaApplierTest.blocks(4, 2, 3);
        assertTrue(apply(8, write(4, unchecked, new WriteFence(77, 1, 1))).isDone(), "view 0: applied whatever the version");
        assertArrayEquals(unchecked[0], stored(4, 2));
        assertTrue(apply(9, write(4, first, null)).isDone(), "no fence at all");

        // the refusal travels back to the writer, who fails with a ViewChangedException
        ApplyOutcome back = ApplyOutcome.decode(o.encode().getContent());
        assertTrue(back.isViewChanged());
        assertEquals(o.describe(), back.describe());
        assertTrue(ApplyOutcome.decodeAll(ApplyOutcome.encodeAll(List.of(ApplyOutcome.done(), o)).getContent(), 2)
                .get(1).isViewChanged());
        assertInstanceOf(ViewChangedException.class, back.failure("volume v: write lba=4 " + back.describe()));
    }

    @Test
    void eachCommandOfABatchIsCheckedAgainstTheVersionBeforeIt() throws Exception {
        byte[][] before = ReplicaApplierTest.blocks(8, 1, 4);
        byte[][] after = ReplicaApplierTest.blocks(8, 1, 5);
        List<ReplicaCommand> batch = ReplicaCommand.decodeAll(ReplicaCommand.batch(List.of(
                ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, 8, 1, ScatterList.wrap(before[0]), ScatterList.wrap(before[1]),
                        false, new WriteFence(9, 1, 1, 0)).getContent(),
                ReplicaCommand.sharedState(0, 3, new byte[] {1}).getContent(),
                ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, 8, 1, ScatterList.wrap(after[0]), ScatterList.wrap(after[1]),
                        false, new WriteFence(9, 1, 2).withView(13)).getContent())).getContent());
        applier.entering(12);
        List<ApplyOutcome> outcomes = batch.stream().map(applier::apply).toList();
        assertTrue(outcomes.get(0).isDone());
        assertTrue(outcomes.get(1).sharedSet());
        assertTrue(outcomes.get(2).isDone(), "checked against the version the change before it in the entry set");
        assertArrayEquals(after[0], stored(8, 1));
    }

    @Test
    void theStateSurvivesASnapshotsFilesAndARestoreShowsIt() throws Exception {
        apply(21, change(0, 8, "reservations"));
        RaftStorage raft = StorageImplUtils.newRaftStorage(dir.resolve("raft").toFile(), SizeInBytes.valueOf(0),
                RaftStorage.StartupOption.FORMAT, RaftServerConfigKeys.Log.CorruptionPolicy.EXCEPTION);
        raft.initialize();
        try (VolumeStore store = VolumeStore.open(dir.resolve("replicas"))) {
            store.create("v", F, 8);
            VolumeSnapshots snapshots = new VolumeSnapshots();
            snapshots.init(raft);
            ReplicaFiles files = new ReplicaFiles(store, "v", dir.resolve("v.applied"));
            snapshots.take(TermIndex.valueOf(1, 22), files, applier.fences().encode(), applier.sharedState().encode(), () -> 22);
            VolumeSnapshots found = new VolumeSnapshots(); // as a restarted peer finds it
            found.init(raft);
            FileListSnapshotInfo s = found.load();
            assertTrue(s.getFiles().stream().anyMatch(f -> f.getPath().getFileName().toString().equals("shared")),
                    "the leader ships the file with the snapshot: " + s.getFiles());

            SharedStateBoard other = new SharedStateBoard();
            other.watch(heard::add);
            ReplicaApplier restored = new ReplicaApplier("v", "n3", volume, log::add, new ReplicaStats(), null, other);
            restored.sharedState().restore(VolumeSnapshots.shared(s));
            assertEquals(21, other.current().version());
            assertEquals("reservations", text(other.current()));
            assertEquals(List.of(21L), heard.stream().map(Versioned::version).toList(), "a restore that changes it is heard");
            restored.entering(30);
            assertFalse(restored.apply(change(0, 9, "late")).sharedSet(), "decides as the replica it was copied from");
            restored.sharedState().restore(null); // a snapshot of a build that kept none
            assertEquals(0, restored.sharedState().version());
            assertEquals(21, other.current().version(), "what the peer showed does not go back");
        } finally {
            raft.close();
        }
    }

    @Test
    void aWaitForAVersionEndsWhenItIsShownOrAfterItsTime() throws Exception {
        CompletableFuture<Versioned> soon = board.await(4, 60_000, "test");
        CompletableFuture<Versioned> never = board.await(100, 1, "volume v: waiting for version 100");
        apply(4, change(0, 2, "y"));
        assertEquals(4, soon.get(30, TimeUnit.SECONDS).version());
        assertEquals(4, board.await(3, 1, "test").getNow(null).version(), "an older version at once");
        java.util.concurrent.ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.ExecutionException.class, () -> never.get(30, TimeUnit.SECONDS));
        assertInstanceOf(java.io.IOException.class, e.getCause());
        assertTrue(e.getCause().getMessage().contains("volume v: waiting for version 100"), e.getCause().getMessage());
    }
}
