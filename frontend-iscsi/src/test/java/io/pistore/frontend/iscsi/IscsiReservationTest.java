package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Persistent reservations between two initiators on loopback (SPC-4 5.9): registration, the
 * reservation types holding off the other initiator's writes or reads with RESERVATION CONFLICT,
 * PREEMPT taking the reservation over, RELEASE and CLEAR, REGISTER AND MOVE handing it to the other
 * session, what PERSISTENT RESERVE IN reports, and the parameter lists that are refused.
 */
@Timeout(60)
class IscsiReservationTest extends IscsiLoopbackFixture {
    static final long KEY_A = 0x1111_2222_3333_4444L;
    static final long KEY_B = 0x5555_6666_7777_8888L;

    IscsiTestInitiator open(String name) throws IOException {
        return loginAs(name, "v", "ImmediateData", "Yes");
    }

    static byte[] prin(IscsiTestInitiator c, int action) throws IOException {
        byte[] cdb = new byte[10];
        cdb[0] = 0x5E;
        cdb[1] = (byte) action;
        cdb[8] = (byte) 200;
        IscsiTestInitiator.Result r = c.command(cdb, new byte[0], 0, 200, true);
        assertEquals(GOOD, r.status());
        return r.dataIn();
    }

    @Test
    void aReservationHoldsOffTheOtherInitiatorAsItsTypeSays() throws Exception {
        try (IscsiTestInitiator a = open("a"); IscsiTestInitiator b = open("b")) {
            assertEquals(CONFLICT, prout(a, 0, 0, KEY_A, KEY_A, 0).status(), "REGISTER of an unregistered nexus with a key");
            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A, 0).status());
            assertEquals(GOOD, prout(b, 6, 0, 12345, KEY_B, 0).status(), "REGISTER AND IGNORE EXISTING KEY");
            byte[] keys = prin(a, 0);
            assertEquals(2, Pdu.getInt(keys, 0), "PRgeneration");
            assertEquals(16, Pdu.getInt(keys, 4));
            assertEquals(KEY_A, Pdu.getLong(keys, 8));
            assertEquals(KEY_B, Pdu.getLong(keys, 16));

            assertEquals(CONFLICT, prout(a, 1, 1, KEY_B, 0, 0).status(), "RESERVE with another nexus's key");
            assertEquals(GOOD, prout(a, 1, ScsiReservations.WRITE_EXCLUSIVE, KEY_A, 0, 0).status());
            byte[] res = prin(b, 1);
            assertEquals(16, Pdu.getInt(res, 4));
            assertEquals(KEY_A, Pdu.getLong(res, 8));
            assertEquals(ScsiReservations.WRITE_EXCLUSIVE, res[21]);
            assertEquals(GOOD, write(a));
            assertEquals(GOOD, read(b), "Write Exclusive lets others read");
            assertEquals(CONFLICT, write(b), "and holds off their writes");
            assertEquals(CONFLICT, prout(b, 1, ScsiReservations.WRITE_EXCLUSIVE, KEY_B, 0, 0).status());

            assertEquals(GOOD, prout(b, 4, ScsiReservations.EXCLUSIVE_ACCESS, KEY_B, KEY_A, 0).status(), "PREEMPT");
            assertUnitAttention(0x2A05, tur(a)); // REGISTRATIONS PREEMPTED
            assertEquals(CONFLICT, read(a), "A lost its registration and Exclusive Access holds off its reads");
            assertEquals(CONFLICT, write(a));
            assertEquals(GOOD, write(b));
            keys = prin(a, 0);
            assertEquals(8, Pdu.getInt(keys, 4), "only B's key is left");
            assertEquals(KEY_B, Pdu.getLong(keys, 8));

            IscsiTestInitiator.Result bad = prout(b, 2, ScsiReservations.WRITE_EXCLUSIVE, KEY_B, 0, 0);
            assertEquals(CHECK, bad.status());
            assertEquals(0x2604, bad.ascq(), "RELEASE with another type: invalid release of persistent reservation");
            assertEquals(GOOD, prout(b, 2, ScsiReservations.EXCLUSIVE_ACCESS, KEY_B, 0, 0).status());
            assertEquals(GOOD, write(a), "released");
            assertEquals(0, Pdu.getInt(prin(a, 1), 4), "no reservation");

            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A, 0).status());
            assertEquals(GOOD, prout(a, 1, ScsiReservations.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, KEY_A, 0, 0).status());
            assertEquals(GOOD, write(b), "a registrant writes under Write Exclusive - Registrants Only");
            assertEquals(GOOD, prout(b, 3, 0, KEY_B, 0, 0).status(), "CLEAR");
            assertUnitAttention(0x2A03, tur(a)); // RESERVATIONS PREEMPTED
            assertEquals(0, Pdu.getInt(prin(a, 0), 4), "no keys after CLEAR");
            assertEquals(GOOD, write(b));
        }
    }

    @Test
    void capabilitiesAndRefusedParameterLists() throws Exception {
        try (IscsiTestInitiator a = open("a")) {
            byte[] caps = prin(a, 2);
            assertEquals(8, caps.length);
            assertEquals(0, caps[2] & 0x01, "PTPL_C: reservations do not persist through power loss");
            assertEquals((byte) 0xEA, caps[4]);
            assertEquals(0x01, caps[5]);
            IscsiTestInitiator.Result aptpl = prout(a, 0, 0, 0, KEY_A, 0x01);
            assertEquals(CHECK, aptpl.status());
            assertEquals(0x2600, aptpl.ascq(), "APTPL: invalid field in parameter list");
            IscsiTestInitiator.Result shortList = a.command(proutCdb(0, 0, 20), new byte[20], 20, 20, false);
            assertEquals(0x1A00, shortList.ascq(), "parameter list length error");
            byte[] cdb = new byte[10];
            cdb[0] = 0x5E;
            cdb[1] = 4;
            cdb[8] = 100;
            assertEquals(0x2400, a.command(cdb, new byte[0], 0, 100, true).ascq(), "PERSISTENT RESERVE IN action 4");
            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A, 0).status());
            byte[] full = prin(a, 3);
            assertEquals(KEY_A, Pdu.getLong(full, 8));
            String id = new String(full, 8 + 28, Pdu.getInt(full, 8 + 20) - 4, java.nio.charset.StandardCharsets.US_ASCII);
            assertEquals(true, id.startsWith("iqn.2026-12.io.pistore:a,i,0x"), id);
        }
    }

    IscsiServer restart() throws IOException {
        return serve(options().reservationsDirectory(volumesDirectory()));
    }

    @Test
    void aptplKeepsTheReservationsThroughARestart() throws Exception {
        restart();
        Path file = volumesDirectory().resolve("v" + io.pistore.engine.volume.VolumeStore.RESERVATIONS_SUFFIX);
        try (IscsiTestInitiator a = open("a")) {
            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A, 0x05).status(), "REGISTER with APTPL and ALL_TG_PT");
            assertEquals(GOOD, prout(a, 1, ScsiReservations.WRITE_EXCLUSIVE, KEY_A, 0, 0).status());
            byte[] caps = prin(a, 2);
            assertEquals(0x01, caps[2] & 0x01, "PTPL_C");
            assertEquals(0x01, caps[3] & 0x01, "PTPL_A");
        }
        assertTrue(Files.exists(file));
        if (io.pistore.engine.volume.PrivateFiles.posix(file)) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        }
        restart();
        try (IscsiTestInitiator b = open("b")) {
            byte[] keys = prin(b, 0);
            assertEquals(8, Pdu.getInt(keys, 4), "a's registration came back");
            assertEquals(KEY_A, Pdu.getLong(keys, 8));
            byte[] res = prin(b, 1);
            assertEquals(KEY_A, Pdu.getLong(res, 8));
            assertEquals(ScsiReservations.WRITE_EXCLUSIVE, res[21]);
            assertEquals(CONFLICT, write(b), "and so did its reservation");
            assertEquals(0x03, prin(b, 3)[8 + 12] & 0x03, "held, and registered for every target port");
            assertTrue(log.stream().anyMatch(l -> l.contains("kept through the restart")), log.toString());
        }
        try (IscsiTestInitiator a = open("a")) {
            assertEquals(GOOD, write(a), "the same I_T nexus holds it");
            assertEquals(GOOD, prout(a, 0, 0, KEY_A, KEY_A, 0).status(), "REGISTER with APTPL 0");
            assertTrue(!Files.exists(file), "nothing is kept any more");
        }
        restart();
        try (IscsiTestInitiator b = open("b")) {
            assertEquals(0, Pdu.getInt(prin(b, 0), 4), "no registrations after this restart");
        }
        Files.writeString(file, "pistore-reservations 1\nkey zz iqn.x,i,0x1\n");
        restart();
        try (IscsiTestInitiator b = open("b")) {
            assertEquals(0, Pdu.getInt(prin(b, 0), 4), "a damaged file is not loaded");
            assertEquals(GOOD, write(b));
            assertTrue(log.stream().anyMatch(l -> l.contains("not restored") && l.contains("line 2")), log.toString());
        }
        store.delete("v");
        assertTrue(!Files.exists(file), "deleted with the volume");
        store.create("v", BlockFormat.of(512, 8), 64);
    }

    /** REGISTER AND MOVE from {@code c} with relative target port 1 and {@code transportId}. */
    static IscsiTestInitiator.Result move(IscsiTestInitiator c, long key, long serviceKey, int flags, byte[] transportId)
            throws IOException {
        byte[] p = ScsiReservationsTest.moveParam(key, serviceKey, flags, 1, transportId);
        return c.command(proutCdb(7, 0, p.length), p, p.length, p.length, false);
    }

    @Test
    void registerAndMoveHandsTheReservationToAnotherSessionAndKeepsItThroughARestart() throws Exception {
        restart();
        Path file = volumesDirectory().resolve("v" + io.pistore.engine.volume.VolumeStore.RESERVATIONS_SUFFIX);
        try (IscsiTestInitiator a = open("a"); IscsiTestInitiator b = open("b")) {
            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A, 0x01).status(), "REGISTER with APTPL");
            assertEquals(GOOD, prout(a, 1, ScsiReservations.EXCLUSIVE_ACCESS, KEY_A, 0, 0).status());
            assertEquals(CONFLICT, write(b));
            byte[] nameOnly = ScsiReservationsTest.transportId(0, "iqn.2026-12.io.pistore:b");
            assertEquals(CONFLICT, move(b, KEY_B, KEY_B, 0x01, nameOnly).status(), "b is not registered");
            assertEquals(GOOD, move(a, KEY_A, KEY_B, 0x01, nameOnly).status(), "to b's one session, by its name");
            assertEquals(GOOD, write(b), "b holds the Exclusive Access reservation");
            assertEquals(CONFLICT, read(a), "a, still registered, does not");
            byte[] res = prin(a, 1);
            assertEquals(KEY_B, Pdu.getLong(res, 8));
            assertEquals(ScsiReservations.EXCLUSIVE_ACCESS, res[21]);
            assertTrue(Files.readString(file).contains("reservation 3 iqn.2026-12.io.pistore:b,i,0x"), Files.readString(file));

            byte[] full = prin(b, 3);
            int o = 8;
            byte[] idOfA = null;
            while (o < 8 + Pdu.getInt(full, 4)) {
                int idLength = Pdu.getInt(full, o + 20);
                if ((full[o + 12] & 0x01) == 0) {
                    idOfA = java.util.Arrays.copyOfRange(full, o + 24, o + 24 + idLength);
                }
                o += 24 + idLength;
            }
            assertEquals(KEY_B, Pdu.getLong(full, 8 + 24 + Pdu.getInt(full, 8 + 20)), "b's registration follows a's");
            IscsiTestInitiator.Result badPort = b.command(proutCdb(7, 0, 24 + idOfA.length),
                    ScsiReservationsTest.moveParam(KEY_B, KEY_A, 0, 0, idOfA), 24 + idOfA.length, 24 + idOfA.length, false);
            assertEquals(0x2600, badPort.ascq(), "relative target port 0: invalid field in parameter list");
            assertEquals(GOOD, move(b, KEY_B, KEY_A, 0x03, idOfA).status(),
                    "back to a, by the TransportID READ FULL STATUS reports, with UNREG and APTPL");
            assertEquals(GOOD, write(a));
            assertEquals(CONFLICT, write(b), "b unregistered itself");
            byte[] keys = prin(a, 0);
            assertEquals(8, Pdu.getInt(keys, 4));
            assertEquals(KEY_A, Pdu.getLong(keys, 8));
        }
        restart();
        try (IscsiTestInitiator b = open("b"); IscsiTestInitiator a = open("a")) {
            assertEquals(CONFLICT, read(b), "the moved reservation came back after the restart");
            assertEquals(GOOD, write(a));
        }
    }
}
