package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.MemoryVolume;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.WriteFence;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The replica side of write fencing without Ratis: the table of highest epochs per host stream, its
 * bound and its file, the fence in a log command, and the applier refusing a stale copy.
 */
class WriteFencesTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    @TempDir
    Path dir;

    @Test
    void aLowerEpochOfAStreamIsRefusedAndTheSameOrAHigherOneAdmitted() {
        WriteFences t = new WriteFences();
        assertTrue(t.admit(7, 2));
        assertFalse(t.admit(7, 1), "epoch 1 after epoch 2 of the same stream");
        assertEquals(2, t.highest(7));
        assertTrue(t.admit(7, 2), "the current connection's writes go on");
        assertTrue(t.admit(7, 5));
        assertFalse(t.admit(7, 4));
        assertTrue(t.admit(8, 1), "another stream is not fenced by this one");
        assertEquals(0, t.highest(9));
    }

    /** Randomized against the plain rule: refused exactly when a higher epoch of the stream was admitted. */
    @Test
    void matchesAPlainMapOnRandomHistories() {
        Random r = new Random(11);
        for (int round = 0; round < 50; round++) {
            WriteFences t = new WriteFences();
            Map<Long, Long> plain = new HashMap<>();
            for (int i = 0; i < 400; i++) {
                long key = 1 + r.nextInt(6);
                long epoch = 1 + r.nextInt(8);
                boolean want = plain.getOrDefault(key, 0L) <= epoch;
                if (want) {
                    plain.merge(key, epoch, Math::max);
                }
                assertEquals(want, t.admit(key, epoch), "round " + round + " op " + i + " key " + key + " epoch " + epoch);
            }
        }
    }

    @Test
    void theLeastRecentlyAdmittedStreamIsForgottenFirst() {
        WriteFences t = new WriteFences(3);
        t.admit(1, 4);
        t.admit(2, 4);
        t.admit(3, 4);
        t.admit(1, 4); // stream 1 used again: 2 is now the least recent
        t.admit(4, 1);
        assertEquals(3, t.size());
        assertEquals(0, t.highest(2), "stream 2 forgotten");
        assertEquals(4, t.highest(1));
        assertTrue(t.admit(2, 1), "a forgotten stream is unfenced");
    }

    @Test
    void theTableSurvivesItsFileWithItsOrder() throws IOException {
        WriteFences t = new WriteFences(3);
        t.admit(1, 2);
        t.admit(2, 3);
        t.admit(3, 4);
        t.admit(1, 2);
        Path f = dir.resolve("fences");
        Files.write(f, t.encode());
        WriteFences back = new WriteFences(3);
        back.admit(99, 1); // replaced, not merged
        back.restore(f);
        assertEquals(0, back.highest(99));
        assertEquals(3, back.highest(2));
        assertFalse(back.admit(3, 3));
        back.admit(5, 1); // the least recent, as in the original, is stream 2
        assertEquals(0, back.highest(2));
        assertEquals(2, back.highest(1));

        back.restore(null);
        assertEquals(0, back.size(), "no snapshot: an empty table");
        Files.write(f, new byte[] {0, 0, 0, 2, 1});
        IOException e = assertThrows(IOException.class, () -> back.restore(f));
        assertTrue(e.getMessage().contains("says 2 streams but holds 1 bytes"), e.getMessage());
    }

    private static ReplicaCommand write(long lba, byte[][] dm, WriteFence fence) {
        Message m = ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, lba, dm[0].length / F.dataSize(),
                ScatterList.wrap(dm[0]), ScatterList.wrap(dm[1]), true, fence);
        return ReplicaCommand.decode(m.getContent());
    }

    @Test
    void aCommandCarriesItsFenceThroughTheLogAndABatch() {
        byte[][] w = ReplicaApplierTest.blocks(4, 2, 1);
        ReplicaCommand c = write(4, w, new WriteFence(-5, 3));
        assertEquals(-5, c.fenceKey);
        assertEquals(3, c.fenceEpoch);
        assertTrue(c.fua);
        assertArrayEquals(w[0], bytes(c.dataList()));
        assertArrayEquals(w[1], bytes(c.metadataList()));
        ReplicaCommand z = ReplicaCommand.decode(ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, 9, 3, false,
                new WriteFence(12, 1)).getContent());
        assertEquals(12, z.fenceKey);
        assertFalse(z.fua);
        ReplicaCommand plain = write(4, w, null);
        assertEquals(0, plain.fenceKey, "no fence: none carried");

        List<ByteString> parts = List.of(
                ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, 4, 2, ScatterList.wrap(w[0]), ScatterList.wrap(w[1]),
                        false, new WriteFence(1, 2)).getContent(),
                ReplicaCommand.plain(ReplicaCommand.Op.FLUSH, 0, 0, false).getContent());
        List<ReplicaCommand> all = ReplicaCommand.decodeAll(ReplicaCommand.batch(parts).getContent());
        assertEquals(2, all.get(0).fenceEpoch);
        assertEquals(0, all.get(1).fenceKey);
    }

    @Test
    void aCommandWhoseFenceIsCutShortOrZeroIsRejected() {
        byte[] h = ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, 0, 1, false).getContent().toByteArray();
        h[1] = 2; // says a fence follows, but nothing does
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ReplicaCommand.decode(ByteString.copyFrom(h)));
        assertTrue(e.getMessage().contains("fence"), e.getMessage());
        byte[] z = ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, 0, 1, false, new WriteFence(1, 1))
                .getContent().toByteArray();
        java.util.Arrays.fill(z, 22, 30, (byte) 0); // key 0
        e = assertThrows(IllegalArgumentException.class, () -> ReplicaCommand.decode(ByteString.copyFrom(z)));
        assertTrue(e.getMessage().contains("carries fence 0/1"), e.getMessage());
    }

    private static byte[] bytes(ScatterList l) {
        byte[] b = new byte[(int) l.length()];
        l.read(0, b, 0, b.length);
        return b;
    }

    @Test
    void theApplierRefusesAStaleCopyStoresNothingAndSaysWhy() throws Exception {
        MemoryVolume v = new MemoryVolume("v", F, 32);
        List<String> log = new ArrayList<>();
        ReplicaStats stats = new ReplicaStats();
        ReplicaApplier a = new ReplicaApplier("v", "n2", v, log::add, stats);
        byte[][] newer = ReplicaApplierTest.blocks(4, 2, 1);
        byte[][] stale = ReplicaApplierTest.blocks(4, 2, 2);
        assertTrue(a.apply(write(4, newer, new WriteFence(42, 2))).isDone());
        ApplyOutcome o = a.apply(write(4, stale, new WriteFence(42, 1)));
        assertTrue(o.isFenced(), o.describe());
        assertEquals(1, stats.fencedWrites());
        assertTrue(log.get(0).contains("volume v replica n2") && log.get(0).contains("stale copy")
                && log.get(0).contains("epoch 2"), log.get(0));
        ApplyOutcome z = a.apply(ReplicaCommand.decode(ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, 4, 2, false,
                new WriteFence(42, 1)).getContent()));
        assertTrue(z.isFenced(), "a stale zero write too");
        byte[] d = new byte[2 * F.dataSize()];
        v.read(4, 2, ScatterList.wrap(d), ScatterList.wrap(new byte[2 * F.metadataSize()]));
        assertArrayEquals(newer[0], d, "the newer write's data stays");
        // the outcome travels back to the writer as what it is
        ApplyOutcome back = ApplyOutcome.decode(o.encode().getContent());
        assertTrue(back.isFenced());
        assertEquals(o.describe(), back.describe());
        assertTrue(ApplyOutcome.decodeAll(ApplyOutcome.encodeAll(List.of(ApplyOutcome.done(), o)).getContent(), 2)
                .get(1).isFenced());
        // a command that does not fit the volume is failed before its fence counts, applied or passed over
        ReplicaCommand outside = ReplicaCommand.decode(ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, 40, 1, false,
                new WriteFence(43, 9)).getContent());
        a.admitOnly(outside);
        assertFalse(a.apply(outside).isDone());
        assertEquals(0, a.fences().highest(43));
        a.admitOnly(write(4, newer, new WriteFence(42, 3)));
        assertEquals(3, a.fences().highest(42), "an entry passed over at a restart still moves the table");
    }

    /**
     * The case the linearizability check across network cuts found: a write's first copy applied,
     * another host's write to the same blocks, then the first host's second copy (sent again on its
     * new connection, a higher epoch). Applied again, the second copy would undo the other write.
     */
    @Test
    void aCopyOfAWriteAppliedBeforeIsAnsweredDoneAndUndoesNothing() throws Exception {
        MemoryVolume v = new MemoryVolume("v", F, 32);
        ReplicaStats stats = new ReplicaStats();
        ReplicaApplier a = new ReplicaApplier("v", "n2", v, s -> { }, stats);
        byte[][] first = ReplicaApplierTest.blocks(4, 2, 1);
        byte[][] other = ReplicaApplierTest.blocks(4, 2, 2);
        assertTrue(a.apply(write(4, first, new WriteFence(42, 1, 7))).isDone());
        assertTrue(a.apply(write(4, other, new WriteFence(43, 1, 1))).isDone(), "another host's write");
        ApplyOutcome again = a.apply(write(4, first, new WriteFence(42, 2, 7)));
        assertTrue(again.isDone(), again.describe());
        assertEquals(1, stats.repeatedWrites());
        byte[] d = new byte[2 * F.dataSize()];
        v.read(4, 2, ScatterList.wrap(d), ScatterList.wrap(new byte[2 * F.metadataSize()]));
        assertArrayEquals(other[0], d, "the other host's write stays");
        assertTrue(a.apply(write(4, first, new WriteFence(42, 2, 8))).isDone(), "the host's next write");
        v.read(4, 2, ScatterList.wrap(d), ScatterList.wrap(new byte[2 * F.metadataSize()]));
        assertArrayEquals(first[0], d, "a new number is a new write");
        assertEquals(1, stats.repeatedWrites());
        // an entry passed over at a restart records its number too
        ReplicaApplier b = new ReplicaApplier("v", "n2", v, s -> { }, new ReplicaStats());
        b.admitOnly(write(4, first, new WriteFence(42, 1, 7)));
        assertTrue(b.apply(write(4, other, new WriteFence(42, 2, 7))).isDone());
        v.read(4, 2, ScatterList.wrap(d), ScatterList.wrap(new byte[2 * F.metadataSize()]));
        assertArrayEquals(first[0], d, "the copy of a write passed over is not applied");
    }

    @Test
    void sequenceNumbersMatchAPlainSetWithinTheWindow() {
        Random r = new Random(17);
        for (int round = 0; round < 40; round++) {
            WriteFences t = new WriteFences();
            Map<Long, java.util.TreeSet<Long>> plain = new HashMap<>();
            long[] next = new long[4];
            for (int i = 0; i < 3000; i++) {
                int k = r.nextInt(4);
                long key = k + 1;
                java.util.TreeSet<Long> seen = plain.computeIfAbsent(key, x -> new java.util.TreeSet<>());
                long seq;
                if (!seen.isEmpty() && r.nextInt(3) == 0) {
                    // a copy sent again, or a number passed over, near the top (sometimes past the window)
                    seq = Math.max(1, seen.last() - r.nextInt(WriteFences.WINDOW + 200));
                } else {
                    next[k] += 1 + r.nextInt(r.nextInt(50) == 0 ? 3 * WriteFences.WINDOW : 3);
                    seq = next[k];
                }
                long top = seen.isEmpty() ? 0 : seen.last();
                boolean within = seen.isEmpty() || seq > top || top - seq < WriteFences.WINDOW;
                boolean want = !(within && seen.contains(seq));
                if (want) {
                    seen.add(seq);
                }
                t.admit(key, 1);
                assertEquals(want, t.admitSeq(key, seq), "round " + round + " op " + i + " key " + key + " seq " + seq
                        + " top " + top);
            }
        }
    }

    @Test
    void windowsSurviveTheFileAndATableWithoutThemStillReads() throws IOException {
        WriteFences t = new WriteFences();
        t.admit(1, 2);
        t.admit(2, 1);
        assertTrue(t.admitSeq(2, 5000));
        assertTrue(t.admitSeq(2, 4990));
        Path f = dir.resolve("fences");
        Files.write(f, t.encode());
        WriteFences back = new WriteFences();
        back.restore(f);
        assertEquals(2, back.highest(1));
        assertFalse(back.admitSeq(2, 5000), "a number admitted before the snapshot");
        assertFalse(back.admitSeq(2, 4990));
        assertTrue(back.admitSeq(2, 4995));
        assertTrue(back.admitSeq(1, 1), "stream 1 carried none");

        WriteFences epochsOnly = new WriteFences();
        epochsOnly.admit(3, 4);
        Files.write(f, epochsOnly.encode()); // as a build before numbers wrote it
        back.restore(f);
        assertEquals(4, back.highest(3));
        assertTrue(back.admitSeq(3, 9));
        byte[] bad = java.util.Arrays.copyOf(t.encode(), t.encode().length - 8);
        Files.write(f, bad);
        IOException e = assertThrows(IOException.class, () -> back.restore(f));
        assertTrue(e.getMessage().contains("windows but holds"), e.getMessage());
    }

    @Test
    void aCommandCarriesItsSequenceNumberAndRefusesOneWithoutAFence() {
        byte[][] w = ReplicaApplierTest.blocks(4, 2, 1);
        ReplicaCommand c = write(4, w, new WriteFence(-5, 3, 77));
        assertEquals(77, c.fenceSeq);
        assertEquals(3, c.fenceEpoch);
        assertArrayEquals(w[0], bytes(c.dataList()));
        assertArrayEquals(w[1], bytes(c.metadataList()));
        assertEquals(0, write(4, w, new WriteFence(-5, 3)).fenceSeq, "none carried");
        ReplicaCommand z = ReplicaCommand.decode(ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, 9, 3, false,
                new WriteFence(12, 1, 3)).getContent());
        assertEquals(3, z.fenceSeq);
        byte[] h = ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, 0, 1, false).getContent().toByteArray();
        h[1] = 4; // says a number follows, without a fence
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ReplicaCommand.decode(ByteString.copyFrom(h)));
        assertTrue(e.getMessage().contains("sequence number, but no fence"), e.getMessage());
    }
}
