package io.pistore.frontend.iscsi;

import java.util.Map;

/**
 * What PERSISTENT RESERVE IN reports of a unit's persistent reservations (SPC-4 6.15), from a copy
 * of their state, and which commands a reservation holds off.
 */
final class ScsiReservationReports {
    private ScsiReservationReports() {
    }

    /**
     * PERSISTENT RESERVE IN (READ KEYS, READ RESERVATION, REPORT CAPABILITIES, READ FULL STATUS) of
     * state {@code s}; {@code aptpl}: the last REGISTER's APTPL bit; {@code persists}: whether the
     * state is kept through a restart when asked (PTPL_C); {@code port}: this port's relative
     * target port identifier.
     */
    static ScsiResult in(byte[] cdb, ScsiReservationFile.State s, boolean aptpl, boolean persists, int port) {
        Map<String, Long> keys = s.keys();
        int type = s.type();
        int alloc = Cdb.u16(cdb, 7);
        byte[] b;
        switch (cdb[1] & 0x1f) {
            case 0: { // READ KEYS
                b = new byte[8 + 8 * keys.size()];
                int o = 8;
                for (long k : keys.values()) {
                    Pdu.putLong(b, o, k);
                    o += 8;
                }
                break;
            }
            case 1: // READ RESERVATION
                b = new byte[type == 0 ? 8 : 24];
                if (type != 0) {
                    Pdu.putLong(b, 8, ScsiReservations.allRegistrants(type) ? 0 : keys.get(s.holder()));
                    b[21] = (byte) type; // scope 0: logical unit
                }
                break;
            case 2: // REPORT CAPABILITIES
                b = new byte[8];
                b[1] = 8;
                b[2] = (byte) (0x08 | 0x04 | (persists ? 0x01 : 0)); // SIP_C, ATP_C; PTPL_C: kept through power loss when asked
                b[3] = (byte) (0x80 | (aptpl ? 0x01 : 0)); // TMV: the type mask is valid; PTPL_A
                b[4] = (byte) (0x80 | 0x40 | 0x20 | 0x08 | 0x02); // WR_EX_AR, EX_AC_RO, WR_EX_RO, EX_AC, WR_EX
                b[5] = 0x01; // EX_AC_AR
                return ScsiResult.cut(b, alloc);
            case 3: // READ FULL STATUS
                return ScsiResult.cut(fullStatus(s, port), alloc);
            default:
                return ScsiResult.invalidField();
        }
        Pdu.putInt(b, 0, s.generation());
        Pdu.putInt(b, 4, b.length - 8);
        return ScsiResult.cut(b, alloc);
    }

    private static byte[] fullStatus(ScsiReservationFile.State s, int port) {
        int type = s.type();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Map.Entry<String, Long> e : s.keys().entrySet()) {
            byte[] id = ScsiTransportId.encode(e.getKey()); // format 01b (a port) or 00b (an initiator)
            byte[] d = new byte[24 + id.length];
            Pdu.putLong(d, 0, e.getValue());
            if (type != 0 && (ScsiReservations.allRegistrants(type) || e.getKey().equals(s.holder()))) {
                d[12] = 0x01; // R_HOLDER
                d[13] = (byte) type;
            }
            if (s.allTargetPorts().contains(e.getKey())) {
                d[12] |= 0x02; // ALL_TG_PT
            }
            Pdu.putInt(d, 20, id.length);
            System.arraycopy(id, 0, d, 24, id.length);
            d[18] = (byte) (port >>> 8); // RELATIVE TARGET PORT IDENTIFIER
            d[19] = (byte) port;
            out.writeBytes(d);
        }
        byte[] body = out.toByteArray();
        byte[] b = new byte[8 + body.length];
        Pdu.putInt(b, 0, s.generation());
        Pdu.putInt(b, 4, body.length);
        System.arraycopy(body, 0, b, 8, body.length);
        return b;
    }

    /**
     * Whether a reservation of {@code type} holds off this command of a nexus that neither holds it
     * nor, for the registrants-only and all-registrants types, is registered (SPC-4's table of
     * commands allowed in the presence of reservations, SBC-3's for the block commands).
     */
    static boolean heldOff(int type, byte[] cdb) {
        int op = cdb[0] & 0xff;
        switch (op) {
            case 0x00: // TEST UNIT READY
            case 0x03: // REQUEST SENSE
            case 0x12: // INQUIRY
            case 0x25: // READ CAPACITY(10)
            case 0x5E: // PERSISTENT RESERVE IN
            case 0x5F: // PERSISTENT RESERVE OUT
            case 0xA0: // REPORT LUNS
            case 0xA3: // MAINTENANCE IN (REPORT SUPPORTED OPERATION CODES)
            case 0x16: // RESERVE(6), RELEASE(6), RESERVE(10), RELEASE(10): refused with RESERVATION CONFLICT as they run
            case 0x17:
            case 0x56:
            case 0x57:
                return false;
            case 0x9E:
                return (cdb[1] & 0x1f) == 0x10 ? false : ScsiReservations.exclusiveAccess(type); // READ CAPACITY(16), GET LBA STATUS
            case 0x1A: // MODE SENSE
            case 0x5A:
            case 0x34: // PRE-FETCH
            case 0x90:
            case 0x37: // READ DEFECT DATA
            case 0xB7:
                return ScsiReservations.exclusiveAccess(type);
            default:
                break;
        }
        Cdb c = Cdb.parse(cdb);
        boolean read = c != null && !c.writes();
        return !read || ScsiReservations.exclusiveAccess(type);
    }

    /** The registration among {@code regs} that {@code nexus} acts under ({@link ScsiReservations}: its own, else its initiator's), or null. */
    static String registrantAmong(String nexus, java.util.Collection<String> regs) {
        if (regs.contains(nexus)) {
            return nexus;
        }
        String name = ScsiTransportId.initiatorOf(nexus);
        String device = null;
        for (String k : regs) {
            if (k.equalsIgnoreCase(nexus)) {
                return k;
            }
            if (k.equalsIgnoreCase(name)) {
                device = k;
            }
        }
        return device;
    }
}
