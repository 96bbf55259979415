package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * WRITE AND VERIFY, ORWRITE, WRITE ATOMIC, PRE-FETCH and READ DEFECT DATA through a hand-written
 * initiator on a 512+8 Type 1 volume of 64 blocks: what each stores (read back), the PI checks of
 * WRITE AND VERIFY with the initiator's tuples, the fields each refuses, the end of the medium, the
 * atomic transfer limit of the block limits page; and which of them a reservation or a read-only
 * session holds off.
 */
@Timeout(60)
class IscsiWriteVariantsTest extends IscsiLoopbackFixture {
    IscsiTestInitiator open() throws IOException {
        return login("v", "ImmediateData", "Yes");
    }

    /** A 16-byte CDB: {@code op}, byte 1, a 64-bit LBA and a 32-bit block count. */
    static byte[] cdb16(int op, int byte1, long lba, int blocks) {
        byte[] c = new byte[16];
        c[0] = (byte) op;
        c[1] = (byte) byte1;
        Pdu.putLong(c, 2, lba);
        Pdu.putInt(c, 10, blocks);
        return c;
    }

    static byte[] blocks(int first, int n) {
        byte[] b = new byte[n * 512];
        for (int i = 0; i < n; i++) {
            System.arraycopy(block(first + i), 0, b, i * 512, 512);
        }
        return b;
    }

    static IscsiTestInitiator.Result write(IscsiTestInitiator c, byte[] cdb, byte[] data) throws IOException {
        return c.command(cdb, data, data.length, data.length, false);
    }

    static byte[] read(IscsiTestInitiator c, long lba, int n) throws IOException {
        IscsiTestInitiator.Result r = c.command(cdb10(0x28, lba, n), new byte[0], 0, n * 512L, true);
        assertEquals(GOOD, r.status());
        return r.dataIn();
    }

    /** The block limits page's MAXIMUM TRANSFER LENGTH and MAXIMUM ATOMIC TRANSFER LENGTH. */
    static long[] limits(IscsiTestInitiator c) throws IOException {
        byte[] p = c.command(new byte[] {0x12, 1, (byte) 0xB0, 0, 64, 0}, new byte[0], 0, 64, true).dataIn();
        assertEquals(0x3C, Cdb.u16(p, 2), "page length");
        return new long[] {Cdb.u32(p, 8), Cdb.u32(p, 44)};
    }

    @Test
    void writeAndVerifyStoresThenChecks() throws Exception {
        try (IscsiTestInitiator c = open()) {
            byte[] ten = cdb10(0x2E, 4, 2);
            ten[1] = 0x02; // BYTCHK 1
            assertEquals(GOOD, write(c, ten, blocks(10, 2)).status());
            assertArrayEquals(blocks(10, 2), read(c, 4, 2));
            assertEquals(GOOD, write(c, cdb16(0x8E, 0, 6, 3), blocks(20, 3)).status(), "BYTCHK 0");
            assertArrayEquals(blocks(20, 3), read(c, 6, 3));

            // WRPROTECT 1: the initiator's tuples, checked, stored and read back with RDPROTECT 1
            byte[] pi = IscsiProtectionTest.blocks(2, 0x1234, 30, 7);
            assertEquals(GOOD, write(c, cdb16(0x8E, 1 << 5 | 0x02, 30, 2), pi).status());
            IscsiTestInitiator.Result back = c.command(cdb16(0x88, 1 << 5, 30, 2), new byte[0], 0, pi.length, true);
            assertArrayEquals(pi, back.dataIn(), "data and tuples as sent");
            byte[] wrong = IscsiProtectionTest.blocks(2, 0x1234, 40, 8);
            wrong[520 + 3] ^= 1; // the second block's data under its guard
            IscsiTestInitiator.Result refused = write(c, cdb16(0x8E, 1 << 5, 40, 2), wrong);
            assertEquals(CHECK, refused.status());
            assertEquals(ScsiResult.ABORTED_COMMAND, refused.senseKey());
            assertEquals(0x1001, refused.ascq(), "guard check failed");
            assertEquals(41, refused.information(), "the failing LBA");
            assertArrayEquals(new byte[2 * 512], read(c, 40, 2), "nothing stored");

            byte[] bytchk2 = cdb16(0x8E, 0x04, 0, 1);
            assertEquals(0x2400, write(c, bytchk2, blocks(1, 1)).ascq(), "BYTCHK 10b");
            assertEquals(0x2100, write(c, cdb16(0x8E, 0, 63, 2), blocks(1, 2)).ascq(), "past the end");
            assertEquals(0x2400, write(c, cdb16(0x8E, 6 << 5, 0, 1), blocks(1, 1)).ascq(), "WRPROTECT 6");
        }
    }

    @Test
    void orWriteOrsTheStoredBytesAndRefusesPiFromTheInitiator() throws Exception {
        try (IscsiTestInitiator c = open()) {
            byte[] old = blocks(1, 3);
            assertEquals(GOOD, write(c, cdb10(0x2A, 8, 3), old).status());
            byte[] mask = blocks(2, 3);
            assertEquals(GOOD, write(c, cdb16(ScsiOrWrite.OPCODE, 0x08, 8, 3), mask).status(), "with FUA");
            byte[] expected = new byte[old.length];
            for (int i = 0; i < old.length; i++) {
                expected[i] = (byte) (old[i] | mask[i]);
            }
            // a READ with RDPROTECT 0 checks the guard: the target generated the new blocks' PI
            assertArrayEquals(expected, read(c, 8, 3));

            assertEquals(0x2400, write(c, cdb16(ScsiOrWrite.OPCODE, 1 << 5, 8, 1), new byte[520]).ascq(), "ORPROTECT 1");
            assertArrayEquals(expected, read(c, 8, 3), "nothing stored");
            assertEquals(GOOD, c.command(cdb16(ScsiOrWrite.OPCODE, 0, 0, 0), new byte[0], 0, 0, false).status(), "0 blocks");
            assertEquals(0x2100, write(c, cdb16(ScsiOrWrite.OPCODE, 0, 63, 2), blocks(1, 2)).ascq(), "past the end");
            long max = limits(c)[0];
            byte[] tooMany = cdb16(ScsiOrWrite.OPCODE, 0, 0, (int) max + 1);
            assertEquals(0x2400, c.command(tooMany, new byte[0], 0, 0, false).ascq(), "past the transfer limit");
        }
    }

    @Test
    void writeAtomicUpToTheAtomicLimit() throws Exception {
        try (IscsiTestInitiator c = open()) {
            long[] l = limits(c);
            assertTrue(l[1] > 0 && l[1] <= l[0], "MAXIMUM ATOMIC TRANSFER LENGTH " + l[1] + " within the transfer limit " + l[0]);
            byte[] atomic = new byte[16];
            atomic[0] = (byte) 0x9C;
            Pdu.putLong(atomic, 2, 16);
            atomic[13] = 4; // 16-bit transfer length in bytes 12-13
            assertEquals(GOOD, write(c, atomic, blocks(50, 4)).status());
            assertArrayEquals(blocks(50, 4), read(c, 16, 4));

            atomic[12] = (byte) ((l[1] + 1) >>> 8);
            atomic[13] = (byte) (l[1] + 1);
            Pdu.putLong(atomic, 2, 0);
            assertEquals(0x2400, c.command(atomic, new byte[0], 0, 0, false).ascq(), "one block past the atomic limit");
            atomic[12] = 0;
            atomic[13] = 2;
            Pdu.putLong(atomic, 2, 63);
            assertEquals(0x2100, write(c, atomic, blocks(1, 2)).ascq(), "past the end");
        }
    }

    @Test
    void prefetchChecksItsRangeAndDefectListsAreEmpty() throws Exception {
        try (IscsiTestInitiator c = open()) {
            assertEquals(GOOD, c.command(cdb10(0x34, 0, 64), new byte[0], 0, 0, false).status());
            assertEquals(GOOD, c.command(cdb10(0x34, 10, 0), new byte[0], 0, 0, false).status(), "0: to the last block");
            assertEquals(0x2100, c.command(cdb10(0x34, 64, 0), new byte[0], 0, 0, false).ascq(), "LBA past the last");
            assertEquals(GOOD, c.command(cdb16(0x90, 0x02, 60, 4), new byte[0], 0, 0, false).status(), "IMMED");
            assertEquals(0x2100, c.command(cdb16(0x90, 0, 63, 2), new byte[0], 0, 0, false).ascq());

            byte[] ten = {0x37, 0, 0x18, 0, 0, 0, 0, 0, 32, 0};
            byte[] d = c.command(ten, new byte[0], 0, 32, true).dataIn();
            assertArrayEquals(new byte[] {0, 0x18, 0, 0}, d, "PLISTV, GLISTV, short block format, no entries");
            byte[] twelve = {(byte) 0xB7, 0x0D, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0};
            d = c.command(twelve, new byte[0], 0, 32, true).dataIn();
            assertArrayEquals(new byte[] {0, 0x0D, 0, 0, 0, 0, 0, 0}, d, "GLISTV, format 101b, no entries");
        }
    }

    @Test
    void reservationsAndReadOnlySessionsHoldOffTheWritesOnly() {
        ScsiReservations r = new ScsiReservations(new ScsiUnitAttentions());
        byte[] param = new byte[24];
        Pdu.putLong(param, 8, 1);
        assertEquals(GOOD, r.out("a", ScsiReservationsTest.cdb(6, 0), param).status);
        Pdu.putLong(param, 0, 1);
        assertEquals(GOOD, r.out("a", ScsiReservationsTest.cdb(1, ScsiReservations.WRITE_EXCLUSIVE), param).status);
        byte[][] writes = {cdb10(0x2E, 0, 1), cdb16(0x8E, 0, 0, 1), cdb16(0x9C, 0, 0, 1), cdb16(ScsiOrWrite.OPCODE, 0, 0, 1)};
        byte[][] reads = {cdb10(0x34, 0, 1), cdb16(0x90, 0, 0, 1), new byte[] {0x37, 0, 0, 0, 0, 0, 0, 0, 4, 0}};
        for (byte[] w : writes) {
            assertTrue(r.conflicts("b", w), "WRITE EXCLUSIVE holds off 0x" + Integer.toHexString(w[0] & 0xff));
            assertFalse(r.conflicts("a", w), "not for its holder");
            assertTrue(ReadOnlySession.writes(w), "a read-only session refuses 0x" + Integer.toHexString(w[0] & 0xff));
        }
        for (byte[] x : reads) {
            assertFalse(r.conflicts("b", x), "WRITE EXCLUSIVE lets 0x" + Integer.toHexString(x[0] & 0xff) + " through");
            assertFalse(ReadOnlySession.writes(x));
        }
    }
}
