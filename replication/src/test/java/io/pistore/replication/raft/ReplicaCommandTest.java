package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.ScatterList;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;

/** Commands and batches of commands as the log carries them, decoded on the leader and on a follower. */
class ReplicaCommandTest {
    private static ByteString write(long lba, int blocks, long seed) {
        byte[] d = new byte[blocks * 512];
        byte[] m = new byte[blocks * 8];
        Random r = new Random(seed);
        r.nextBytes(d);
        r.nextBytes(m);
        return ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, lba, blocks, ScatterList.wrap(d), ScatterList.wrap(m), seed % 2 == 0)
                .getContent();
    }

    private static byte[] bytesOf(ByteBuffer b) {
        if (b == null) {
            return null; // a command that carries nothing
        }
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    private static void assertSameCommands(List<ByteString> sent, List<ReplicaCommand> got) {
        assertEquals(sent.size(), got.size());
        for (int i = 0; i < sent.size(); i++) {
            ReplicaCommand want = ReplicaCommand.decode(ByteString.copyFrom(sent.get(i).toByteArray()));
            ReplicaCommand c = got.get(i);
            assertEquals(want.toString(), c.toString());
            assertArrayEquals(bytesOf(want.data), bytesOf(c.data));
            assertArrayEquals(bytesOf(want.metadata), bytesOf(c.metadata));
        }
    }

    @Test
    void aBatchDecodesToItsCommandsOnTheLeaderAndOnAFollower() {
        List<ByteString> cmds = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            cmds.add(i == 3 ? ReplicaCommand.plain(ReplicaCommand.Op.FLUSH, 0, 0, false).getContent() : write(i * 8L, 1 + i, i));
        }
        ByteString rope = ReplicaCommand.batch(cmds).getContent(); // the leader's: a rope of the commands
        assertTrue(ReplicaCommand.isBatch(rope));
        assertSameCommands(cmds, ReplicaCommand.decodeAll(rope));
        ByteString flat = ByteString.copyFrom(rope.toByteArray()); // a follower's: parsed from the wire
        assertSameCommands(cmds, ReplicaCommand.decodeAll(flat));
        assertTrue(ReplicaCommand.decodeAll(flat).get(0).data.hasArray());
    }

    @Test
    void aMalformedBatchIsRefusedWithItsReason() {
        ByteString ok = ReplicaCommand.batch(List.of(write(0, 1, 1), write(1, 1, 2))).getContent();
        IllegalArgumentException cut = assertThrows(IllegalArgumentException.class,
                () -> ReplicaCommand.decodeAll(ok.substring(0, ok.size() - 10)));
        assertTrue(cut.getMessage().contains("carries"), cut.getMessage());
        IllegalArgumentException more = assertThrows(IllegalArgumentException.class,
                () -> ReplicaCommand.decodeAll(ok.concat(ByteString.copyFrom(new byte[3]))));
        assertTrue(more.getMessage().contains("carries"), more.getMessage());
        ByteString nested = ReplicaCommand.batch(List.of(ok)).getContent();
        IllegalArgumentException in = assertThrows(IllegalArgumentException.class, () -> ReplicaCommand.decodeAll(nested));
        assertTrue(in.getMessage().contains("batch inside a batch"), in.getMessage());
        IllegalArgumentException shortHeader = assertThrows(IllegalArgumentException.class,
                () -> ReplicaCommand.decodeAll(ok.substring(0, 10)));
        assertTrue(shortHeader.getMessage().contains("shorter than its header"), shortHeader.getMessage());
    }

    @Test
    void aSharedStateChangeCarriesItsExpectedVersionNonceAndValue() {
        byte[] value = new byte[io.pistore.spi.SharedVolumeState.MAX_BYTES];
        new Random(3).nextBytes(value);
        ByteString sent = ReplicaCommand.sharedState(41, 0x77, value).getContent();
        for (ReplicaCommand c : List.of(ReplicaCommand.decode(sent),
                ReplicaCommand.decodeAll(ReplicaCommand.batch(List.of(write(0, 1, 1), sent)).getContent()).get(1))) {
            assertEquals(ReplicaCommand.Op.SHARED_STATE, c.op);
            assertEquals(41, c.lba);
            ByteBuffer d = c.data.duplicate();
            assertEquals(0x77, d.getLong());
            assertArrayEquals(value, bytesOf(d));
            assertEquals("SHARED_STATE expected=41 bytes=" + value.length, c.toString());
        }
        assertThrows(IllegalArgumentException.class, () -> ReplicaCommand.sharedState(0, 1, new byte[value.length + 1]));
        assertEquals(8, sent.byteAt(0), "its code in the log");
    }

    @Test
    void aWriteCarriesTheViewItWasCheckedAgainstAndAnEntryWithoutOneStillDecodes() {
        byte[] d = new byte[512];
        byte[] m = new byte[8];
        new Random(9).nextBytes(d);
        io.pistore.spi.WriteFence withSeq = new io.pistore.spi.WriteFence(5, 2, 7, 19);
        ReplicaCommand c = ReplicaCommand.decode(ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, 3, 1, ScatterList.wrap(d),
                ScatterList.wrap(m), true, withSeq).getContent());
        assertEquals(5, c.fenceKey);
        assertEquals(2, c.fenceEpoch);
        assertEquals(7, c.fenceSeq);
        assertEquals(19, c.fenceView);
        assertArrayEquals(d, bytesOf(c.data), "the data after the longer header");
        assertArrayEquals(m, bytesOf(c.metadata));
        assertTrue(c.toString().endsWith(" #7 view 19"), c.toString());
        ReplicaCommand z = ReplicaCommand.decode(ReplicaCommand.plain(ReplicaCommand.Op.WRITE_ZEROES, 3, 4, false,
                new io.pistore.spi.WriteFence(5, 2, 0, 20)).getContent());
        assertEquals(0, z.fenceSeq, "a view without a sequence number");
        assertEquals(20, z.fenceView);

        // An entry written before views were carried: fence and sequence number, nothing after them.
        ByteBuffer old = ByteBuffer.allocate(ReplicaCommand.HEADER_BYTES + 24 + d.length + m.length);
        old.put((byte) 1).put((byte) (2 | 4)).putLong(3).putInt(1).putInt(d.length).putInt(m.length)
                .putLong(5).putLong(2).putLong(7).put(d).put(m);
        ReplicaCommand o = ReplicaCommand.decode(ByteString.copyFrom(old.array()));
        assertEquals(7, o.fenceSeq);
        assertEquals(0, o.fenceView, "no view: applied whatever the shared state's version");
        assertArrayEquals(d, bytesOf(o.data));
        assertEquals(ReplicaCommand.decode(ReplicaCommand.carrying(ReplicaCommand.Op.WRITE, 3, 1, ScatterList.wrap(d),
                ScatterList.wrap(m), false, new io.pistore.spi.WriteFence(5, 2, 7)).getContent()).toString(), o.toString());

        ByteBuffer noFence = ByteBuffer.allocate(ReplicaCommand.HEADER_BYTES + 8);
        noFence.put((byte) 2).put((byte) 8).putLong(3).putInt(1).putInt(0).putInt(0).putLong(4);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> ReplicaCommand.decode(ByteString.copyFrom(noFence.array())));
        assertTrue(e.getMessage().contains("view, but no fence"), e.getMessage());
    }
}
