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
}
