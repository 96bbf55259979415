package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The reservation rules that two libiscsi sessions do not reach, on {@link ScsiReservations}
 * alone: the all-registrants types (every registrant holds the reservation, which lasts until the
 * last one leaves), PREEMPT with a zero key under them, and the service actions refused.
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
        assertEquals(0x2400, ascq(r.out(A, cdb(7, 0), param(1, 2))), "REGISTER AND MOVE");
        assertEquals(0x2400, ascq(r.out(A, cdb(1, 2), param(1, 0))), "type 2 is not a reservation type");
        assertEquals(0x2600, ascq(r.out(A, cdb(4, 1), param(1, 0))), "PREEMPT of key 0 without a reservation");
        assertEquals(ScsiResult.RESERVATION_CONFLICT, out(A, 4, 1, 1, 99), "PREEMPT of a key nobody has");
        byte[] ignoreWithAllPorts = param(0, 5);
        ignoreWithAllPorts[20] = 0x04;
        assertEquals(0x2600, ascq(r.out(B, cdb(6, 0), ignoreWithAllPorts)), "ALL_TG_PT");
    }

    static int ascq(ScsiResult res) {
        return (res.sense[12] & 0xff) << 8 | res.sense[13] & 0xff;
    }
}
