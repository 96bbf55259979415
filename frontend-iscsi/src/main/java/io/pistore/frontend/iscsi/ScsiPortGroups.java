package io.pistore.frontend.iscsi;

import io.pistore.spi.PathGroup;
import io.pistore.spi.PathState;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.zip.CRC32;

/**
 * The asymmetric logical unit access (ALUA, SPC-4 5.15) of one logical unit, implicit and explicit: each
 * peer that serves the volume is a target port group of one target port, the group and the port
 * numbered alike from the peer's replica id, so every peer numbers them the same. The peer that
 * leads a replicated volume's group is active/optimized, the peers that forward to it
 * active/non-optimized, and every peer transitioning while the peer answering knows no leader (an
 * election). A volume this target serves alone is one group, this port, active/optimized.
 *
 * <p>States come from the engine ({@link PathGroup}); {@link #refresh} compares them with the last
 * ones, which the server does a few times a second so that a change becomes the unit attention
 * ASYMMETRIC ACCESS STATE CHANGED, after which a multipath initiator (Linux's {@code scsi_dh_alua})
 * asks REPORT TARGET PORT GROUPS again. Commands sent down a transitioning path are not refused:
 * they wait for a leader, as every request of a replicated volume does. SET TARGET PORT GROUPS
 * ({@link #set}) makes a group active/optimized by moving the lead to its peer. Thread-safe.
 */
final class ScsiPortGroups {
    /** MAINTENANCE IN service action REPORT TARGET PORT GROUPS. */
    static final int REPORT_TARGET_PORT_GROUPS = 0x0A;
    /** MAINTENANCE OUT service action SET TARGET PORT GROUPS. */
    static final int SET_TARGET_PORT_GROUPS = 0x0A;
    /** The group, and port, of a volume this target serves alone. */
    static final int ONLY_GROUP = 1;
    /**
     * IMPLICIT TRANSITION TIME of the extended header, in seconds: the longest a transition may
     * take, a replicated volume's operation timeout (10 s by default), after which requests fail.
     */
    static final int IMPLICIT_TRANSITION_SECONDS = 10;
    static final int ACTIVE_OPTIMIZED = 0x0;
    static final int ACTIVE_NON_OPTIMIZED = 0x1;
    static final int TRANSITIONING = 0xF;

    /**
     * Each group's number (its port's too) and asymmetric access state, {@code own} this peer's;
     * {@code peers}: each group's replica id (empty for a volume served by this target alone).
     */
    record Snapshot(int own, Map<Integer, Integer> states, Map<Integer, String> peers) {
    }

    /** Makes a peer's path the optimized one, returning once its peer leads ({@link io.pistore.spi.HostConnection#optimizePath}). */
    interface Mover {
        void optimize(String replicaId) throws java.io.IOException;
    }

    private final Supplier<PathGroup> source;
    private final Mover mover;
    private final java.util.function.Consumer<String> log;
    private volatile Snapshot last;
    /** The I_T nexus whose SET TARGET PORT GROUPS runs, or null: a change seen meanwhile is not its unit attention. */
    private volatile String setter;

    /**
     * {@code source}: the volume's peers now, null for a volume served by this target alone;
     * {@code mover}: how SET TARGET PORT GROUPS moves the lead; {@code log}: where each move it asks is said.
     */
    ScsiPortGroups(Supplier<PathGroup> source, Mover mover, java.util.function.Consumer<String> log) {
        this.source = source;
        this.mover = mover;
        this.log = log;
        this.last = take(null);
    }

    /**
     * Looks at the states again; when any group's number or state differs from the last look,
     * ASYMMETRIC ACCESS STATE CHANGED for every nexus on the unit but the one whose SET TARGET PORT
     * GROUPS is running (SPC-4: the change it asked for is no news to it).
     */
    void refresh(ScsiUnitAttentions attentions) {
        Snapshot before = last;
        Snapshot now = take(before);
        last = now;
        if (!now.equals(before)) {
            attentions.establishAllBut(setter, ScsiUnitAttentions.ASYMMETRIC_ACCESS_STATE_CHANGED);
        }
    }

    /** This port's relative target port identifier (its group's number). */
    int ownPort() {
        return last.own;
    }

    private Snapshot take(Snapshot before) {
        PathGroup g;
        try {
            g = source.get();
        } catch (RuntimeException e) {
            g = null;
        }
        if (g == null) {
            if (before != null && before.states.size() > 1) {
                // a replicated volume whose peers cannot be told now: the same groups, in transition
                Map<Integer, Integer> s = new LinkedHashMap<>();
                before.states.keySet().forEach(k -> s.put(k, TRANSITIONING));
                return new Snapshot(before.own, s, before.peers);
            }
            return new Snapshot(ONLY_GROUP, Map.of(ONLY_GROUP, ACTIVE_OPTIMIZED), Map.of());
        }
        Map<String, Integer> ids = groupIds(g.states().keySet());
        Map<Integer, Integer> s = new LinkedHashMap<>();
        Map<Integer, String> peers = new LinkedHashMap<>();
        for (Map.Entry<String, PathState> e : g.states().entrySet()) {
            s.put(ids.get(e.getKey()), state(e.getValue()));
            peers.put(ids.get(e.getKey()), e.getKey());
        }
        return new Snapshot(ids.get(g.self()), s, peers);
    }

    static int state(PathState s) {
        switch (s) {
            case OPTIMIZED: return ACTIVE_OPTIMIZED;
            case NON_OPTIMIZED: return ACTIVE_NON_OPTIMIZED;
            default: return TRANSITIONING;
        }
    }

    /**
     * Group numbers for replica ids, 1 to 65535, the same for the same ids on every peer: from a
     * CRC-32 of the id; ids whose numbers collide take the next free one, in id order.
     */
    static Map<String, Integer> groupIds(java.util.Collection<String> replicaIds) {
        Map<String, Integer> ids = new LinkedHashMap<>();
        java.util.Set<Integer> taken = new java.util.HashSet<>();
        for (String id : new TreeSet<>(replicaIds)) {
            CRC32 crc = new CRC32();
            crc.update(id.getBytes(StandardCharsets.UTF_8));
            int n = (int) (crc.getValue() % 0xFFFF) + 1;
            while (!taken.add(n)) {
                n = n % 0xFFFF + 1;
            }
            ids.put(id, n);
        }
        return ids;
    }

    /**
     * REPORT TARGET PORT GROUPS (MAINTENANCE IN, SPC-4 6.36): PARAMETER DATA FORMAT 000b (length
     * only) or 001b (with the extended header); each group one descriptor of one port. States are
     * looked at anew for the answer, without taking the place of the last look: a change it shows
     * first is still every session's unit attention at the next {@link #refresh}.
     */
    ScsiResult report(byte[] cdb) {
        int format = (cdb[1] & 0xff) >>> 5;
        if (format > 1) {
            return ScsiResult.invalidFieldAt(1);
        }
        Snapshot s = take(last);
        int header = format == 1 ? 8 : 4;
        byte[] b = new byte[header + s.states.size() * 12];
        Pdu.putInt(b, 0, b.length - 4);
        if (format == 1) {
            b[4] = 0x10; // FORMAT TYPE 001b
            b[5] = (byte) IMPLICIT_TRANSITION_SECONDS;
        }
        int o = header;
        for (int id : s.states.keySet()) {
            b[o] = (byte) (int) s.states.get(id); // PREF 0
            b[o + 1] = (byte) 0x83; // T_SUP, AN_SUP, AO_SUP
            b[o + 2] = (byte) (id >>> 8);
            b[o + 3] = (byte) id;
            b[o + 7] = 1; // TARGET PORT COUNT
            b[o + 10] = (byte) (id >>> 8); // RELATIVE TARGET PORT IDENTIFIER: the group's number
            b[o + 11] = (byte) id;
            o += 12;
        }
        return ScsiResult.cut(b, Cdb.u32(cdb, 6));
    }

    /** The device identification page's designators of this port: relative target port, then target port group. */
    byte[] designators() {
        int id = last.own;
        byte[] d = new byte[16];
        d[0] = 0x61; // iSCSI protocol identifier, binary
        d[1] = (byte) 0x94; // PIV, target port association, relative target port
        d[3] = 4;
        d[6] = (byte) (id >>> 8);
        d[7] = (byte) id;
        d[8] = 0x01; // binary
        d[9] = 0x15; // target port association, target port group
        d[11] = 4;
        d[14] = (byte) (id >>> 8);
        d[15] = (byte) id;
        return d;
    }

    /**
     * SET TARGET PORT GROUPS (MAINTENANCE OUT, SPC-4 6.31): a descriptor per group, of which the one
     * settable state is active/optimized: the lead moves to that group's peer ({@link Mover}), and
     * the answer waits for it; a group already in the state it names is left as it is. Every
     * descriptor is checked before anything moves: an unknown or repeated group, another state
     * (standby, unavailable, offline, transitioning), no group or two groups left active/optimized
     * (one peer leads) are INVALID FIELD IN PARAMETER LIST; a list shorter than its length or with a
     * part of a descriptor, PARAMETER LIST LENGTH ERROR; a move asked while no leader is known, NOT
     * READY, ASYMMETRIC ACCESS STATE TRANSITION; a lead that did not move within the
     * volume's operation timeout, HARDWARE ERROR, SET TARGET PORT GROUPS COMMAND FAILED. One runs at
     * a time. The unit attention of the change goes to every other nexus ({@link #refresh}).
     */
    synchronized ScsiResult set(String nexus, byte[] cdb, byte[] param, ScsiUnitAttentions attentions) {
        long length = Cdb.u32(cdb, 6);
        if (length == 0) {
            return ScsiResult.good();
        }
        if (length < 4 || length % 4 != 0 || param.length < length) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x1A, 0x00); // parameter list length error
        }
        Snapshot now = take(last); // as a report would show it, without taking the last look's place
        Integer leading = null; // the group active/optimized now, if any
        for (Map.Entry<Integer, Integer> e : now.states.entrySet()) {
            if (e.getValue() == ACTIVE_OPTIMIZED) {
                leading = e.getKey();
            }
        }
        java.util.Set<Integer> named = new java.util.HashSet<>();
        Integer lead = null; // the group named active/optimized
        boolean leaderDemoted = false;
        for (int o = 4; o < length; o += 4) {
            int state = param[o] & 0x0f;
            int group = Cdb.u16(param, o + 2);
            if (!now.states.containsKey(group) || !named.add(group)
                    || state != ACTIVE_OPTIMIZED && state != ACTIVE_NON_OPTIMIZED
                    || state == ACTIVE_OPTIMIZED && lead != null) { // two groups would lead
                return invalidParameter();
            }
            if (state == ACTIVE_OPTIMIZED) {
                lead = group;
            } else if (leading != null && group == leading) {
                leaderDemoted = true;
            }
        }
        if (lead == null) {
            // only active/non-optimized: a group already so (or in transition: the election decides)
            // is left as it is; the leader's alone would leave no group to lead
            return leaderDemoted ? invalidParameter() : ScsiResult.good();
        }
        if (lead.equals(leading)) {
            return ScsiResult.good();
        }
        if (leading == null) {
            // An election: it decides, and a transfer now would fail or race it. LOGICAL UNIT NOT
            // ACCESSIBLE, ASYMMETRIC ACCESS STATE TRANSITION, on which an initiator asks again later.
            return ScsiResult.check(ScsiResult.NOT_READY, 0x04, 0x0A);
        }
        String peer = now.peers.get(lead); // a replicated volume's: one group alone always leads
        setter = nexus;
        try {
            mover.optimize(peer);
            refresh(attentions); // this port's own look now, without the asking nexus
            log.accept("SET TARGET PORT GROUPS from " + nexus + " moved the lead to " + peer);
        } catch (java.io.IOException | RuntimeException e) {
            log.accept("SET TARGET PORT GROUPS from " + nexus + " failed: " + e.getMessage());
            return ScsiResult.check(ScsiResult.HARDWARE_ERROR, 0x67, 0x0A); // SET TARGET PORT GROUPS COMMAND FAILED
        } finally {
            setter = null;
        }
        return ScsiResult.good();
    }

    private static ScsiResult invalidParameter() {
        return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
    }
}
