package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The reservation rules that two libiscsi sessions do not reach, on {@link ScsiReservations}
 * alone: the all-registrants types (every registrant holds the reservation, which lasts until the
 * last one leaves), PREEMPT with a zero key under them, the service actions refused, REGISTER AND
 * MOVE with its TransportIDs and refusals, and the SPC-2 RESERVE(10)/RELEASE(10).
 */
class ScsiReservationsTest {
    static final String A = "iqn.a,i,0x000000000001";
    static final String B = "iqn.b,i,0x000000000002";
    static final String C = "iqn.c,i,0x000000000003";
    static final byte[] WRITE = IscsiLoopbackFixture.cdb10(0x2A, 0, 1);
    static final byte[] READ = IscsiLoopbackFixture.cdb10(0x28, 0, 1);

    final ScsiReservations r = new ScsiReservations(new ScsiUnitAttentions());

    static byte[] cdb(int action, int type) {
        byte[] c = new byte[10];
        c[0] = 0x5F;
        c[1] = (byte) action;
        c[2] = (byte) type;
        c[8] = 24;
        return c;
    }

    static byte[] param(long key, long serviceKey) {
        byte[] p = new byte[24];
        Pdu.putLong(p, 0, key);
        Pdu.putLong(p, 8, serviceKey);
        return p;
    }

    int out(String nexus, int action, int type, long key, long serviceKey) {
        return r.out(nexus, cdb(action, type), param(key, serviceKey)).status;
    }

    byte[] readReservation() {
        byte[] c = new byte[10];
        c[0] = 0x5E;
        c[1] = 1;
        c[8] = 100;
        return r.in(c).dataIn;
    }

    /**
     * An all-registrants reservation outlives the registration of the nexus that made it, so the
     * state kept through a restart (and shared by a replicated volume's peers) holds it too.
     */
    @Test
    void anAllRegistrantsReservationWhoseMakerLeftIsKept(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        ScsiReservationFile file = new ScsiReservationFile(dir, "v");
        ScsiReservations kept = new ScsiReservations(new ScsiUnitAttentions(), () -> 1, file, line -> { });
        byte[] aptpl = param(0, 1);
        aptpl[20] = 0x01;
        assertEquals(0, kept.out(A, cdb(6, 0), aptpl).status);
        assertEquals(0, kept.out(B, cdb(6, 0), param(0, 2)).status);
        assertEquals(0, kept.out(A, cdb(1, ScsiReservations.WRITE_EXCLUSIVE_ALL_REGISTRANTS), param(1, 0)).status);
        byte[] leave = param(1, 0);
        leave[20] = 0x01;
        assertEquals(0, kept.out(A, cdb(0, 0), leave).status, "the maker unregisters; B still holds it");
        java.util.List<String> log = new java.util.ArrayList<>();
        ScsiReservations back = new ScsiReservations(new ScsiUnitAttentions(), () -> 1, file, log::add);
        assertTrue(log.stream().anyMatch(l -> l.contains("kept through the restart")), log.toString());
        assertTrue(back.conflicts(C, WRITE), "the reservation came back");
        assertFalse(back.conflicts(B, WRITE), "held by every registrant");
    }

    @Test
    void allRegistrantsHoldTheReservationUntilTheLastLeaves() {
        assertEquals(0, out(A, 6, 0, 0, 1));
        assertEquals(0, out(B, 6, 0, 0, 2));
        assertEquals(0, out(A, 1, ScsiReservations.EXCLUSIVE_ACCESS_ALL_REGISTRANTS, 1, 0));
        byte[] res = readReservation();
        assertEquals(0, Pdu.getLong(res, 8), "an all-registrants reservation reports key 0");
        assertEquals(ScsiReservations.EXCLUSIVE_ACCESS_ALL_REGISTRANTS, res[21]);
        assertFalse(r.conflicts(B, WRITE), "every registrant is a holder");
        assertTrue(r.conflicts(C, READ), "an unregistered nexus may not even read");
        assertEquals(0, out(A, 0, 0, 1, 0), "the nexus that reserved unregisters");
        assertEquals(16, Pdu.getInt(readReservation(), 4), "the reservation stays while B is registered");
        assertTrue(r.conflicts(A, WRITE));
        assertEquals(0, out(B, 0, 0, 2, 0));
        assertEquals(0, Pdu.getInt(readReservation(), 4), "gone with the last registrant");
        assertFalse(r.conflicts(C, WRITE));
    }

    @Test
    void preemptWithAZeroKeyTakesAnAllRegistrantsReservationOver() {
        out(A, 6, 0, 0, 1);
        out(B, 6, 0, 0, 2);
        out(C, 6, 0, 0, 3);
        assertEquals(0, out(A, 1, ScsiReservations.WRITE_EXCLUSIVE_ALL_REGISTRANTS, 1, 0));
        assertEquals(0, out(B, 4, ScsiReservations.WRITE_EXCLUSIVE, 2, 0));
        byte[] res = readReservation();
        assertEquals(2, Pdu.getLong(res, 8), "B holds a Write Exclusive reservation now");
        assertEquals(ScsiReservations.WRITE_EXCLUSIVE, res[21]);
        assertTrue(r.conflicts(A, WRITE), "A's and C's registrations went");
        assertTrue(r.conflicts(C, WRITE));
        assertFalse(r.conflicts(C, READ));
        assertEquals(ScsiResult.RESERVATION_CONFLICT, out(A, 1, ScsiReservations.WRITE_EXCLUSIVE, 1, 0));
    }

    @Test
    void refusedActionsAndPreemptsWithoutAVictim() {
        out(A, 6, 0, 0, 1);
        assertEquals(0x2400, ascq(r.out(A, cdb(8, 0), param(1, 2))), "service action 8");
        assertEquals(0x2400, ascq(r.out(A, cdb(1, 2), param(1, 0))), "type 2 is not a reservation type");
        assertEquals(0x2600, ascq(r.out(A, cdb(4, 1), param(1, 0))), "PREEMPT of key 0 without a reservation");
        assertEquals(ScsiResult.RESERVATION_CONFLICT, out(A, 4, 1, 1, 99), "PREEMPT of a key nobody has");
        byte[] specifyPorts = param(0, 5);
        specifyPorts[20] = 0x08;
        assertEquals(0x2600, ascq(r.out(B, cdb(6, 0), specifyPorts)), "SPEC_I_PT with REGISTER AND IGNORE EXISTING KEY");
        assertEquals(0x2600, ascq(r.out(A, cdb(1, 1), specifyPorts)), "SPEC_I_PT with RESERVE");
    }

    byte[] fullStatus() {
        byte[] c = new byte[10];
        c[0] = 0x5E;
        c[1] = 3;
        c[8] = (byte) 200;
        return r.in(c).dataIn;
    }

    @Test
    void allTargetPortsIsTakenAndReported() {
        byte[] caps = new byte[10];
        caps[0] = 0x5E;
        caps[1] = 2;
        caps[8] = 8;
        assertEquals(0x04, r.in(caps).dataIn[2] & 0x04, "ATP_C");
        assertEquals(0x08, r.in(caps).dataIn[2] & 0x08, "SIP_C");
        byte[] all = param(0, 1);
        all[20] = 0x04;
        assertEquals(0, r.out(A, cdb(0, 0), all).status, "REGISTER with ALL_TG_PT");
        assertEquals(0, out(B, 6, 0, 0, 2));
        byte[] full = fullStatus();
        int second = 8 + 24 + Pdu.getInt(full, 8 + 20);
        assertEquals(0x02, full[8 + 12] & 0x02, "A's registration was made for every target port");
        assertEquals(0, full[second + 12] & 0x02, "B's was not");
        assertEquals(1, Pdu.getLong(full, 8));
        byte[] reserveWithIt = param(1, 0);
        reserveWithIt[20] = 0x04;
        assertEquals(0, r.out(A, cdb(1, ScsiReservations.WRITE_EXCLUSIVE), reserveWithIt).status,
                "ALL_TG_PT is ignored by RESERVE");
        assertEquals(0, out(A, 6, 0, 0, 3), "registered again without ALL_TG_PT");
        assertEquals(0, fullStatus()[8 + 12] & 0x02);
        assertEquals(0x01, fullStatus()[8 + 12] & 0x01, "A holds the reservation");
    }


    /** A REGISTER AND MOVE parameter list: keys, UNREG/APTPL flags, relative target port, TransportID. */
    static byte[] moveParam(long key, long serviceKey, int flags, int port, byte[] transportId) {
        byte[] p = new byte[24 + transportId.length];
        Pdu.putLong(p, 0, key);
        Pdu.putLong(p, 8, serviceKey);
        p[17] = (byte) flags;
        p[18] = (byte) (port >>> 8);
        p[19] = (byte) port;
        Pdu.putInt(p, 20, transportId.length);
        System.arraycopy(transportId, 0, p, 24, transportId.length);
        return p;
    }

    /** An iSCSI TransportID of format {@code format} holding {@code text}, null-terminated and padded. */
    static byte[] transportId(int format, String text) {
        byte[] name = text.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        int length = Math.max(24, (4 + name.length + 1 + 3) & ~3);
        byte[] d = new byte[length];
        d[0] = (byte) (format << 6 | 5);
        d[3] = (byte) (length - 4);
        System.arraycopy(name, 0, d, 4, name.length);
        return d;
    }

    ScsiResult move(String nexus, byte[] param) {
        byte[] c = cdb(7, 0);
        Pdu.putInt(c, 5, param.length);
        return r.out(nexus, c, param);
    }

    byte[] readKeys() {
        byte[] c = new byte[10];
        c[0] = 0x5E;
        c[8] = 100;
        return r.in(c).dataIn;
    }

    @Test
    void registerAndMoveHandsTheReservationToTheNexusTheTransportIdNames() {
        ScsiUnitAttentions ua = new ScsiUnitAttentions();
        ScsiReservations res = new ScsiReservations(ua);
        ua.attach(A);
        ua.attach(B);
        assertEquals(0, res.out(A, cdb(0, 0), param(0, 1)).status);
        assertEquals(0, res.out(A, cdb(1, ScsiReservations.EXCLUSIVE_ACCESS), param(1, 0)).status);
        byte[] c = cdb(7, 0);
        byte[] p = moveParam(1, 7, 0, 1, transportId(1, "IQN.B,i,0x2"));
        Pdu.putInt(c, 5, p.length);
        assertEquals(0, res.out(A, c, p).status, "the port spelled in other case and with a short ISID");
        assertTrue(res.conflicts(A, READ), "A no longer holds the Exclusive Access reservation");
        assertFalse(res.conflicts(B, WRITE), "B does");
        byte[] k = new byte[10];
        k[0] = 0x5E;
        k[8] = 100;
        byte[] keys = res.in(k).dataIn;
        assertEquals(2, Pdu.getInt(keys, 0), "PRgeneration: a REGISTER and the move");
        assertEquals(16, Pdu.getInt(keys, 4), "A stays registered without UNREG");
        assertEquals(7, Pdu.getLong(keys, 16), "B registered with the service action key");
        k[1] = 1;
        byte[] held = res.in(k).dataIn;
        assertEquals(7, Pdu.getLong(held, 8), "the reservation is B's key's");
        assertEquals(ScsiReservations.EXCLUSIVE_ACCESS, held[21], "of the same type");
        assertEquals(0, ua.pending(A) + ua.pending(B), "no unit attention");
        assertEquals(ScsiResult.RESERVATION_CONFLICT, res.out(A, c, moveParam(1, 8, 0, 1, transportId(1, A))).status,
                "A is registered but no longer the holder");
    }

    @Test
    void registerAndMoveWithUnregAndANameOnlyTransportId() {
        assertEquals(0, out(A, 0, 0, 0, 1));
        assertEquals(0, out(B, 0, 0, 0, 2));
        assertEquals(0, out(A, 1, ScsiReservations.WRITE_EXCLUSIVE, 1, 0));
        assertEquals(0, move(A, moveParam(1, 9, 0x02, 1, transportId(0, "iqn.b"))).status,
                "format 00b names B's one registered nexus; UNREG");
        byte[] keys = readKeys();
        assertEquals(8, Pdu.getInt(keys, 4), "A unregistered itself");
        assertEquals(9, Pdu.getLong(keys, 8), "B's key replaced by the service action key");
        assertEquals(9, Pdu.getLong(readReservation(), 8));
        assertTrue(r.conflicts(A, WRITE));
        assertFalse(r.conflicts(B, WRITE));
        assertEquals(ScsiResult.RESERVATION_CONFLICT, move(A, moveParam(1, 3, 0, 1, transportId(1, C))).status,
                "an unregistered nexus");
    }

    @Test
    void registerAndMoveRefusals() {
        String b2 = "iqn.b,i,0x000000000009";
        assertEquals(0, out(A, 0, 0, 0, 1));
        assertEquals(0, out(B, 0, 0, 0, 2));
        assertEquals(0x2400, ascq(move(A, moveParam(1, 5, 0, 1, transportId(1, C)))),
                "no reservation to move: INVALID FIELD IN CDB");
        assertEquals(0, out(A, 1, ScsiReservations.WRITE_EXCLUSIVE, 1, 0));
        assertEquals(0, out(b2, 0, 0, 0, 4));
        byte[] before = readKeys();
        assertEquals(-ScsiResult.RESERVATION_CONFLICT, ascq(move(C, moveParam(0, 5, 0, 1, transportId(1, B)))),
                "an unregistered nexus");
        assertEquals(-ScsiResult.RESERVATION_CONFLICT, ascq(move(A, moveParam(2, 5, 0, 1, transportId(1, B)))),
                "a key that is not A's");
        assertEquals(-ScsiResult.RESERVATION_CONFLICT, ascq(move(B, moveParam(2, 5, 0, 1, transportId(1, C)))),
                "a registrant that does not hold the reservation");
        byte[] shortList = cdb(7, 0);
        Pdu.putInt(shortList, 5, 20);
        assertEquals(0x1A00, ascq(r.out(A, shortList, new byte[20])), "a list shorter than its header");
        byte[] cut = moveParam(1, 5, 0, 1, transportId(1, B));
        Pdu.putInt(cut, 20, cut.length - 24 + 4);
        assertEquals(0x1A00, ascq(move(A, cut)), "a TransportID longer than the list");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 0, 0, 1, transportId(1, B)))), "service action key 0");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 0, transportId(1, B)))), "relative target port 0");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 2, transportId(1, B)))), "relative target port 2");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0x01, 1, transportId(1, B)))),
                "APTPL without a place to keep it");
        byte[] fibreChannel = transportId(1, B);
        fibreChannel[0] = 0x40;
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 1, fibreChannel))), "protocol identifier 0");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 1, transportId(2, B)))), "format 10b");
        byte[] unterminated = transportId(1, B);
        java.util.Arrays.fill(unterminated, 4, unterminated.length, (byte) 'x');
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 1, unterminated))), "a name without its null");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 1, transportId(1, "iqn.b,i,0xZZ")))), "an ISID not in hex");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 1, transportId(1, "iqn.b,i,0x1234567890abc")))),
                "an ISID of 13 digits");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 1, transportId(1, "iqn.b")))), "format 01b without an ISID");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 1, transportId(1, A.toUpperCase())))), "A itself");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 1, transportId(0, "iqn.a")))), "A's own initiator");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 1, transportId(0, "iqn.z")))),
                "an initiator with no nexus here");
        assertEquals(0x2600, ascq(move(A, moveParam(1, 5, 0, 1, transportId(0, "iqn.b")))),
                "an initiator with two nexuses");
        assertTrue(java.util.Arrays.equals(before, readKeys()), "nothing changed");
        assertEquals(1, Pdu.getLong(readReservation(), 8));

        assertEquals(0, out(A, 2, ScsiReservations.WRITE_EXCLUSIVE, 1, 0));
        assertEquals(0, out(A, 1, ScsiReservations.WRITE_EXCLUSIVE_ALL_REGISTRANTS, 1, 0));
        assertEquals(-ScsiResult.RESERVATION_CONFLICT, ascq(move(A, moveParam(1, 5, 0, 1, transportId(1, C)))),
                "an all-registrants reservation does not move");
    }

    @Test
    void registerAndMoveToANexusNotSeenYetRegistersIt() {
        assertEquals(0, out(A, 0, 0, 0, 1));
        assertEquals(0, out(A, 1, ScsiReservations.EXCLUSIVE_ACCESS_REGISTRANTS_ONLY, 1, 0));
        assertEquals(0, move(A, moveParam(1, 6, 0x02, 1, transportId(1, C))).status);
        assertEquals(6, Pdu.getLong(readKeys(), 8));
        assertEquals(8, Pdu.getInt(readKeys(), 4), "only C is registered");
        assertFalse(r.conflicts(C, WRITE), "C holds the reservation once it logs in");
        assertTrue(r.conflicts(A, READ));
    }

    @Test
    void spc2ReserveAndReleaseOfTenBytes() {
        byte[] reserve10 = new byte[10];
        reserve10[0] = 0x56;
        byte[] release10 = new byte[10];
        release10[0] = 0x57;
        assertEquals(0, r.reserveSpc2(A, reserve10).status);
        assertTrue(r.conflicts(B, READ), "the holder alone");
        assertFalse(r.conflicts(B, release10), "RELEASE(10) goes through for anyone");
        assertEquals(0, r.releaseSpc2(B, release10).status, "a release by another does nothing");
        assertTrue(r.conflicts(B, READ));
        assertEquals(-ScsiResult.RESERVATION_CONFLICT, ascq(r.reserveSpc2(B, reserve10)));
        byte[] reserve6 = new byte[6];
        reserve6[0] = 0x16;
        assertEquals(0, r.reserveSpc2(A, reserve6).status, "the holder reserves again, with either size");
        assertEquals(0, r.releaseSpc2(A, release10).status);
        assertFalse(r.conflicts(B, WRITE), "released");
        byte[] thirdParty = reserve10.clone();
        thirdParty[1] = 0x10;
        thirdParty[3] = 7;
        assertEquals(0x2400, ascq(r.reserveSpc2(A, thirdParty)), "3RDPTY");
        byte[] longId = release10.clone();
        longId[1] = 0x02;
        assertEquals(0x2400, ascq(r.releaseSpc2(A, longId)), "LONGID");
        assertFalse(r.conflicts(B, WRITE), "nothing reserved by the refused one");
        assertEquals(0, out(A, 0, 0, 0, 1));
        assertEquals(-ScsiResult.RESERVATION_CONFLICT, ascq(r.reserveSpc2(B, reserve10)),
                "RESERVE(10) conflicts while a key is registered");
    }

    /** A REGISTER parameter list with SPEC_I_PT (and {@code flags}) and the TransportIDs {@code ids}. */
    static byte[] specifyParam(long key, long serviceKey, int flags, byte[]... ids) {
        int length = 0;
        for (byte[] id : ids) {
            length += id.length;
        }
        byte[] p = new byte[28 + length];
        Pdu.putLong(p, 0, key);
        Pdu.putLong(p, 8, serviceKey);
        p[20] = (byte) (0x08 | flags);
        Pdu.putInt(p, 24, length);
        int o = 28;
        for (byte[] id : ids) {
            System.arraycopy(id, 0, p, o, id.length);
            o += id.length;
        }
        return p;
    }

    /** REGISTER from {@code nexus} with the parameter list {@code param}, its whole length in the CDB. */
    ScsiResult register(String nexus, byte[] param) {
        byte[] c = cdb(0, 0);
        Pdu.putInt(c, 5, param.length);
        return r.out(nexus, c, param);
    }

    @Test
    void specifyInitiatorPortsRefusesABadListWhole() {
        byte[] beyond = specifyParam(0, 7, 0, transportId(1, B));
        Pdu.putInt(beyond, 24, beyond.length - 28 + 4);
        assertEquals(0x1A00, ascq(register(A, beyond)), "TRANSPORTID PARAMETER DATA LENGTH past the list");
        byte[] shortOfIt = specifyParam(0, 7, 0, transportId(1, B));
        Pdu.putInt(shortOfIt, 24, shortOfIt.length - 28 - 4);
        assertEquals(0x1A00, ascq(register(A, shortOfIt)), "TRANSPORTID PARAMETER DATA LENGTH short of the list");
        assertEquals(0x1A00, ascq(r.out(A, cdb(0, 0), specifyParam(0, 7, 0))), "a list of 24 bytes with SPEC_I_PT");
        byte[] cut = transportId(1, B);
        cut[3] += 4;
        assertEquals(0x1A00, ascq(register(A, specifyParam(0, 7, 0, transportId(1, C), cut))),
                "a TransportID longer than the list");
        assertEquals(0x1A00, ascq(register(A, specifyParam(0, 7, 0, transportId(1, C), new byte[] {0x45, 0, 0}))),
                "a TransportID header cut short");
        byte[] fibreChannel = transportId(1, B);
        fibreChannel[0] = 0x40;
        assertEquals(0x2600, ascq(register(A, specifyParam(0, 7, 0, transportId(1, C), fibreChannel))),
                "protocol identifier 0");
        assertEquals(0x2600, ascq(register(A, specifyParam(0, 7, 0, transportId(2, B)))), "format 10b");
        byte[] unterminated = transportId(1, B);
        java.util.Arrays.fill(unterminated, 4, unterminated.length, (byte) 'x');
        assertEquals(0x2600, ascq(register(A, specifyParam(0, 7, 0, unterminated))), "a name without its null");
        assertEquals(0x2600, ascq(register(A, specifyParam(0, 7, 0, transportId(1, "iqn.b,i,0xZZ")))), "a bad ISID");
        assertEquals(0x2600, ascq(register(A, specifyParam(0, 7, 0x01, transportId(1, B)))),
                "APTPL without a place to keep it");
        assertEquals(-ScsiResult.RESERVATION_CONFLICT, ascq(register(A, specifyParam(5, 7, 0, transportId(1, B)))),
                "an unregistered nexus with a reservation key");
        assertEquals(0, register(A, specifyParam(0, 0, 0, transportId(1, B))).status, "service action key 0: nothing");
        assertEquals(0, Pdu.getInt(readKeys(), 0), "PRgeneration: nothing registered");
        assertEquals(0, Pdu.getInt(readKeys(), 4));
        assertTrue(r.conflicts(C, WRITE) == r.conflicts(A, WRITE), "no reservation either");

        assertEquals(0, out(B, 0, 0, 0, 2));
        byte[] before = readKeys();
        assertEquals(0x2600, ascq(register(A, specifyParam(0, 7, 0, transportId(1, C), transportId(1, B)))),
                "B is registered: nothing is, C neither");
        assertEquals(0x2600, ascq(register(A, specifyParam(0, 7, 0, transportId(1, C), transportId(0, "IQN.B")))),
                "format 00b naming an initiator with a registered nexus");
        assertEquals(0x2400, ascq(register(B, specifyParam(2, 7, 0, transportId(1, C)))),
                "SPEC_I_PT from a registered nexus: INVALID FIELD IN CDB");
        assertTrue(java.util.Arrays.equals(before, readKeys()), "nothing changed");
        assertEquals(ScsiResult.RESERVATION_CONFLICT, out(C, 1, ScsiReservations.WRITE_EXCLUSIVE, 7, 0), "C is not registered");
    }

    @Test
    void specifyInitiatorPortsRegistersTheSenderAndEveryNamedNexus() {
        String c2 = "iqn.c,i,0x0000000000aa";
        ScsiUnitAttentions ua = new ScsiUnitAttentions();
        ScsiReservations res = new ScsiReservations(ua);
        ua.attach(B);
        ua.attach(c2);
        byte[] p = specifyParam(0, 7, 0x04, transportId(1, "IQN.B,i,0x2"), transportId(0, "iqn.c"), transportId(1, A));
        byte[] c = cdb(0, 0);
        Pdu.putInt(c, 5, p.length);
        assertEquals(0, res.out(A, c, p).status, "B by its port in other case, C by its name, A named again");
        byte[] k = new byte[10];
        k[0] = 0x5E;
        k[8] = (byte) 200;
        byte[] keys = res.in(k).dataIn;
        assertEquals(1, Pdu.getInt(keys, 0), "PRgeneration: one REGISTER");
        assertEquals(24, Pdu.getInt(keys, 4), "A, B and initiator iqn.c");
        for (int i = 0; i < 3; i++) {
            assertEquals(7, Pdu.getLong(keys, 8 + 8 * i), "every one with the service action key");
        }
        k[1] = 3;
        byte[] full = res.in(k).dataIn;
        int o = 8;
        java.util.List<String> ids = new java.util.ArrayList<>();
        while (o < 8 + Pdu.getInt(full, 4)) {
            int length = Pdu.getInt(full, o + 20);
            assertEquals(0x02, full[o + 12] & 0x02, "ALL_TG_PT for each");
            byte[] id = java.util.Arrays.copyOfRange(full, o + 24, o + 24 + length);
            ids.add((id[0] & 0xff) + " " + new String(id, 4, Pdu.getInt(full, o + 20) - 4).trim());
            o += 24 + length;
        }
        assertEquals(java.util.List.of("69 " + A, "69 " + B, "5 iqn.c"), ids,
                "format 01b for the ports (B as its session spells it), 00b for the initiator");

        assertEquals(0, res.out(C, cdb(1, ScsiReservations.WRITE_EXCLUSIVE), param(7, 0)).status,
                "C, not logged in when named, reserves with the key without registering");
        assertFalse(res.conflicts(c2, WRITE), "iqn.c's other nexus shares the registration, so the reservation");
        assertTrue(res.conflicts(B, WRITE), "B is registered but does not hold it");
        assertTrue(res.conflicts("iqn.cc,i,0x000000000003", WRITE), "another initiator's nexus");
        java.util.Set<String> preempted = new java.util.HashSet<>();
        assertEquals(0, res.out(A, cdb(5, ScsiReservations.EXCLUSIVE_ACCESS), param(7, 7), preempted).status,
                "PREEMPT AND ABORT of key 7 removes B's registration and iqn.c's");
        assertTrue(preempted.containsAll(java.util.Set.of(B, c2)), "the tasks of B and iqn.c's nexus are aborted: " + preempted);
        assertFalse(preempted.contains(A), preempted.toString());
        assertEquals(0x2A05, ua.take(B, 0x00), "REGISTRATIONS PREEMPTED for B");
        assertEquals(0x2A05, ua.take(c2, 0x00), "and for iqn.c's nexus that has a session");
        k[1] = 0;
        assertEquals(8, Pdu.getInt(res.in(k).dataIn, 4), "A is left");
        assertTrue(res.conflicts(c2, READ));
    }

    @Test
    void registerAndMoveToAnInitiatorRegisteredByName() {
        ScsiUnitAttentions ua = new ScsiUnitAttentions();
        ScsiReservations res = new ScsiReservations(ua);
        String c2 = "iqn.c,i,0x0000000000aa";
        ua.attach(c2);
        byte[] p = specifyParam(0, 7, 0, transportId(0, "iqn.c"));
        byte[] c = cdb(0, 0);
        Pdu.putInt(c, 5, p.length);
        assertEquals(0, res.out(A, c, p).status);
        assertEquals(0, res.out(A, cdb(1, ScsiReservations.EXCLUSIVE_ACCESS), param(7, 0)).status);
        byte[] m = moveParam(7, 9, 0, 1, transportId(0, "IQN.C"));
        byte[] mc = cdb(7, 0);
        Pdu.putInt(mc, 5, m.length);
        assertEquals(0, res.out(A, mc, m).status, "format 00b: iqn.c has one registration, its nexus acts under it");
        assertFalse(res.conflicts(c2, READ), "iqn.c's nexus holds the reservation");
        assertFalse(res.conflicts(C, WRITE), "and so does its nexus that has not logged in yet");
        assertTrue(res.conflicts(A, READ));
        byte[] k = new byte[10];
        k[0] = 0x5E;
        k[8] = 100;
        byte[] keys = res.in(k).dataIn;
        assertEquals(16, Pdu.getInt(keys, 4), "A and iqn.c: no registration of a port was added");
        assertEquals(9, Pdu.getLong(keys, 16), "iqn.c's registration took the service action key");
    }

    @Test
    void tooManyRegistrationsAreRefusedWhole() {
        byte[][] ids = new byte[ScsiReservations.MAX_REGISTRATIONS][];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = transportId(1, "iqn.many,i,0x" + Integer.toHexString(i + 1));
        }
        assertEquals(0x5504, ascq(register(A, specifyParam(0, 7, 0, ids))),
                "one more than the unit holds: INSUFFICIENT REGISTRATION RESOURCES");
        assertEquals(0, Pdu.getInt(readKeys(), 4), "and none registered");
        assertEquals(0, register(A, specifyParam(0, 7, 0, java.util.Arrays.copyOf(ids, ids.length - 1))).status);
        assertEquals(8 * ScsiReservations.MAX_REGISTRATIONS, Pdu.getInt(readKeys(), 4));
        assertEquals(0x5504, ascq(r.out(B, cdb(0, 0), param(0, 2))), "a plain REGISTER past the limit");
        assertEquals(0, r.out(A, cdb(0, 0), param(7, 8)).status, "a registered nexus changes its key");
    }

    static int ascq(ScsiResult res) {
        return res.sense.length == 0 ? -res.status : (res.sense[12] & 0xff) << 8 | res.sense[13] & 0xff;
    }
}
