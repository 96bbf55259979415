package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.volume.ForwardingVolume;
import io.pistore.engine.volume.MemoryVolume;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A READ reaches the volume with the time its command PDU had arrived whole at the target (after the
 * initiator sent it, before the target answered), and READs that arrived in one socket read carry the
 * same time: a replicated volume then shares one read index among them. Writes carry none.
 */
class IscsiReadReceiveTimeTest extends IscsiLoopbackFixture {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    /** A volume that remembers the receive time of each read. */
    static final class Recording extends ForwardingVolume {
        final List<long[]> reads = new CopyOnWriteArrayList<>(); // {lba, receivedNanos}, from the target's threads
        final List<Long> plainReads = new CopyOnWriteArrayList<>();

        Recording() {
            super(new MemoryVolume("r", F, 64));
        }

        @Override public void read(long lba, int n, ScatterList d, ScatterList m) throws IOException {
            plainReads.add(lba);
            super.read(lba, n, d, m);
        }

        @Override public void read(long lba, int n, ScatterList d, ScatterList m, long receivedNanos) throws IOException {
            reads.add(new long[] {lba, receivedNanos});
            super.read(lba, n, d, m);
        }
    }

    private final Recording volume = new Recording();

    @Override
    void createVolumes() {
        store.attach(volume);
    }

    /** READ(10) of one block at {@code lba}, as a 10-byte CDB. */
    private static byte[] read10(long lba) {
        return Arrays.copyOf(cdb10(0x28, lba, 1), 10);
    }

    @Test
    void aReadCarriesATimeBetweenItsSendingAndItsAnswer() throws IOException {
        try (IscsiTestInitiator c = login("r")) {
            byte[] d = block(3);
            byte[] w = Arrays.copyOf(cdb10(0x2A, 5, 1), 10);
            assertEquals(GOOD, c.command(w, d, 512, 512, false).status());
            for (int i = 0; i < 5; i++) {
                long before = System.nanoTime();
                IscsiTestInitiator.Result r = c.command(read10(5), new byte[0], 0, 512, true);
                long after = System.nanoTime();
                assertEquals(GOOD, r.status());
                assertTrue(Arrays.equals(d, r.dataIn()), "the block written");
                long at = volume.reads.get(volume.reads.size() - 1)[1];
                assertTrue(at - before > 0 && after - at > 0, "received " + (at - before) + " ns after the send, "
                        + (after - at) + " ns before the answer");
            }
            assertTrue(volume.plainReads.isEmpty(), "every READ carried a time: " + volume.plainReads);
        }
    }

    @Test
    void readsThatArriveTogetherCarryOneTime() throws IOException {
        try (IscsiTestInitiator c = login("r")) {
            int n = 8;
            c.hold();
            for (int i = 0; i < n; i++) {
                c.submit(read10(i), new byte[0], 512, false, IscsiTask.SIMPLE);
            }
            long before = System.nanoTime();
            c.release(); // one write: the target takes the eight PDUs in one socket read
            for (int answered = 0; answered < n; ) {
                Pdu p = c.next();
                boolean last = p.opcode() == Pdu.SCSI_RESPONSE || (p.opcode() == Pdu.DATA_IN && (p.flags() & 0x01) != 0);
                if (last) {
                    assertEquals(GOOD, p.u8(3), "status of task " + p.i32(16));
                    answered++;
                }
            }
            assertEquals(n, volume.reads.size());
            long at = volume.reads.get(0)[1];
            assertTrue(at - before > 0, "received after the send");
            for (long[] r : volume.reads) {
                assertEquals(at, r[1], "READ of lba " + r[0] + " received with the others");
            }
        }
    }
}
