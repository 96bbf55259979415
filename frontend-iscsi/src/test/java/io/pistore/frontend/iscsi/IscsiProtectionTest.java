package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import java.io.IOException;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What libiscsi cannot send, through a hand-written initiator on loopback: the 32-byte CDBs of Type
 * 2 with their expected reference tag, application tag and mask (the only CDBs that check the
 * application tag), the CDB sizes each type refuses, writes in several R2T bursts, and residuals.
 */
@Timeout(60)
class IscsiProtectionTest extends IscsiLoopbackFixture {
    @Override
    void createVolumes() throws IOException {
        store.create("t2", BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_2, PiLocation.FIRST), 256);
        store.create("t1", BlockFormat.of(512, 8), 256);
        store.create("big", BlockFormat.of(4096, 8), 1024);
    }

    /** {@code n} 512-byte blocks, each followed by a tuple with a correct guard, {@code app} and {@code ref + i}. */
    static byte[] blocks(int n, int app, long ref, long seed) {
        byte[] b = new byte[n * 520];
        Random r = new Random(seed);
        for (int i = 0; i < n; i++) {
            byte[] d = new byte[512];
            r.nextBytes(d);
            System.arraycopy(d, 0, b, i * 520, 512);
            int guard = (int) GuardType.CRC16.compute(d, 0, 512);
            b[i * 520 + 512] = (byte) (guard >>> 8);
            b[i * 520 + 513] = (byte) guard;
            b[i * 520 + 514] = (byte) (app >>> 8);
            b[i * 520 + 515] = (byte) app;
            Pdu.putInt(b, i * 520 + 516, (int) (ref + i));
        }
        return b;
    }

    static byte[] cdb32(int serviceAction, long lba, int n, int protect, long ref, int app, int mask) {
        byte[] c = new byte[32];
        c[0] = 0x7F;
        c[7] = 0x18;
        c[8] = (byte) (serviceAction >>> 8);
        c[9] = (byte) serviceAction;
        c[10] = (byte) (protect << 5);
        Pdu.putLong(c, 12, lba);
        Pdu.putInt(c, 20, (int) ref);
        c[24] = (byte) (app >>> 8);
        c[25] = (byte) app;
        c[26] = (byte) (mask >>> 8);
        c[27] = (byte) mask;
        Pdu.putInt(c, 28, n);
        return c;
    }

    static byte[] cdb16(int opcode, long lba, int n, int protect) {
        byte[] c = new byte[16];
        c[0] = (byte) opcode;
        c[1] = (byte) (protect << 5);
        Pdu.putLong(c, 2, lba);
        Pdu.putInt(c, 10, n);
        return c;
    }

    static IscsiTestInitiator.Result write32(IscsiTestInitiator c, long lba, byte[] d, int protect, long ref, int app,
                                            int mask) throws IOException {
        return c.command(cdb32(Cdb.WRITE_32, lba, d.length / 520, protect, ref, app, mask), d, d.length, d.length, false);
    }

    static IscsiTestInitiator.Result read32(IscsiTestInitiator c, long lba, int n, int protect, long ref, int app,
                                           int mask) throws IOException {
        return c.command(cdb32(Cdb.READ_32, lba, n, protect, ref, app, mask), new byte[0], 0, n * 520L, true);
    }

    @Test
    void type2ChecksTheApplicationTagAndReferenceTagsOfThe32ByteCdb() throws IOException {
        try (IscsiTestInitiator c = login("t2")) {
            byte[] d = blocks(3, 0x4242, 0x1000, 1);
            IscsiTestInitiator.Result w = write32(c, 10, d, 1, 0x1000, 0x4242, 0xFFFF);
            assertEquals(GOOD, w.status(), "sense " + Arrays.toString(w.sense()));
            IscsiTestInitiator.Result r = read32(c, 10, 3, 1, 0x1000, 0x4242, 0xFFFF);
            assertEquals(GOOD, r.status());
            assertArrayEquals(d, r.dataIn());

            byte[] badApp = blocks(3, 0x4242, 0x1000, 2);
            badApp[520 + 515] ^= 1; // block 1 carries application tag 0x4243
            IscsiTestInitiator.Result a = write32(c, 10, badApp, 1, 0x1000, 0x4242, 0xFFFF);
            assertEquals(CHECK, a.status());
            assertEquals(0x0B, a.senseKey());
            assertEquals(0x1002, a.ascq());
            assertEquals(11, a.information());
            assertArrayEquals(d, read32(c, 10, 3, 1, 0x1000, 0x4242, 0xFFFF).dataIn(), "nothing stored");

            IscsiTestInitiator.Result masked = write32(c, 10, badApp, 1, 0x1000, 0x4242, 0xFF00);
            assertEquals(GOOD, masked.status(), "the mask leaves the differing low byte unchecked");

            byte[] badRef = blocks(2, 0x4242, 0x2000, 3);
            IscsiTestInitiator.Result f = write32(c, 20, badRef, 1, 0x2001, 0x4242, 0xFFFF);
            assertEquals(CHECK, f.status());
            assertEquals(0x1003, f.ascq());
            assertEquals(20, f.information());
            IscsiTestInitiator.Result unchecked = write32(c, 20, badRef, 3, 0x2001, 0x4242, 0xFFFF);
            assertEquals(GOOD, unchecked.status(), "WRPROTECT 3 checks nothing");
        }
    }

    @Test
    void eachTypeRefusesTheCdbSizeItCannotUse() throws IOException {
        try (IscsiTestInitiator c = login("t2")) {
            IscsiTestInitiator.Result r = c.command(cdb16(0x8A, 0, 1, 1), blocks(1, 0, 0, 4), 520, 520, false);
            assertEquals(CHECK, r.status());
            assertEquals(0x05, r.senseKey());
            assertEquals(0x2000, r.ascq(), "16-byte CDB with protect on Type 2");
            IscsiTestInitiator.Result plain = c.command(cdb16(0x8A, 0, 1, 0), new byte[512], 512, 512, false);
            assertEquals(GOOD, plain.status(), "protect 0 needs no reference tag");
        }
        try (IscsiTestInitiator c = login("t1")) {
            IscsiTestInitiator.Result r = write32(c, 0, blocks(1, 0, 0, 5), 1, 0, 0, 0);
            assertEquals(CHECK, r.status());
            assertEquals(0x2000, r.ascq(), "32-byte CDB on Type 1");
            IscsiTestInitiator.Result reserved = c.command(cdb16(0x8A, 0, 1, 7), blocks(1, 0, 0, 5), 520, 520, false);
            assertEquals(0x2400, reserved.ascq(), "WRPROTECT 7 is reserved");
            IscsiTestInitiator.Result beyond = c.command(cdb16(0x88, 255, 2, 0), new byte[0], 0, 1024, true);
            assertEquals(0x2100, beyond.ascq(), "LBA out of range");
            IscsiTestInitiator.Result opcode = c.command(new byte[] {(byte) 0xC5, 0, 0, 0, 0, 0}, new byte[0], 0, 0, true);
            assertEquals(0x2000, opcode.ascq(), "unknown opcode");
        }
    }

    /**
     * GET LBA STATUS reads the data of the blocks it reports (an unwritten block must read as zeros),
     * so one answer covers 512 KiB of data: 128 blocks of 4096 bytes, not the 1024 of 512; the
     * initiator asks again from where the runs end.
     */
    @Test
    void getLbaStatusOn4096ByteBlocksCoversAWindowAndGoesOnFromItsEnd() throws IOException {
        try (IscsiTestInitiator c = login("big")) {
            byte[] d = new byte[10 * 4096];
            new Random(9).nextBytes(d);
            assertEquals(GOOD, c.command(cdb16(0x8A, 610, 10, 0), d, d.length, d.length, false).status());
            byte[] s = c.command(lbaStatus(600), new byte[0], 0, 4096, true).dataIn();
            assertEquals(3 * 16 + 4, Pdu.getInt(s, 0), "unwritten, written, unwritten to the window's end");
            assertRun(s, 0, 600, 10, true);
            assertRun(s, 1, 610, 10, false);
            assertRun(s, 2, 620, 600 + 128 - 620, true); // the window ends 128 blocks on, before the volume's end
            byte[] next = c.command(lbaStatus(728), new byte[0], 0, 4096, true).dataIn();
            assertEquals(16 + 4, Pdu.getInt(next, 0));
            assertRun(next, 0, 728, 128, true);
            byte[] last = c.command(lbaStatus(1000), new byte[0], 0, 4096, true).dataIn();
            assertRun(last, 0, 1000, 24, true); // a window cut at the volume's end
        }
        // the blocks were read into pooled buffers: each went back once the answer was known
        io.pistore.testkit.Eventually.await("every pooled buffer given back", () -> server.dataIn().lent() == 0);
    }

    @Test
    void aWriteInSeveralR2tBurstsIsStoredWhole() throws IOException {
        try (IscsiTestInitiator c = login("big", "ImmediateData", "No", "InitialR2T", "Yes", "MaxBurstLength", "8192")) {
            byte[] d = new byte[64 * 4096];
            new Random(6).nextBytes(d);
            IscsiTestInitiator.Result w = c.command(cdb16(0x8A, 100, 64, 0), d, 0, d.length, false);
            assertEquals(GOOD, w.status());
            assertEquals(32, w.r2ts());
            IscsiTestInitiator.Result r = c.command(cdb16(0x88, 100, 64, 0), new byte[0], 0, d.length, true);
            assertEquals(GOOD, r.status());
            assertArrayEquals(d, r.dataIn());
        }
    }

    @Test
    void aShortExpectedLengthReportsTheOverflow() throws IOException {
        try (IscsiTestInitiator c = login("t1")) {
            IscsiTestInitiator.Result r = c.command(cdb16(0x88, 0, 1, 0), new byte[0], 0, 100, true);
            assertEquals(GOOD, r.status());
            assertEquals(100, r.dataIn().length);
            assertEquals(0x04, r.residualFlags());
            assertEquals(412, r.residual());
            IscsiTestInitiator.Result u = c.command(cdb16(0x88, 0, 1, 0), new byte[0], 0, 2048, true);
            assertEquals(0x02, u.residualFlags());
            assertEquals(1536, u.residual());
        }
    }

    /** Descriptor {@code i} of a GET LBA STATUS answer: its first LBA, its length and whether it is deallocated. */
    static void assertRun(byte[] answer, int i, long lba, int blocks, boolean deallocated) {
        int at = 8 + 16 * i;
        assertEquals(lba, Pdu.getLong(answer, at), "run " + i + "'s LBA");
        assertEquals(blocks, Pdu.getInt(answer, at + 8), "run " + i + "'s blocks");
        assertEquals(deallocated ? 1 : 0, answer[at + 12], "run " + i + "'s provisioning status");
    }

    static byte[] lbaStatus(long lba) {
        byte[] c = new byte[16];
        c[0] = (byte) 0x9E;
        c[1] = 0x12;
        Pdu.putLong(c, 2, lba);
        Pdu.putInt(c, 10, 4096);
        return c;
    }

    @Test
    void unmapAndWriteSameDeallocateAndGetLbaStatusTellsThem() throws IOException {
        try (IscsiTestInitiator c = login("t1")) {
            byte[] d = blocks(8, 0x77, 40, 7);
            assertEquals(GOOD, c.command(cdb16(0x8A, 40, 8, 1), d, d.length, d.length, false).status());
            byte[] unmap = new byte[8 + 16];
            Pdu.putInt(unmap, 0, 0);
            unmap[1] = 22;
            unmap[3] = 16;
            Pdu.putLong(unmap, 8, 42);
            Pdu.putInt(unmap, 16, 3);
            byte[] cdb = new byte[10];
            cdb[0] = 0x42;
            cdb[8] = (byte) unmap.length;
            assertEquals(GOOD, c.command(cdb, unmap, unmap.length, unmap.length, false).status());

            IscsiTestInitiator.Result r = c.command(cdb16(0x88, 40, 8, 1), new byte[0], 0, 8 * 520, true);
            assertEquals(GOOD, r.status(), "deallocated blocks pass the checks (escape tuple)");
            for (int i = 0; i < 8; i++) {
                byte[] got = Arrays.copyOfRange(r.dataIn(), i * 520, i * 520 + 520);
                byte[] want = Arrays.copyOfRange(d, i * 520, i * 520 + 520);
                if (i >= 2 && i < 5) {
                    assertArrayEquals(new byte[512], Arrays.copyOf(got, 512), "block " + (40 + i) + " reads zeros");
                    assertArrayEquals(new byte[] {0, 0, -1, -1, -1, -1, -1, -1}, Arrays.copyOfRange(got, 512, 520));
                } else {
                    assertArrayEquals(want, got, "block " + (40 + i) + " kept");
                }
            }
            IscsiTestInitiator.Result st = c.command(lbaStatus(40), new byte[0], 0, 4096, true);
            assertEquals(GOOD, st.status());
            byte[] s = st.dataIn();
            assertEquals(4 * 16 + 4, Pdu.getInt(s, 0), "runs from LBA 40: mapped, deallocated, mapped, never written");
            assertRun(s, 0, 40, 2, false);
            assertRun(s, 1, 42, 3, true);
            assertRun(s, 2, 45, 3, false);
            assertRun(s, 3, 48, 256 - 48, true); // never-written blocks up to the end

            byte[] pattern = new byte[512];
            Arrays.fill(pattern, (byte) 0x5A);
            byte[] ws = new byte[16];
            ws[0] = (byte) 0x93;
            Pdu.putLong(ws, 2, 100);
            Pdu.putInt(ws, 10, 20);
            assertEquals(GOOD, c.command(ws, pattern, 512, 512, false).status());
            IscsiTestInitiator.Result back = c.command(cdb16(0x88, 100, 20, 0), new byte[0], 0, 20 * 512, true);
            for (int i = 0; i < 20; i++) {
                assertArrayEquals(pattern, Arrays.copyOfRange(back.dataIn(), i * 512, i * 512 + 512));
            }
            ws[1] = 0x08; // UNMAP
            assertEquals(GOOD, c.command(ws, new byte[512], 512, 512, false).status());
            IscsiTestInitiator.Result st2 = c.command(lbaStatus(100), new byte[0], 0, 4096, true);
            assertEquals(1, st2.dataIn()[20], "WRITE SAME of zeros with UNMAP deallocates");
            assertEquals(256 - 100, Pdu.getInt(st2.dataIn(), 16), "one run with the never-written blocks after it");
            ws[1] = 0x20; // WRPROTECT 1: one block and its tuple
            assertEquals(0x2400, c.command(ws, pattern, 512, 512, false).ascq(), "the tuple missing");
        }
    }

    /** WRITE SAME(10 or 16) of one block and its tuple over {@code n} blocks from {@code lba}. */
    private static IscsiTestInitiator.Result writeSame(IscsiTestInitiator c, boolean sixteen, int protect, long lba, int n,
            byte[] blockAndTuple) throws IOException {
        byte[] ws = new byte[16];
        ws[0] = (byte) (sixteen ? 0x93 : 0x41);
        ws[1] = (byte) (protect << 5);
        if (sixteen) {
            Pdu.putLong(ws, 2, lba);
            Pdu.putInt(ws, 10, n);
        } else {
            Pdu.putInt(ws, 2, (int) lba);
            ws[7] = (byte) (n >>> 8);
            ws[8] = (byte) n;
        }
        return c.command(ws, blockAndTuple, blockAndTuple.length, blockAndTuple.length, false);
    }

    @Test
    void writeSameCarriesItsBlocksTuple() throws Exception {
        try (IscsiTestInitiator c = login("t1", "ImmediateData", "Yes")) {
            byte[] one = blocks(1, 0x4321, 100, 11);
            assertEquals(GOOD, writeSame(c, true, 1, 100, 70, one).status());
            IscsiTestInitiator.Result back = c.command(cdb16(0x88, 100, 35, 1), new byte[0], 0, 35 * 520, true);
            IscsiTestInitiator.Result rest = c.command(cdb16(0x88, 135, 35, 1), new byte[0], 0, 35 * 520, true);
            byte[] all = new byte[70 * 520];
            System.arraycopy(back.dataIn(), 0, all, 0, 35 * 520);
            System.arraycopy(rest.dataIn(), 0, all, 35 * 520, 35 * 520);
            for (int i = 0; i < 70; i++) {
                byte[] want = one.clone();
                Pdu.putInt(want, 516, 100 + i); // Type 1: the reference tag counts up from the first block's
                assertArrayEquals(want, Arrays.copyOfRange(all, i * 520, i * 520 + 520), "block " + (100 + i));
            }
            assertEquals(GOOD, writeSame(c, false, 1, 180, 3, blocks(1, 7, 180, 12)).status(), "WRITE SAME(10)");
            assertEquals(7, Cdb.u16(c.command(cdb16(0x88, 182, 1, 1), new byte[0], 0, 520, true).dataIn(), 514));

            // checked as WRPROTECT says, nothing stored when a check fails
            byte[] before = c.command(cdb16(0x88, 200, 4, 1), new byte[0], 0, 4 * 520, true).dataIn();
            byte[] badGuard = blocks(1, 0, 200, 13);
            badGuard[5] ^= 1;
            IscsiTestInitiator.Result r = writeSame(c, true, 1, 200, 4, badGuard);
            assertEquals(ScsiResult.ABORTED_COMMAND, r.senseKey());
            assertEquals(0x1001, r.ascq(), "guard");
            r = writeSame(c, true, 5, 200, 4, blocks(1, 0, 201, 13));
            assertEquals(0x1003, r.ascq(), "reference tag not the first LBA");
            assertArrayEquals(before, c.command(cdb16(0x88, 200, 4, 1), new byte[0], 0, 4 * 520, true).dataIn());
            assertEquals(GOOD, writeSame(c, true, 3, 200, 2, badGuard).status(), "WRPROTECT 3 checks nothing");
            assertEquals(GOOD, writeSame(c, true, 4, 210, 2, blocks(1, 0, 99, 14)).status(), "4: the guard alone");
            assertEquals(0x2400, writeSame(c, true, 6, 200, 2, blocks(1, 0, 200, 13)).ascq(), "WRPROTECT 6");
        }
        try (IscsiTestInitiator c = login("t2", "ImmediateData", "Yes")) {
            assertEquals(0x2000, writeSame(c, true, 1, 0, 2, blocks(1, 0, 0, 15)).ascq(), "Type 2: 32-byte CDBs only");
        }
    }
}
