package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import java.io.IOException;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Blocks sent with their tuples to be compared with the stored ones, through the hand-written
 * initiator: VERIFY(16) with BYTCHK 1 and every VRPROTECT, COMPARE AND WRITE with WRPROTECT 1 to 5.
 * The Data-Out's tuples are checked as a write checks them (ABORTED COMMAND), then data and the
 * compared tuple fields are compared (MISCOMPARE: 1Dh/00h with the Data-Out offset, 10h/01h-03h with
 * the LBA); a COMPARE AND WRITE that fails either stores nothing, one that passes stores the write
 * instance's tuples as sent.
 */
@Timeout(60)
class IscsiPiCompareTest extends IscsiLoopbackFixture {
    private static final int WIRE = 520;
    private static final int APP = 0x1234;

    @Override
    void createVolumes() throws IOException {
        store.create("t1", BlockFormat.of(512, 8), 256);
        store.create("t3", BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_3, PiLocation.LAST), 256);
        store.create("t2", BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_2, PiLocation.FIRST), 256);
        store.create("plain", BlockFormat.of(512, 0), 256);
    }

    private static byte[] verify16(long lba, int n, int protect) {
        byte[] c = IscsiProtectionTest.cdb16(0x8F, lba, n, protect);
        c[1] |= 0x02; // BYTCHK 01b
        return c;
    }

    private static byte[] caw(long lba, int n, int protect) {
        byte[] c = IscsiCompareAndWriteTest.caw(lba, n);
        c[1] = (byte) (protect << 5);
        return c;
    }

    private static IscsiTestInitiator.Result send(IscsiTestInitiator c, byte[] cdb, byte[] out) throws IOException {
        return c.command(cdb, out, out.length, out.length, false);
    }

    private IscsiTestInitiator open(String volume) throws IOException {
        return login(volume, "ImmediateData", "Yes");
    }

    /** Writes {@code wire} (blocks each followed by its tuple) at {@code lba} with WRPROTECT 1; returns it. */
    private static byte[] written(IscsiTestInitiator c, long lba, byte[] wire) throws IOException {
        assertEquals(GOOD, send(c, IscsiProtectionTest.cdb16(0x8A, lba, wire.length / WIRE, 1), wire).status());
        return wire;
    }

    /** The blocks and tuples stored at {@code lba}, as RDPROTECT 3 returns them (nothing checked). */
    private static byte[] stored(IscsiTestInitiator c, long lba, int n) throws IOException {
        IscsiTestInitiator.Result r = c.command(IscsiProtectionTest.cdb16(0x88, lba, n, 3), new byte[0], 0, (long) n * WIRE, true);
        assertEquals(GOOD, r.status());
        return r.dataIn();
    }

    private static void assertCheck(int key, int ascq, long information, IscsiTestInitiator.Result r, String what) {
        assertEquals(CHECK, r.status(), what);
        assertEquals(key, r.senseKey(), what);
        assertEquals(ascq, r.ascq(), what);
        assertEquals(information, r.information(), what);
    }

    @Test
    void verifyComparesDataAndTheTupleFieldsEachVrprotectNames() throws IOException {
        try (IscsiTestInitiator c = open("t1")) {
            long lba = 40;
            byte[] sent = written(c, lba, IscsiProtectionTest.blocks(4, APP, lba, 1));
            for (int p = 1; p <= 5; p++) {
                assertEquals(GOOD, send(c, verify16(lba, 4, p), sent).status(), "equal, VRPROTECT " + p);

                byte[] data = sent.clone();
                data[2 * WIRE + 100] ^= 0x01; // the guard sent is the old data's
                IscsiTestInitiator.Result r = send(c, verify16(lba, 4, p), data);
                if (p == 2 || p == 3) {
                    assertCheck(ScsiResult.MISCOMPARE, 0x1D00, 2 * WIRE + 100, r, "data differs, guard not checked, " + p);
                } else {
                    assertCheck(ScsiResult.ABORTED_COMMAND, 0x1001, lba + 2, r, "the sent guard fails its check, " + p);
                }

                byte[] app = sent.clone();
                app[WIRE + 512 + 3] ^= 0x01;
                assertCheck(ScsiResult.MISCOMPARE, 0x1002, lba + 1, send(c, verify16(lba, 4, p), app),
                        "application tags are compared (ATO 1), " + p);

                byte[] guard = sent.clone();
                guard[3 * WIRE + 512] ^= 0x01;
                r = send(c, verify16(lba, 4, p), guard);
                if (p == 2) {
                    assertEquals(GOOD, r.status(), "VRPROTECT 2 neither checks nor compares the guard");
                } else if (p == 3) {
                    assertCheck(ScsiResult.MISCOMPARE, 0x1001, lba + 3, r, "VRPROTECT 3 compares the guard it does not check");
                } else {
                    assertCheck(ScsiResult.ABORTED_COMMAND, 0x1001, lba + 3, r, "checked before compared, " + p);
                }

                byte[] ref = sent.clone();
                ref[512 + 7] ^= 0x01;
                r = send(c, verify16(lba, 4, p), ref);
                if (p == 1 || p == 2 || p == 5) {
                    assertCheck(ScsiResult.ABORTED_COMMAND, 0x1003, lba, r, "the sent reference tag checked, " + p);
                } else {
                    assertCheck(ScsiResult.MISCOMPARE, 0x1003, lba, r, "the reference tag compared, " + p);
                }
            }
            byte[] bytchk0 = IscsiProtectionTest.cdb16(0x8F, lba, 4, 1);
            assertEquals(GOOD, c.command(bytchk0, new byte[0], 0, 0, false).status(), "BYTCHK 0 sends nothing");
            byte[] reserved = verify16(lba, 4, 6);
            assertEquals(0x2400, send(c, reserved, sent).ascq(), "VRPROTECT 6");
        }
    }

    @Test
    void onType3TheReferenceTagIsComparedOnlyWithVrprotect5() throws IOException {
        try (IscsiTestInitiator c = open("t3")) {
            byte[] sent = written(c, 9, IscsiProtectionTest.blocks(2, APP, 0x7700, 2));
            byte[] ref = sent.clone();
            ref[WIRE + 512 + 7] ^= 0x01;
            for (int p = 1; p <= 4; p++) {
                assertEquals(GOOD, send(c, verify16(9, 2, p), ref).status(), "Type 3, VRPROTECT " + p);
            }
            assertCheck(ScsiResult.MISCOMPARE, 0x1003, 10, send(c, verify16(9, 2, 5), ref), "Type 3, VRPROTECT 5");
        }
    }

    @Test
    void compareAndWriteWithPiWritesTheSentTuplesOrNothing() throws IOException {
        try (IscsiTestInitiator c = open("t1")) {
            long lba = 100;
            byte[] old = written(c, lba, IscsiProtectionTest.blocks(3, APP, lba, 3));
            byte[] fresh = IscsiProtectionTest.blocks(3, 0x4321, lba, 4);
            assertEquals(GOOD, send(c, caw(lba, 3, 1), IscsiCompareAndWriteTest.concat(old, fresh)).status());
            assertArrayEquals(fresh, stored(c, lba, 3), "the write instance stored with the tuples sent");

            byte[] app = fresh.clone();
            app[2 * WIRE + 512 + 2] ^= 0x10;
            assertCheck(ScsiResult.MISCOMPARE, 0x1002, lba + 2, send(c, caw(lba, 3, 1), IscsiCompareAndWriteTest.concat(app, old)),
                    "an application tag of the verify instance differs");
            byte[] data = fresh.clone();
            data[WIRE + 5] ^= 0x01;
            assertCheck(ScsiResult.MISCOMPARE, 0x1D00, WIRE + 5, send(c, caw(lba, 3, 3), IscsiCompareAndWriteTest.concat(data, old)),
                    "data differs: the offset in the Data-Out, tuples counted");
            byte[] guard = fresh.clone();
            guard[512] ^= 0x01;
            assertCheck(ScsiResult.ABORTED_COMMAND, 0x1001, lba, send(c, caw(lba, 3, 1), IscsiCompareAndWriteTest.concat(guard, old)),
                    "the verify instance's guard is checked before it is compared");
            assertCheck(ScsiResult.MISCOMPARE, 0x1001, lba, send(c, caw(lba, 3, 3), IscsiCompareAndWriteTest.concat(guard, old)),
                    "WRPROTECT 3 compares the guard it does not check");
            byte[] badWrite = old.clone();
            badWrite[WIRE + 512] ^= 0x01;
            assertCheck(ScsiResult.ABORTED_COMMAND, 0x1001, lba + 1,
                    send(c, caw(lba, 3, 1), IscsiCompareAndWriteTest.concat(fresh, badWrite)), "the write instance's guard");
            assertArrayEquals(fresh, stored(c, lba, 3), "nothing stored by the five refused");

            assertEquals(GOOD, send(c, caw(lba, 3, 3), IscsiCompareAndWriteTest.concat(fresh, badWrite)).status(),
                    "WRPROTECT 3 checks nothing: the bad guard is stored");
            assertArrayEquals(badWrite, stored(c, lba, 3));
            IscsiTestInitiator.Result read = c.command(IscsiProtectionTest.cdb16(0x88, lba, 3, 1), new byte[0], 0, 3L * WIRE, true);
            assertCheck(ScsiResult.ABORTED_COMMAND, 0x1001, lba + 1, read, "and a read that checks it refuses it");

            byte[] both = IscsiCompareAndWriteTest.concat(badWrite, old);
            assertEquals(0x2400, send(c, caw(lba, 3, 6), both).ascq(), "WRPROTECT 6");
            assertEquals(0x2400, send(c, caw(lba, 3, 1), Arrays.copyOf(both, 6 * 512)).ascq(), "a Data-Out without tuples");
            assertArrayEquals(badWrite, stored(c, lba, 3));
        }
    }

    /**
     * Random VERIFY(16) BYTCHK 1 and COMPARE AND WRITE commands against {@link ScsiPiCompareModel}: one to four
     * blocks, every protect value, Type 1 and Type 3, up to three flipped bits in the blocks and tuples
     * sent to compare (half of them in a tuple). A COMPARE AND WRITE answered GOOD stored its write instance, any
     * other stored nothing.
     */
    @Test
    void randomComparisonsAnswerWhatTheTablesSay() throws IOException {
        java.util.Random r = new java.util.Random(17);
        for (String volume : new String[] {"t1", "t3"}) {
            try (IscsiTestInitiator c = open(volume)) {
                for (int round = 0; round < 150; round++) {
                    int n = 1 + r.nextInt(4);
                    long lba = r.nextInt(250);
                    byte[] stored = written(c, lba, IscsiProtectionTest.blocks(n, r.nextInt(0xFFFF),
                            volume.equals("t3") ? r.nextInt() : lba, r.nextLong()));
                    byte[] sent = stored.clone();
                    for (int k = r.nextInt(4); k > 0; k--) { // half of the flips in a tuple
                        int at = r.nextBoolean() ? r.nextInt(sent.length) : r.nextInt(n) * WIRE + 512 + r.nextInt(8);
                        sent[at] ^= (byte) (1 << r.nextInt(8));
                    }
                    int p = 1 + r.nextInt(5);
                    long[] want = ScsiPiCompareModel.expected(p, volume.equals("t3"), lba, sent, stored, n);
                    boolean caw = r.nextBoolean();
                    byte[] fresh = IscsiProtectionTest.blocks(n, 0x0102, lba, r.nextLong());
                    IscsiTestInitiator.Result got = caw ? send(c, caw(lba, n, p), IscsiCompareAndWriteTest.concat(sent, fresh))
                            : send(c, verify16(lba, n, p), sent);
                    String what = volume + " round " + round + (caw ? " COMPARE AND WRITE" : " VERIFY") + " protect " + p;
                    assertEquals(want[0], got.status(), what);
                    if (want[0] == CHECK) {
                        assertCheck((int) want[1], (int) want[2], want[3], got, what);
                    }
                    assertArrayEquals(caw && want[0] == GOOD ? fresh : stored, stored(c, lba, n), what);
                }
            }
        }
    }

    @Test
    void onType2Verify32ChecksTheSentTuplesAgainstTheCdbsTagsThenCompares() throws IOException {
        try (IscsiTestInitiator c = open("t2")) {
            byte[] d = IscsiProtectionTest.blocks(3, 0x4242, 0x1000, 9);
            assertEquals(GOOD, IscsiProtectionTest.write32(c, 30, d, 1, 0x1000, 0x4242, 0xFFFF).status());
            byte[] cdb = IscsiProtectionTest.cdb32(Cdb.VERIFY_32, 30, 3, 1, 0x1000, 0x4242, 0xFFFF);
            cdb[10] |= 0x02; // BYTCHK 01b
            assertEquals(GOOD, send(c, cdb, d).status(), "equal, tags as the CDB expects");
            byte[] otherRef = cdb.clone();
            Pdu.putInt(otherRef, 20, 0x1001);
            assertCheck(ScsiResult.ABORTED_COMMAND, 0x1003, 30, send(c, otherRef, d), "the CDB's expected reference tag");
            byte[] otherApp = cdb.clone();
            otherApp[25] ^= 1;
            assertCheck(ScsiResult.ABORTED_COMMAND, 0x1002, 30, send(c, otherApp, d), "the CDB's expected application tag");
            byte[] app = d.clone();
            app[2 * WIRE + 512 + 3] ^= 1;
            byte[] masked = cdb.clone();
            masked[27] = 0; // the mask's low byte: the changed bit unchecked, yet compared (ATO 1)
            assertCheck(ScsiResult.MISCOMPARE, 0x1002, 32, send(c, masked, app), "checked under the mask, compared whole");
        }
    }

    @Test
    void compareAndWriteWithPiIsRefusedWhereTheUnitCannotTakeIt() throws IOException {
        byte[] both = new byte[2 * WIRE];
        try (IscsiTestInitiator c = open("t2")) {
            assertEquals(0x2000, send(c, caw(0, 1, 1), both).ascq(), "Type 2: the tags need a 32-byte CDB");
        }
        try (IscsiTestInitiator c = open("plain")) {
            assertEquals(0x2400, send(c, caw(0, 1, 1), both).ascq(), "no PI on the wire");
            assertEquals(0x2400, send(c, verify16(0, 1, 1), new byte[WIRE]).ascq(), "no PI on the wire");
        }
    }
}
