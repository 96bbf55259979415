package io.pistore.frontend.iscsi;

import static io.pistore.frontend.iscsi.IscsiReservationTest.KEY_A;
import static io.pistore.frontend.iscsi.IscsiReservationTest.KEY_B;
import static io.pistore.frontend.iscsi.IscsiReservationTest.prin;
import static io.pistore.frontend.iscsi.ScsiReservationsTest.specifyParam;
import static io.pistore.frontend.iscsi.ScsiReservationsTest.transportId;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * PERSISTENT RESERVE OUT REGISTER with SPEC_I_PT between initiators on loopback (SPC-4 5.14.7): one
 * initiator registers itself and initiators that have not logged in yet, by port (format 01b, the
 * ISID counts) or by name (00b); they then act under that registration when they log in. A list
 * naming a registered nexus registers nobody, malformed lists are refused, REPORT CAPABILITIES says
 * SIP_C, and APTPL keeps the registrations through a restart.
 */
@Timeout(60)
class IscsiSpecifyInitiatorPortsTest extends IscsiLoopbackFixture {
    static final String IQN = "iqn.2026-12.io.pistore:";
    static final long KEY_C = 0x0C0C_0C0CL;

    IscsiTestInitiator open(String name) throws IOException {
        return loginAs(name, "v", "ImmediateData", "Yes");
    }

    static IscsiTestInitiator.Result register(IscsiTestInitiator c, int action, byte[] param) throws IOException {
        return c.command(proutCdb(action, 0, param.length), param, param.length, param.length, false);
    }

    /** The initiator port of {@code name} logged in with the test initiator's default ISID. */
    static byte[] port(String name) {
        return transportId(1, IQN + name + ",i,0x" + Long.toHexString(IscsiTestInitiator.DEFAULT_ISID));
    }

    /** READ FULL STATUS, all of it. */
    static byte[] fullStatus(IscsiTestInitiator c) throws IOException {
        byte[] cdb = new byte[10];
        cdb[0] = 0x5E;
        cdb[1] = 3;
        cdb[7] = 4;
        IscsiTestInitiator.Result r = c.command(cdb, new byte[0], 0, 1024, true);
        assertEquals(GOOD, r.status());
        assertEquals(Pdu.getInt(r.dataIn(), 4) + 8, r.dataIn().length, "not cut by the allocation length");
        return r.dataIn();
    }

    @Test
    void initiatorsNamedBeforeTheyLogInReserveWithTheKeyWithoutRegistering() throws Exception {
        try (IscsiTestInitiator a = open("a")) {
            assertEquals(0x08, prin(a, 2)[2] & 0x08, "REPORT CAPABILITIES: SIP_C");
            assertEquals(GOOD, register(a, 0, specifyParam(0, KEY_A, 0, port("b"), transportId(0, IQN + "c"))).status(),
                    "a, b's port and initiator c, neither logged in");
        }
        try (IscsiTestInitiator b = open("b"); IscsiTestInitiator c = open("c"); IscsiTestInitiator a = open("a")) {
            byte[] keys = prin(c, 0);
            assertEquals(1, Pdu.getInt(keys, 0), "PRgeneration: one REGISTER");
            assertEquals(24, Pdu.getInt(keys, 4), "three registrations");
            for (int i = 0; i < 3; i++) {
                assertEquals(KEY_A, Pdu.getLong(keys, 8 + 8 * i));
            }
            assertEquals(GOOD, prout(b, 1, ScsiReservations.EXCLUSIVE_ACCESS, KEY_A, 0, 0).status(),
                    "b reserves with the key a gave it");
            assertEquals(GOOD, write(b));
            assertEquals(CONFLICT, read(a), "a is registered but does not hold Exclusive Access");
            assertEquals(CONFLICT, read(c));
            assertEquals(GOOD, prout(c, 2, ScsiReservations.EXCLUSIVE_ACCESS, KEY_A, 0, 0).status(),
                    "c is registered too: its RELEASE of a reservation it does not hold is GOOD and does nothing");
            assertEquals(CONFLICT, read(c));
            byte[] full = fullStatus(a);
            int second = 8 + 24 + Pdu.getInt(full, 8 + 20);
            assertEquals(0x01, full[second + 12] & 0x01, "READ FULL STATUS: b's registration holds it");
            int third = second + 24 + Pdu.getInt(full, second + 20);
            assertEquals(0x05, full[third + 24], "c's registration: a format 00b TransportID");
            assertEquals(IQN + "c", new String(full, third + 28, IQN.length() + 1, java.nio.charset.StandardCharsets.UTF_8));
            assertEquals(GOOD, prout(c, 4, ScsiReservations.WRITE_EXCLUSIVE, KEY_A, KEY_A, 0).status(),
                    "PREEMPT of the shared key by c");
            assertEquals(GOOD, write(c), "c holds the reservation now");
            assertUnitAttention(0x2A05, tur(a));
            assertUnitAttention(0x2A05, tur(b));
            assertEquals(8, Pdu.getInt(prin(a, 0), 4), "only c's registration is left");
        }
    }

    @Test
    void aPortRegistrationWaitsForThatIsid() throws Exception {
        try (IscsiTestInitiator a = open("a")) {
            assertEquals(GOOD, register(a, 0, specifyParam(0, KEY_A, 0, transportId(1, IQN + "d,i,0x1"))).status());
            assertEquals(GOOD, prout(a, 1, ScsiReservations.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, KEY_A, 0, 0).status());
        }
        try (IscsiTestInitiator other = open("d"); IscsiTestInitiator named = loginAs("d", 1, "v", "ImmediateData", "Yes")) {
            assertEquals(CONFLICT, write(other), "d with another ISID is another, unregistered, I_T nexus");
            assertEquals(GOOD, write(named), "d with ISID 1 is registered: Registrants Only lets it write");
            assertEquals(GOOD, prout(other, 0, 0, 0, KEY_B, 0).status(), "the other nexus registers itself");
            assertEquals(GOOD, write(other));
        }
    }

    @Test
    void aListNamingARegisteredNexusRegistersNobody() throws Exception {
        try (IscsiTestInitiator b = open("b"); IscsiTestInitiator c = open("c")) {
            assertEquals(GOOD, prout(b, 0, 0, 0, KEY_B, 0).status());
            assertEquals(GOOD, prout(b, 1, ScsiReservations.WRITE_EXCLUSIVE_REGISTRANTS_ONLY, KEY_B, 0, 0).status());
            byte[] before = prin(b, 0);
            IscsiTestInitiator.Result r = register(c, 0, specifyParam(0, KEY_C, 0, transportId(0, IQN + "d"), port("b")));
            assertEquals(CHECK, r.status());
            assertEquals(0x2600, r.ascq(), "b is registered: INVALID FIELD IN PARAMETER LIST");
            assertTrue(java.util.Arrays.equals(before, prin(b, 0)), "nothing registered, the generation as it was");
            assertEquals(CONFLICT, write(c), "c is not registered");
            try (IscsiTestInitiator d = open("d")) {
                assertEquals(CONFLICT, write(d), "neither is d");
            }

            byte[] beyond = specifyParam(0, KEY_C, 0, port("d"));
            Pdu.putInt(beyond, 24, beyond.length - 28 + 4);
            assertEquals(0x1A00, register(c, 0, beyond).ascq(), "TRANSPORTID PARAMETER DATA LENGTH past the list");
            byte[] cut = port("d");
            cut[3] += 8;
            assertEquals(0x1A00, register(c, 0, specifyParam(0, KEY_C, 0, cut)).ascq(), "a TransportID past the list");
            byte[] sas = port("d");
            sas[0] = 0x46;
            assertEquals(0x2600, register(c, 0, specifyParam(0, KEY_C, 0, sas)).ascq(), "protocol identifier 6h");
            assertEquals(0x2600, register(c, 6, specifyParam(0, KEY_C, 0, port("d"))).ascq(),
                    "SPEC_I_PT with REGISTER AND IGNORE EXISTING KEY");
            assertEquals(0x2400, register(b, 0, specifyParam(KEY_B, KEY_B, 0, port("d"))).ascq(),
                    "SPEC_I_PT from a registered nexus: INVALID FIELD IN CDB");
            assertTrue(java.util.Arrays.equals(before, prin(b, 0)), "still nothing registered");
            assertEquals(GOOD, register(c, 0, specifyParam(0, KEY_C, 0, port("d"))).status(), "a good list goes");
            assertEquals(GOOD, write(c));
        }
    }

    @Test
    void aptplKeepsTheNamedRegistrationsThroughARestart() throws Exception {
        serve(options().reservationsDirectory(volumesDirectory()));
        Path file = volumesDirectory().resolve("v" + io.pistore.engine.volume.VolumeStore.RESERVATIONS_SUFFIX);
        try (IscsiTestInitiator a = open("a")) {
            assertEquals(GOOD, register(a, 0, specifyParam(0, KEY_A, 0x01, transportId(0, IQN + "b"))).status(),
                    "with APTPL, initiator b by its name");
        }
        assertTrue(Files.readString(file).contains("key " + Long.toHexString(KEY_A) + " " + IQN + "b\n"),
                Files.readString(file));
        serve(options().reservationsDirectory(volumesDirectory()));
        try (IscsiTestInitiator b = open("b"); IscsiTestInitiator c = open("c")) {
            assertEquals(16, Pdu.getInt(prin(b, 0), 4), "a's and b's registrations came back");
            assertEquals(GOOD, prout(b, 1, ScsiReservations.WRITE_EXCLUSIVE, KEY_A, 0, 0).status(),
                    "b, first logged in after the restart, reserves with the key");
            assertEquals(GOOD, write(b));
            assertEquals(CONFLICT, write(c));
            assertTrue(log.stream().anyMatch(l -> l.contains("2 registration(s)")), log.toString());
        }
    }
}
