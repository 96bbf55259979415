package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.GuardType;
import io.pistore.integrity.PiLocation;
import io.pistore.integrity.PiType;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * REPORT SUPPORTED OPERATION CODES against what the unit really does, over loopback: every
 * operation code the all-commands list leaves out answers INVALID COMMAND OPERATION CODE and every
 * one it names does not; the one-command formats, RCTD and the service-action rules; and the SPC-2
 * reservation of RESERVE(6)/RELEASE(6) between two initiators and against persistent reservations.
 */
@Timeout(120)
class IscsiOperationCodesTest extends IscsiLoopbackFixture {
    @Override
    void createVolumes() throws IOException {
        super.createVolumes();
        store.create("t2", BlockFormat.of(512, 8, GuardType.CRC16, PiType.TYPE_2, PiLocation.LAST), 64);
    }

    IscsiTestInitiator open(String volume, String name) throws IOException {
        return loginAs(name, volume, "ImmediateData", "Yes");
    }

    static byte[] rsoc(boolean rctd, int options, int opcode, int sa) {
        byte[] c = new byte[12];
        c[0] = (byte) 0xA3;
        c[1] = 0x0C;
        c[2] = (byte) ((rctd ? 0x80 : 0) | options);
        c[3] = (byte) opcode;
        c[4] = (byte) (sa >>> 8);
        c[5] = (byte) sa;
        Pdu.putInt(c, 6, 65535);
        return c;
    }

    /** (opcode << 16 | service action, or 0xFFFF without) of each descriptor of the all-commands list. */
    static Set<Integer> listed(IscsiTestInitiator c, boolean rctd) throws IOException {
        IscsiTestInitiator.Result r = c.command(rsoc(rctd, 0, 0, 0), new byte[0], 0, 65535, true);
        assertEquals(GOOD, r.status());
        byte[] d = r.dataIn();
        assertEquals(d.length - 4, Pdu.getInt(d, 0), "COMMAND DATA LENGTH");
        Set<Integer> out = new HashSet<>();
        for (int o = 4; o < d.length; ) {
            boolean servactv = (d[o + 5] & 0x01) != 0;
            boolean ctdp = (d[o + 5] & 0x02) != 0;
            assertEquals(rctd, ctdp, "CTDP as RCTD asks");
            int sa = Cdb.u16(d, o + 2);
            assertTrue(servactv || sa == 0, "a service action only with SERVACTV");
            int cdbLength = Cdb.u16(d, o + 6);
            assertTrue(cdbLength == 6 || cdbLength == 10 || cdbLength == 12 || cdbLength == 16 || cdbLength == 32);
            out.add((d[o] & 0xff) << 16 | (servactv ? sa : 0xFFFF));
            o += 8;
            if (ctdp) {
                assertEquals(0x0A, Cdb.u16(d, o), "timeouts descriptor length");
                o += 12;
            }
        }
        return out;
    }

    @Test
    void theListIsExactlyWhatTheUnitRuns() throws Exception {
        try (IscsiTestInitiator c = open("v", "a")) {
            Set<Integer> all = listed(c, false);
            assertEquals(all, listed(c, true));
            assertTrue(all.contains(0x28 << 16 | 0xFFFF) && all.contains(0x9E << 16 | 0x10) && all.contains(0xA3 << 16 | 0x0C)
                    && all.contains(0x16 << 16 | 0xFFFF) && all.contains(0x5F << 16 | 0x06), all.toString());
            assertTrue(!all.contains(Cdb.VARIABLE_LENGTH << 16 | Cdb.READ_32), "32-byte CDBs serve Type 2 only");
            Set<Integer> withServiceActions = new HashSet<>();
            for (int k : all) {
                if ((k & 0xFFFF) != 0xFFFF) {
                    withServiceActions.add(k >>> 16);
                }
            }
            for (int op = 0; op < 256; op++) {
                if (withServiceActions.contains(op) || op == Cdb.VARIABLE_LENGTH) {
                    continue;
                }
                byte[] cdb = new byte[16];
                cdb[0] = (byte) op;
                IscsiTestInitiator.Result r = c.command(cdb, new byte[0], 0, 0, false);
                if (all.contains(op << 16 | 0xFFFF)) {
                    assertNotEquals(0x2000, r.ascq(), "listed opcode 0x" + Integer.toHexString(op) + " runs");
                } else {
                    assertEquals(CHECK, r.status(), "opcode 0x" + Integer.toHexString(op));
                    assertEquals(0x2000, r.ascq(), "unlisted opcode 0x" + Integer.toHexString(op)
                            + ": INVALID COMMAND OPERATION CODE");
                }
            }
            for (int op : withServiceActions) {
                for (int sa = 0; sa < 32; sa++) {
                    byte[] cdb = new byte[16];
                    cdb[0] = (byte) op;
                    cdb[1] = (byte) sa;
                    IscsiTestInitiator.Result r = c.command(cdb, new byte[0], 0, 0, false);
                    if (!all.contains(op << 16 | sa)) {
                        assertEquals(0x2400, r.ascq(), "unlisted service action " + sa + " of 0x" + Integer.toHexString(op));
                    } else {
                        assertNotEquals(0x2000, r.ascq());
                    }
                }
            }
        }
        try (IscsiTestInitiator t2 = open("t2", "a")) {
            assertTrue(listed(t2, false).contains(Cdb.VARIABLE_LENGTH << 16 | Cdb.WRITE_32), "Type 2 lists WRITE(32)");
        }
    }

    @Test
    void oneCommandFormats() throws Exception {
        try (IscsiTestInitiator c = open("v", "a")) {
            IscsiTestInitiator.Result r = c.command(rsoc(false, 1, 0x28, 0), new byte[0], 0, 65535, true);
            byte[] d = r.dataIn();
            assertEquals(0x03, d[1] & 0x07, "SUPPORT 011b");
            assertEquals(10, Cdb.u16(d, 2), "CDB SIZE");
            assertEquals(0x28, d[4] & 0xff, "usage data starts with the opcode");
            assertEquals(14, d.length);
            d = c.command(rsoc(true, 1, 0x28, 0), new byte[0], 0, 65535, true).dataIn();
            assertEquals(0x80, d[1] & 0x80, "CTDP");
            assertEquals(4 + 10 + 12, d.length);
            d = c.command(rsoc(false, 2, 0x9E, 0x10), new byte[0], 0, 65535, true).dataIn();
            assertEquals(0x03, d[1] & 0x07);
            assertEquals(16, Cdb.u16(d, 2));
            d = c.command(rsoc(false, 1, 0x04, 0), new byte[0], 0, 65535, true).dataIn();
            assertEquals(0x01, d[1] & 0x07, "FORMAT UNIT: SUPPORT 001b, not supported");
            d = c.command(rsoc(false, 2, Cdb.VARIABLE_LENGTH, Cdb.READ_32), new byte[0], 0, 65535, true).dataIn();
            assertEquals(0x01, d[1] & 0x07, "READ(32) on Type 1: not supported");
            d = c.command(rsoc(false, 3, 0x5E, 0x03), new byte[0], 0, 65535, true).dataIn();
            assertEquals(0x03, d[1] & 0x07, "options 011b with a service action");
            r = c.command(rsoc(false, 1, 0x5E, 0), new byte[0], 0, 65535, true);
            assertEquals(0x2400, r.ascq(), "an opcode with service actions asked without one");
            assertEquals(0xC0, r.sense()[15] & 0xC0, "SKSV, C/D: a field of the CDB");
            assertEquals(2, Cdb.u16(r.sense(), 16), "the field pointer names REPORTING OPTIONS, not the service action");
            assertEquals(0x2400, c.command(rsoc(false, 2, 0x28, 0), new byte[0], 0, 65535, true).ascq(),
                    "an opcode without service actions asked with one");
            assertEquals(0x2400, c.command(rsoc(false, 5, 0x28, 0), new byte[0], 0, 65535, true).ascq(),
                    "reporting options 101b");
            r = c.command(rsoc(false, 0, 0, 0), new byte[0], 0, 20, true);
            assertEquals(GOOD, r.status());
        }
        try (IscsiTestInitiator t2 = open("t2", "a")) {
            byte[] d = t2.command(rsoc(false, 2, Cdb.VARIABLE_LENGTH, Cdb.READ_32), new byte[0], 0, 65535, true).dataIn();
            assertEquals(0x03, d[1] & 0x07, "READ(32) on Type 2");
            assertEquals(32, Cdb.u16(d, 2));
        }
    }

    @Test
    void reserveAndReleaseSixBetweenTwoInitiators() throws Exception {
        try (IscsiTestInitiator a = open("v", "a"); IscsiTestInitiator b = open("v", "b")) {
            assertEquals(GOOD, run6(a, 0x16), "RESERVE(6)");
            assertEquals(GOOD, run6(a, 0x16), "again by the holder");
            assertEquals(CONFLICT, run6(b, 0x16));
            assertEquals(GOOD, run6(b, 0x17), "RELEASE(6) of another nexus does nothing");
            assertEquals(GOOD, run6(a, 0x1A), "MODE SENSE of the holder");
            assertEquals(CONFLICT, run6(b, 0x1A));
            assertEquals(CONFLICT, write(b));
            assertEquals(CONFLICT, read(b));
            assertEquals(CONFLICT, run6(b, 0x00), "TEST UNIT READY");
            assertEquals(GOOD, run6(b, 0x12), "INQUIRY always runs");
            assertEquals(GOOD, write(a));
            assertEquals(CONFLICT, prout(a, 0, 0, 0, 7, 0).status(),
                    "PERSISTENT RESERVE OUT under an SPC-2 reservation, even from its holder");
            assertEquals(GOOD, run6(a, 0x17));
            assertEquals(GOOD, write(b), "released");

            assertEquals(GOOD, prout(b, 0, 0, 0, 7, 0).status(), "REGISTER");
            assertEquals(CONFLICT, run6(a, 0x16), "RESERVE(6) while a key is registered");
            assertEquals(CONFLICT, run6(a, 0x17), "RELEASE(6) too");
            assertEquals(GOOD, prout(b, 0, 0, 7, 0, 0).status(), "unregister");
            assertEquals(GOOD, run6(a, 0x16));
        }
        // a's session has ended: the I_T nexus is lost, and its reservation with it
        try (IscsiTestInitiator b = open("v", "b")) {
            Eventually.await("the reservation goes with its holder's session", () -> {
                try {
                    return run6(b, 0x16) == GOOD;
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            assertEquals(GOOD, run6(b, 0x17));
        }
    }
}
