package io.pistore.frontend.iscsi;

/**
 * The SPC-2 reservation of one logical unit, made by RESERVE(6) or RESERVE(10) (the two sizes are
 * one reservation): one I_T nexus holds the whole unit until it releases it, its session ends or
 * the unit is reset. Third-party reservations (RESERVE(10)/RELEASE(10) with 3RDPTY or LONGID) are
 * refused as INVALID FIELD IN CDB. Not thread-safe: {@link ScsiReservations} calls it under its
 * lock and tells it whether persistent reservations are in use, which excludes this kind.
 */
final class ScsiSpc2Reservation {
    /** The nexus holding the reservation, or null. */
    private String holder;

    boolean held() {
        return holder != null;
    }

    /** The nexus holding the reservation, or null. */
    String holder() {
        return holder;
    }

    /** Makes {@code nexus} (null: none) the holder, as a state kept elsewhere says. */
    void restore(String nexus) {
        holder = nexus;
    }

    /**
     * Whether the reservation holds off this command of {@code nexus} (SPC-2 table 10): the holder
     * runs everything but PERSISTENT RESERVE (which conflicts for every nexus), others only
     * INQUIRY, REQUEST SENSE, REPORT LUNS and RELEASE (6 and 10).
     */
    boolean conflicts(String nexus, int op) {
        if (op == 0x5E || op == 0x5F) {
            return true;
        }
        if (nexus.equals(holder)) {
            return false;
        }
        return !(op == 0x12 || op == 0x03 || op == 0xA0 || op == 0x17 || op == 0x57);
    }

    /**
     * RESERVE(6) or RESERVE(10): the whole unit for {@code nexus}; again by the holder is GOOD;
     * RESERVATION CONFLICT while another nexus holds it or {@code persistentInUse}.
     */
    ScsiResult reserve(String nexus, byte[] cdb, boolean persistentInUse) {
        if (thirdParty(cdb)) {
            return ScsiResult.invalidFieldAt(1);
        }
        if (persistentInUse || holder != null && !holder.equals(nexus)) {
            return ScsiResult.status(ScsiResult.RESERVATION_CONFLICT);
        }
        holder = nexus;
        return ScsiResult.good();
    }

    /**
     * RELEASE(6) or RELEASE(10): the holder's reservation ends; from another nexus nothing happens
     * (GOOD); RESERVATION CONFLICT while {@code persistentInUse}.
     */
    ScsiResult release(String nexus, byte[] cdb, boolean persistentInUse) {
        if (thirdParty(cdb)) {
            return ScsiResult.invalidFieldAt(1);
        }
        if (persistentInUse) {
            return ScsiResult.status(ScsiResult.RESERVATION_CONFLICT);
        }
        lost(nexus);
        return ScsiResult.good();
    }

    /** RESERVE(10) and RELEASE(10) with 3RDPTY (byte 1 bit 4) or LONGID (bit 1): on behalf of another initiator. */
    private static boolean thirdParty(byte[] cdb) {
        int op = cdb[0] & 0xff;
        return (op == 0x56 || op == 0x57) && (cdb[1] & 0x12) != 0;
    }

    /** {@code nexus} no longer holds the reservation, if it did (released, or its session ended). */
    void lost(String nexus) {
        if (nexus.equals(holder)) {
            holder = null;
        }
    }

    /** A logical unit or target reset ends the reservation. */
    void reset() {
        holder = null;
    }
}
