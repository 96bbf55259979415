package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.local.LocalTransportProvider;
import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.CheckFlags;
import io.pistore.integrity.Pi;
import io.pistore.integrity.PiContext;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.DelegatingHostConnection;
import io.pistore.spi.HostConnection;
import io.pistore.spi.OrderedCompareAndWrite;
import io.pistore.spi.TargetListener;
import io.pistore.spi.WriteFence;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * COMPARE AND WRITE on a unit whose volume orders it with the writes of its other ports (a
 * replicated volume's log): the whole command goes to the volume's {@link OrderedCompareAndWrite},
 * with the PI the target inserts, and its answer becomes the command's status; the unit's own
 * read-compare-write is not used. ORWRITE becomes a compare-and-write of the blocks it read. The ordered side stands in here; {@code ReplicatedVolumeTest} and
 * {@code ReplicatedIscsiReservationsTest} run it on real peers.
 */
class ScsiOrderedCompareAndWriteTest {
    private static final BlockFormat F = BlockFormat.of(512, 8);

    /** What the stand-in was asked, and what it answers next (a value or an exception). */
    private final Deque<Object> answers = new ArrayDeque<>();
    private long lba;
    private int blocks;
    private byte[] verify;
    private byte[] data;
    private byte[] metadata;
    private WriteFence fence;
    private byte[] verifyMetadata;
    private byte[] comparedBits;

    private VolumeStore store;
    private BlockTransport transport;
    private TargetListener listener;
    private HostConnection connection;
    private BlockDevice device;

    @BeforeEach
    void start() throws Exception {
        store = VolumeStore.inMemory();
        store.create("v", F, 64);
        transport = new LocalTransportProvider().create();
        listener = transport.listen("", new TargetService(store));
        OrderedCompareAndWrite standIn = (l, n, v, vm, mask, d, m, fua, f) -> {
            lba = l;
            blocks = n;
            verify = v.clone();
            verifyMetadata = vm;
            comparedBits = mask;
            data = new byte[(int) d.length()];
            d.read(0, data, 0, data.length);
            metadata = new byte[(int) m.length()];
            m.read(0, metadata, 0, metadata.length);
            fence = f;
            Object a = answers.pop();
            return a instanceof Long x ? CompletableFuture.completedFuture(x) : CompletableFuture.failedFuture((Throwable) a);
        };
        connection = new DelegatingHostConnection(transport.connect(listener.address(), new ConnectOptions(1, 8))) {
            @Override
            public OrderedCompareAndWrite orderedCompareAndWrite(String volume) {
                return volume.equals("v") ? standIn : null;
            }

            @Override
            protected io.pistore.spi.HostQueue wrap(int index, io.pistore.spi.HostQueue q) {
                return q;
            }
        };
        device = BlockDevice.open(connection, "v");
    }

    @AfterEach
    void stop() throws Exception {
        connection.close();
        listener.close();
        transport.close();
        store.close();
    }

    private static byte[] cdb(long lba, int n) {
        byte[] c = new byte[16];
        c[0] = (byte) 0x89;
        ByteBuffer.wrap(c).putLong(2, lba);
        c[13] = (byte) n;
        return c;
    }

    private static int senseKey(ScsiResult r) {
        return r.sense[2] & 0x0f;
    }

    @Test
    void theCommandGoesToTheVolumeWithThePiTheTargetInsertsAndItsAnswerIsTheStatus() throws Exception {
        ScsiCompareAndWrite caw = new ScsiCompareAndWrite(device, new ScsiRangeLock(), 64);
        byte[] out = new byte[2 * 3 * 512];
        new Random(1).nextBytes(out);

        answers.add(OrderedCompareAndWrite.WRITTEN);
        assertEquals(ScsiResult.GOOD, caw.run(cdb(20, 3), out, false).status);
        assertEquals(20, lba);
        assertEquals(3, blocks);
        assertArrayEquals(Arrays.copyOf(out, 1536), verify, "the blocks to compare: the Data-Out's first half");
        assertArrayEquals(Arrays.copyOfRange(out, 1536, 3072), data, "the blocks to write: its second half");
        assertNull(Pi.verify(PiContext.builder(F).checks(CheckFlags.ALL).initialRefTag(F.refTagOf(20)).build(),
                ScatterList.wrap(data), ScatterList.wrap(metadata), 3), "the PI of the LBAs they go to, as the target inserts it");
        assertNull(fence, "a unit whose reservations are its own sends no view");
        byte[] stored = new byte[3 * 512];
        device.readSync(20, ByteBuffer.wrap(stored));
        assertArrayEquals(new byte[3 * 512], stored, "the unit wrote nothing itself: the volume does");

        answers.add(700L);
        ScsiResult miss = caw.run(cdb(20, 3), out, false);
        assertEquals(ScsiResult.CHECK_CONDITION, miss.status);
        assertEquals(ScsiResult.MISCOMPARE, senseKey(miss));
        assertEquals(0x1D, miss.sense[12] & 0xff);
        assertEquals(700, ByteBuffer.wrap(miss.sense).getInt(3), "the offset of the first byte that differed");

        answers.add(new io.pistore.engine.volume.ViewChangedException("the reservations changed"));
        assertEquals(ScsiResult.RESERVATION_CONFLICT, caw.run(cdb(20, 3), out, false).status);

        answers.add(new java.io.IOException("volume v: compare and write lba=20 not committed by a quorum within 4000 ms"));
        ScsiResult failed = caw.run(cdb(20, 3), out, false);
        assertEquals(ScsiResult.MEDIUM_ERROR, senseKey(failed), "no quorum: a medium error, as for a write");

        assertEquals(ScsiResult.ILLEGAL_REQUEST, senseKey(caw.run(cdb(20, 3), Arrays.copyOf(out, 1000), false)),
                "a Data-Out that is not twice the blocks is refused before the volume is asked");
        assertNull(verifyMetadata, "WRPROTECT 0: data alone compared");
        assertEquals(0, answers.size());
    }

    @Test
    void withPiTheVolumeComparesTheTuplesBitsTheProtectValueNamesAndItsOffsetsBecomeTheSense() throws Exception {
        ScsiCompareAndWrite caw = new ScsiCompareAndWrite(device, new ScsiRangeLock(), 64);
        byte[] verifyInstance = IscsiProtectionTest.blocks(3, 0x1234, 20, 5);
        byte[] writeInstance = IscsiProtectionTest.blocks(3, 0x4321, 20, 6);
        byte[] out = IscsiCompareAndWriteTest.concat(verifyInstance, writeInstance);
        byte[] protect2 = cdb(20, 3);
        protect2[1] = 0x40;
        answers.add(OrderedCompareAndWrite.WRITTEN);
        assertEquals(ScsiResult.GOOD, caw.run(protect2, out, false).status);
        ScsiPiCompare.Split v = ScsiPiCompare.Split.of(out, 0, 3, 512);
        ScsiPiCompare.Split w = ScsiPiCompare.Split.of(out, 3, 3, 512);
        assertArrayEquals(v.data(), verify);
        assertArrayEquals(v.tuples(), verifyMetadata, "the verify instance's tuples");
        assertArrayEquals(new byte[] {0, 0, -1, -1, -1, -1, -1, -1}, comparedBits, "WRPROTECT 2: no guard compared");
        assertArrayEquals(w.data(), data);
        assertArrayEquals(w.tuples(), metadata, "the write instance's tuples, as sent");

        byte[] protect1 = cdb(20, 3);
        protect1[1] = 0x20;
        answers.add(512L + 88);
        ScsiResult inData = caw.run(protect1, out, false);
        assertEquals(0x1D, inData.sense[12] & 0xff);
        assertEquals(520 + 88, ByteBuffer.wrap(inData.sense).getInt(3), "the second block's byte 88, tuples counted");
        answers.add(3L * 512 + 8 + 3);
        ScsiResult inTuple = caw.run(protect1, out, false);
        assertEquals(ScsiResult.MISCOMPARE, senseKey(inTuple));
        assertEquals(0x10, inTuple.sense[12] & 0xff);
        assertEquals(0x02, inTuple.sense[13] & 0xff, "an application tag");
        assertEquals(21, ByteBuffer.wrap(inTuple.sense).getInt(3), "of the second block");
        assertArrayEquals(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1}, comparedBits);

        byte[] badWrite = out.clone();
        badWrite[3 * 520 + 512] ^= 1;
        ScsiResult refused = caw.run(protect1, badWrite, false);
        assertEquals(ScsiResult.ABORTED_COMMAND, senseKey(refused), "a write instance's bad guard, before the volume is asked");
        byte[] protect3 = cdb(20, 3);
        protect3[1] = 0x60;
        answers.add(new io.pistore.engine.volume.PiRefusedException("refused", 22,
                new io.pistore.integrity.PiError(io.pistore.integrity.PiErrorKind.GUARD, 2, 1, 2)));
        ScsiResult unchecked = caw.run(protect3, badWrite, false);
        assertEquals(ScsiResult.ABORTED_COMMAND, senseKey(unchecked), "WRPROTECT 3 checks nothing, but the volume refuses "
                + "what fails its own checks: a PI failure, as for a WRITE there");
        assertEquals(0x01, unchecked.sense[13] & 0xff);
        assertEquals(22, ByteBuffer.wrap(unchecked.sense).getInt(3), "at the LBA the volume names");
        assertEquals(0, answers.size());
    }

    @Test
    void throughAFencedConnectionItCarriesTheNexussViewIsSentAgainOnAChangedOneAndHeldOffByAReservation() throws Exception {
        ScsiReservations reservations = new ScsiReservations(new ScsiUnitAttentions());
        OrderedCompareAndWrite fenced = new ScsiFencedConnection(connection, reservations).orderedCompareAndWrite("v");
        byte[] blocks = new byte[512];
        answers.add(new io.pistore.engine.volume.ViewChangedException("changed"));
        answers.add(OrderedCompareAndWrite.WRITTEN);
        long r = ScsiFencedConnection.as("iqn.a,i,0x1", () -> fenced.compareAndWrite(1, 1, blocks, ScatterList.wrap(blocks),
                ScatterList.wrap(new byte[8]), false, null)).join();
        assertEquals(OrderedCompareAndWrite.WRITTEN, r, "sent again after the volume refused it for a changed view");
        assertEquals(0, answers.size());
        assertEquals(reservations.writeView("iqn.a,i,0x1"), fence.view(), "with the view it was checked against");
        answers.add(OrderedCompareAndWrite.WRITTEN);
        byte[] tuple = {1, 2, 3, 4, 5, 6, 7, 8};
        byte[] bits = {0, 0, -1, -1, 0, 0, 0, 0};
        assertEquals(OrderedCompareAndWrite.WRITTEN, ScsiFencedConnection.as("iqn.a,i,0x1", () -> fenced.compareAndWrite(1, 1,
                blocks, tuple, bits, ScatterList.wrap(blocks), ScatterList.wrap(new byte[8]), false, null)).join());
        assertArrayEquals(tuple, verifyMetadata, "the tuples to compare passed on, with the view");
        assertArrayEquals(bits, comparedBits);
        assertEquals(reservations.writeView("iqn.a,i,0x1"), fence.view());

        // another initiator reserves the unit Exclusive Access: the nexus is held off before the volume is asked
        byte[] register = new byte[24];
        Pdu.putLong(register, 8, 7);
        assertEquals(ScsiResult.GOOD, reservations.out("iqn.b,i,0x2", ScsiReservationsTest.cdb(0, 0), register).status);
        assertEquals(ScsiResult.GOOD, reservations.out("iqn.b,i,0x2", ScsiReservationsTest.cdb(1, 3),
                ScsiReservationsTest.param(7, 0)).status);
        java.util.concurrent.CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(
                java.util.concurrent.CompletionException.class, () -> ScsiFencedConnection.as("iqn.a,i,0x1",
                        () -> fenced.compareAndWrite(1, 1, blocks, ScatterList.wrap(blocks), ScatterList.wrap(new byte[8]), false,
                                null)).join());
        org.junit.jupiter.api.Assertions.assertInstanceOf(io.pistore.engine.volume.ViewChangedException.class, e.getCause());
        answers.add(OrderedCompareAndWrite.WRITTEN);
        assertEquals(OrderedCompareAndWrite.WRITTEN, fenced.compareAndWrite(1, 1, blocks, ScatterList.wrap(blocks),
                ScatterList.wrap(new byte[8]), false, null).join(), "no nexus on the thread: passed on unchecked");
    }

    @Test
    void anOrWriteIsACompareAndWriteOfTheBlocksReadAndIsReadAgainWhileAnotherPortWritesBetween() throws Exception {
        ScsiOrWrite or = new ScsiOrWrite(device, new ScsiRangeLock(), 64);
        byte[] stored = new byte[2 * 512];
        new Random(2).nextBytes(stored);
        device.writeSync(30, ByteBuffer.wrap(stored));
        byte[] mask = new byte[2 * 512];
        new Random(3).nextBytes(mask);
        byte[] cdb = new byte[16];
        cdb[0] = (byte) ScsiOrWrite.OPCODE;
        ByteBuffer.wrap(cdb).putLong(2, 30).putInt(10, 2);

        answers.add(17L); // another port wrote the blocks between the read and the compare
        answers.add(OrderedCompareAndWrite.WRITTEN);
        assertEquals(ScsiResult.GOOD, or.run(cdb, mask, false).status);
        assertEquals(0, answers.size(), "read and sent again once");
        assertArrayEquals(stored, verify, "it expects the blocks as it read them");
        byte[] ored = stored.clone();
        for (int i = 0; i < ored.length; i++) {
            ored[i] |= mask[i];
        }
        assertArrayEquals(ored, data, "and writes them OR the Data-Out");
        assertNull(Pi.verify(PiContext.builder(F).checks(CheckFlags.ALL).initialRefTag(F.refTagOf(30)).build(),
                ScatterList.wrap(data), ScatterList.wrap(metadata), 2), "with the PI the target inserts");

        for (int i = 0; i < ScsiOrWrite.TRIES; i++) {
            answers.add(1L);
        }
        assertEquals(ScsiResult.BUSY, or.run(cdb, mask, false).status, "busy after as many tries, with nothing written here");
        assertEquals(0, answers.size());
    }
}
