package io.pistore.frontend.iscsi;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The unit attention conditions of one logical unit, per I_T nexus (SAM-5 5.14, SPC-4 5.14): a
 * queue of additional sense codes for each nexus that has a session on the unit now. A command of
 * the nexus reports the oldest one as CHECK CONDITION, UNIT ATTENTION and clears it, but INQUIRY
 * (never reports one), REPORT LUNS (clears only REPORTED LUNS DATA HAS CHANGED) and REQUEST SENSE
 * (returns it as its sense data with GOOD status). A nexus's conditions leave with its last session.
 * Each queue holds at most {@value #MAX_PER_NEXUS} conditions, each once: older repeats are dropped.
 */
final class ScsiUnitAttentions {
    static final int MAX_PER_NEXUS = 8;

    /** POWER ON, RESET, OR BUS DEVICE RESET OCCURRED: after a logical unit or target reset. */
    static final int RESET = 0x2900;
    static final int RESERVATIONS_PREEMPTED = 0x2A03;
    static final int RESERVATIONS_RELEASED = 0x2A04;
    static final int REGISTRATIONS_PREEMPTED = 0x2A05;
    static final int ASYMMETRIC_ACCESS_STATE_CHANGED = 0x2A06;
    static final int CAPACITY_DATA_HAS_CHANGED = 0x2A09;
    static final int REPORTED_LUNS_DATA_HAS_CHANGED = 0x3F0E;

    private static final class Nexus {
        int sessions;
        final ArrayDeque<Integer> pending = new ArrayDeque<>();
    }

    private final Map<String, Nexus> nexuses = new HashMap<>();
    /** Conditions pending over every nexus, readable without the lock ({@link #anyPending}). */
    private volatile int total;

    /** A session of {@code nexus} uses the unit from now on. */
    synchronized void attach(String nexus) {
        nexuses.computeIfAbsent(nexus, k -> new Nexus()).sessions++;
    }

    /** A session of {@code nexus} has ended; its conditions go with the nexus's last session. */
    synchronized void detach(String nexus) {
        Nexus n = nexuses.get(nexus);
        if (n != null && --n.sessions <= 0) {
            nexuses.remove(nexus);
            total -= n.pending.size();
        }
    }

    /** The I_T nexuses with a session on the unit now. */
    synchronized java.util.List<String> attached() {
        return java.util.List.copyOf(nexuses.keySet());
    }

    /** Establishes {@code code} (ASC and ASCQ) for {@code nexus}, when it has a session. */
    synchronized void establish(String nexus, int code) {
        Nexus n = nexuses.get(nexus);
        if (n != null) {
            add(n, code);
        }
    }

    /** Establishes {@code code} for every nexus with a session on the unit. */
    synchronized void establishAll(int code) {
        establishAllBut(null, code);
    }

    /** Establishes {@code code} for every nexus with a session on the unit but {@code except} (null: none). */
    synchronized void establishAllBut(String except, int code) {
        nexuses.forEach((k, n) -> {
            if (!k.equals(except)) {
                add(n, code);
            }
        });
    }

    private void add(Nexus n, int code) {
        if (n.pending.remove(code) || n.pending.size() >= MAX_PER_NEXUS && n.pending.removeFirst() != null) {
            total--;
        }
        n.pending.addLast(code);
        total++;
    }

    /**
     * Whether any nexus of the unit has a condition pending: one volatile read, for a path that
     * skips {@link #take} only while this is false (a condition established after it is read
     * counts for the next command).
     */
    boolean anyPending() {
        return total > 0;
    }

    /**
     * The condition this command of {@code nexus} reports and clears, or -1 (none, or a command
     * that a unit attention does not hold off: INQUIRY, REPORT LUNS, REQUEST SENSE, which
     * {@link #takeForRequestSense} serves).
     */
    synchronized int take(String nexus, int opcode) {
        Nexus n = nexuses.get(nexus);
        if (n == null || n.pending.isEmpty()) {
            return -1;
        }
        switch (opcode) {
            case 0x12: // INQUIRY
            case 0x03: // REQUEST SENSE
                return -1;
            case 0xA0: // REPORT LUNS
                if (n.pending.remove(REPORTED_LUNS_DATA_HAS_CHANGED)) {
                    total--;
                }
                return -1;
            default:
                total--;
                return n.pending.removeFirst();
        }
    }

    /** The oldest condition of {@code nexus}, cleared, for REQUEST SENSE to return; -1 when none. */
    synchronized int takeForRequestSense(String nexus) {
        Nexus n = nexuses.get(nexus);
        if (n == null || n.pending.isEmpty()) {
            return -1;
        }
        total--;
        return n.pending.removeFirst();
    }

    /** How many conditions {@code nexus} has pending. */
    synchronized int pending(String nexus) {
        Nexus n = nexuses.get(nexus);
        return n == null ? 0 : n.pending.size();
    }

    /** REQUEST SENSE: the nexus's oldest unit attention (then cleared), else NO SENSE; fixed or descriptor format. */
    ScsiResult requestSense(String nexus, byte[] cdb) {
        int alloc = cdb[4] & 0xff;
        int ua = takeForRequestSense(nexus);
        int key = ua < 0 ? 0 : ScsiResult.UNIT_ATTENTION;
        int asc = ua < 0 ? 0 : ua >>> 8;
        int ascq = ua < 0 ? 0 : ua & 0xff;
        if ((cdb[1] & 0x01) != 0) { // DESC: descriptor format, no descriptors
            byte[] s = new byte[8];
            s[0] = 0x72;
            s[1] = (byte) key;
            s[2] = (byte) asc;
            s[3] = (byte) ascq;
            return ScsiResult.cut(s, alloc);
        }
        return ScsiResult.cut(ScsiResult.sense(key, asc, ascq, -1), alloc);
    }
}
