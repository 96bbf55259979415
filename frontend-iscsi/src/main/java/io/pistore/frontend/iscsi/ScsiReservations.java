package io.pistore.frontend.iscsi;

import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Persistent reservations of one logical unit (SPC-4 5.9): the registered reservation keys per I_T
 * nexus (named by its initiator port, {@code IQN,i,0xISID}; the target has one port), the
 * reservation and its type, PERSISTENT RESERVE IN (READ KEYS, READ RESERVATION, REPORT
 * CAPABILITIES, READ FULL STATUS) and OUT (REGISTER, REGISTER AND IGNORE EXISTING KEY, RESERVE,
 * RELEASE, CLEAR, PREEMPT, PREEMPT AND ABORT), and which commands of other nexuses the reservation
 * holds off with RESERVATION CONFLICT. The state lives in memory only: it survives the loss of a
 * nexus and a logical unit reset, not a restart of the server (APTPL is refused). REGISTER AND
 * MOVE, SPEC_I_PT and ALL_TG_PT are not supported.
 */
final class ScsiReservations {
    static final int WRITE_EXCLUSIVE = 1;
    static final int EXCLUSIVE_ACCESS = 3;
    static final int WRITE_EXCLUSIVE_REGISTRANTS_ONLY = 5;
    static final int EXCLUSIVE_ACCESS_REGISTRANTS_ONLY = 6;
    static final int WRITE_EXCLUSIVE_ALL_REGISTRANTS = 7;
    static final int EXCLUSIVE_ACCESS_ALL_REGISTRANTS = 8;

    /** Registered keys by initiator port, in registration order. */
    private final Map<String, Long> keys = new LinkedHashMap<>();
    /** The nexus that holds the reservation (for the all-registrants types, the one that made it). */
    private String holder;
    /** The reservation's type, 0 for none. */
    private int type;
    private int generation;

    private static boolean validType(int t) {
        return t == 1 || t == 3 || t >= 5 && t <= 8;
    }

    private static boolean allRegistrants(int t) {
        return t == WRITE_EXCLUSIVE_ALL_REGISTRANTS || t == EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
    }

    private static boolean exclusiveAccess(int t) {
        return t == EXCLUSIVE_ACCESS || t == EXCLUSIVE_ACCESS_REGISTRANTS_ONLY || t == EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
    }

    private boolean holds(String nexus) {
        return type != 0 && (allRegistrants(type) ? keys.containsKey(nexus) : nexus.equals(holder));
    }

    /**
     * Whether the reservation holds off this command of {@code nexus} (SPC-4 table of commands
     * allowed in the presence of reservations, SBC-3's for the block commands): commands that
     * only describe the unit, and PERSISTENT RESERVE itself, always go; reads are refused by the
     * exclusive access types, every other command by every type, unless the nexus holds the
     * reservation or, for the registrants-only and all-registrants types, is registered.
     */
    synchronized boolean conflicts(String nexus, byte[] cdb) {
        if (type == 0 || holds(nexus)) {
            return false;
        }
        if (type >= WRITE_EXCLUSIVE_REGISTRANTS_ONLY && keys.containsKey(nexus)) {
            return false;
        }
        int op = cdb[0] & 0xff;
        switch (op) {
            case 0x00: // TEST UNIT READY
            case 0x03: // REQUEST SENSE
            case 0x12: // INQUIRY
            case 0x25: // READ CAPACITY(10)
            case 0x5E: // PERSISTENT RESERVE IN
            case 0x5F: // PERSISTENT RESERVE OUT
            case 0xA0: // REPORT LUNS
                return false;
            case 0x9E:
                return (cdb[1] & 0x1f) == 0x10 ? false : exclusiveAccess(type); // READ CAPACITY(16), GET LBA STATUS
            case 0x1A: // MODE SENSE
            case 0x5A:
                return exclusiveAccess(type);
            default:
                break;
        }
        Cdb c = Cdb.parse(cdb);
        boolean read = c != null && c.kind() != Cdb.Kind.WRITE;
        return !read || exclusiveAccess(type);
    }

    /** PERSISTENT RESERVE IN. */
    synchronized ScsiResult in(byte[] cdb) {
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
                    Pdu.putLong(b, 8, allRegistrants(type) ? 0 : keys.get(holder));
                    b[21] = (byte) type; // scope 0: logical unit
                }
                break;
            case 2: // REPORT CAPABILITIES
                b = new byte[8];
                b[1] = 8;
                b[3] = (byte) 0x80; // TMV: the type mask is valid; PTPL_A 0
                b[4] = (byte) (0x80 | 0x40 | 0x20 | 0x08 | 0x02); // WR_EX_AR, EX_AC_RO, WR_EX_RO, EX_AC, WR_EX
                b[5] = 0x01; // EX_AC_AR
                return ScsiResult.cut(b, alloc);
            case 3: // READ FULL STATUS
                return ScsiResult.cut(fullStatus(), alloc);
            default:
                return ScsiResult.invalidField();
        }
        Pdu.putInt(b, 0, generation);
        Pdu.putInt(b, 4, b.length - 8);
        return ScsiResult.cut(b, alloc);
    }

    private byte[] fullStatus() {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (Map.Entry<String, Long> e : keys.entrySet()) {
            byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
            int idLen = Math.max(20, (4 + name.length + 1 + 3) & ~3);
            byte[] d = new byte[24 + idLen];
            Pdu.putLong(d, 0, e.getValue());
            if (holds(e.getKey())) {
                d[12] = 0x01; // R_HOLDER
                d[13] = (byte) type;
            }
            Pdu.putInt(d, 20, idLen);
            d[24] = 0x45; // iSCSI TransportID, format 01b: name, ",i,0x", ISID
            d[26] = (byte) ((idLen - 4) >>> 8);
            d[27] = (byte) (idLen - 4);
            System.arraycopy(name, 0, d, 28, name.length);
            d[18] = 0;
            d[19] = 1; // relative target port 1
            out.writeBytes(d);
        }
        byte[] body = out.toByteArray();
        byte[] b = new byte[8 + body.length];
        Pdu.putInt(b, 0, generation);
        Pdu.putInt(b, 4, body.length);
        System.arraycopy(body, 0, b, 8, body.length);
        return b;
    }

    /** PERSISTENT RESERVE OUT from {@code nexus} with its parameter list. */
    synchronized ScsiResult out(String nexus, byte[] cdb, byte[] param) {
        int action = cdb[1] & 0x1f;
        int scope = (cdb[2] & 0xff) >>> 4;
        int newType = cdb[2] & 0x0f;
        if (action > 6) {
            return ScsiResult.invalidField(); // REGISTER AND MOVE is not supported
        }
        if (Cdb.u32(cdb, 5) != 24 || param.length < 24) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x1A, 0x00); // parameter list length error
        }
        long key = Pdu.getLong(param, 0);
        long serviceKey = Pdu.getLong(param, 8);
        if ((param[20] & 0x0D) != 0) { // SPEC_I_PT, ALL_TG_PT, APTPL
            return invalidParameter();
        }
        Long mine = keys.get(nexus);
        if (action == 0 || action == 6) { // REGISTER, REGISTER AND IGNORE EXISTING KEY
            if (action == 0 && (mine == null ? key != 0 : mine != key)) {
                return conflict();
            }
            if (serviceKey == 0) {
                if (mine != null) {
                    unregister(nexus);
                    generation++;
                }
            } else {
                keys.put(nexus, serviceKey);
                generation++;
            }
            return ScsiResult.good();
        }
        if (mine == null || mine != key) {
            return conflict();
        }
        switch (action) {
            case 1: // RESERVE
                if (scope != 0 || !validType(newType)) {
                    return ScsiResult.invalidField();
                }
                if (type == 0) {
                    type = newType;
                    holder = nexus;
                    return ScsiResult.good();
                }
                return holds(nexus) && type == newType ? ScsiResult.good() : conflict();
            case 2: // RELEASE
                if (!holds(nexus)) {
                    return ScsiResult.good();
                }
                if (scope != 0 || newType != type) {
                    return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x04); // invalid release
                }
                type = 0;
                holder = null;
                return ScsiResult.good();
            case 3: // CLEAR
                keys.clear();
                type = 0;
                holder = null;
                generation++;
                return ScsiResult.good();
            default: // PREEMPT, PREEMPT AND ABORT
                if (scope != 0 || !validType(newType)) {
                    return ScsiResult.invalidField();
                }
                return preempt(nexus, serviceKey, newType);
        }
    }

    private ScsiResult preempt(String nexus, long victim, int newType) {
        if (type != 0 && allRegistrants(type) && victim == 0) {
            keys.keySet().removeIf(n -> !n.equals(nexus));
            type = newType;
            holder = nexus;
            generation++;
            return ScsiResult.good();
        }
        if (type != 0 && !allRegistrants(type) && keys.get(holder) == victim) {
            removeKey(victim, nexus);
            type = newType;
            holder = nexus;
            generation++;
            return ScsiResult.good();
        }
        if (victim == 0) {
            return invalidParameter();
        }
        if (!removeKey(victim, nexus)) {
            return conflict();
        }
        generation++;
        return ScsiResult.good();
    }

    /** Removes the registrations with that key but {@code keep}'s; says whether there were any. */
    private boolean removeKey(long key, String keep) {
        boolean any = false;
        for (Iterator<Map.Entry<String, Long>> i = keys.entrySet().iterator(); i.hasNext(); ) {
            Map.Entry<String, Long> e = i.next();
            if (e.getValue() == key && !e.getKey().equals(keep)) {
                i.remove();
                lost(e.getKey());
                any = true;
            }
        }
        if (!any && keys.get(keep) != null && keys.get(keep) == key) {
            any = true; // preempting one's own key removes nothing but is no conflict
        }
        return any;
    }

    private void unregister(String nexus) {
        keys.remove(nexus);
        lost(nexus);
    }

    /** A registration is gone: the reservation goes with its holder (all-registrants: with the last). */
    private void lost(String nexus) {
        if (type != 0 && (allRegistrants(type) ? keys.isEmpty() : nexus.equals(holder))) {
            type = 0;
            holder = null;
        }
    }

    private static ScsiResult conflict() {
        return ScsiResult.status(ScsiResult.RESERVATION_CONFLICT);
    }

    private static ScsiResult invalidParameter() {
        return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
    }
}
