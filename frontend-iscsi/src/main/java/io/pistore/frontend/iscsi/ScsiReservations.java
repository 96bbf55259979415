package io.pistore.frontend.iscsi;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Persistent reservations of one logical unit (SPC-4 5.9): the registered reservation keys per I_T
 * nexus (named by its initiator port, {@code IQN,i,0xISID}), the reservation and its type,
 * PERSISTENT RESERVE IN and OUT (every service action), which commands of other nexuses the
 * reservation holds off with RESERVATION CONFLICT, and the unit attentions SPC-4 asks of PREEMPT,
 * CLEAR and RELEASE. Beside them the SPC-2 reservation of RESERVE and RELEASE (6 and 10,
 * {@link ScsiSpc2Reservation}): one nexus holds the whole unit until a logical unit reset or its
 * session's end, and the two kinds exclude each other (SPC-3 5.6.3). The state is this port's, kept
 * through a restart when the last REGISTER set APTPL ({@link ScsiReservationFile}), or, for a unit
 * that other ports serve too (a replicated volume's peers), the volume's, shared by every port
 * ({@link ScsiSharedReservations}). ALL_TG_PT is taken (READ FULL STATUS says which registrations
 * were made so). REGISTER with SPEC_I_PT registers the sender and every nexus its TransportIDs name,
 * all or none: a format 00b TransportID registers an initiator device, shared by every I_T nexus of
 * that initiator without a registration of its own. Every command of a nexus acts under its
 * registration ({@link #registrant}).
 */
final class ScsiReservations {
    static final int WRITE_EXCLUSIVE = 1;
    static final int EXCLUSIVE_ACCESS = 3;
    static final int WRITE_EXCLUSIVE_REGISTRANTS_ONLY = 5;
    static final int EXCLUSIVE_ACCESS_REGISTRANTS_ONLY = 6;
    static final int WRITE_EXCLUSIVE_ALL_REGISTRANTS = 7;
    static final int EXCLUSIVE_ACCESS_ALL_REGISTRANTS = 8;
    /** The most registrations a unit holds; one more is INSUFFICIENT REGISTRATION RESOURCES. */
    static final int MAX_REGISTRATIONS = 1024;

    /** Registered keys by initiator port (or initiator name: a format 00b registration), in registration order. */
    private final Map<String, Long> keys = new LinkedHashMap<>();
    /** The nexus that holds the reservation (for the all-registrants types, the one that made it). */
    private String holder;
    /** The reservation's type, 0 for none. */
    private int type;
    private int generation;
    /** The SPC-2 reservation of RESERVE(6) and RESERVE(10). */
    private final ScsiSpc2Reservation spc2 = new ScsiSpc2Reservation();
    private final ScsiUnitAttentions attentions;
    /** Where the state is kept through a restart when APTPL is set; null: APTPL is refused. */
    private final ScsiReservationFile file;
    /** The last REGISTER's APTPL bit (or a kept state loaded at start). */
    private boolean aptpl;
    /** The registered nexuses whose last REGISTER set ALL_TG_PT. */
    private final java.util.Set<String> allTargetPorts = new java.util.HashSet<>();
    /** While a PERSISTENT RESERVE OUT runs: where the nexuses it preempts go. */
    private java.util.Set<String> preempted;

    /** This port's relative target port identifier (a replicated volume's peers each have their own). */
    private final java.util.function.IntSupplier port;
    /** Where the unit's other ports share the state (a replicated volume's peers), or null: this port's alone. */
    private final ScsiSharedReservations shared;
    /** The shared state's version the fields show. */
    private long loaded;
    /** While a change runs: what it does besides the state ({@link ScsiSharedReservations.Event}). */
    private java.util.List<ScsiSharedReservations.Event> events = new java.util.ArrayList<>();
    /** A WRITE(16) CDB: what {@link #writeView} asks about. */
    private static final byte[] WRITE16 = {(byte) 0x8A, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};

    ScsiReservations(ScsiUnitAttentions attentions) {
        this(attentions, () -> ScsiPortGroups.ONLY_GROUP);
    }

    ScsiReservations(ScsiUnitAttentions attentions, java.util.function.IntSupplier port) {
        this(attentions, port, (ScsiSharedReservations) null);
    }

    /** Reservations that every port of the unit shares through {@code shared} (null: this port's alone). */
    ScsiReservations(ScsiUnitAttentions attentions, java.util.function.IntSupplier port, ScsiSharedReservations shared) {
        this.attentions = attentions;
        this.file = null;
        this.port = port;
        this.shared = shared;
    }

    /**
     * Reservations kept in {@code file} through restarts when an initiator asks for it (APTPL);
     * the state the file holds is loaded now. A file that cannot be read is reported to
     * {@code log} and left alone until an initiator sets APTPL again; the unit starts without
     * reservations.
     */
    ScsiReservations(ScsiUnitAttentions attentions, java.util.function.IntSupplier port, ScsiReservationFile file,
                     java.util.function.Consumer<String> log) {
        this.attentions = attentions;
        this.port = port;
        this.file = file;
        this.shared = null;
        try {
            ScsiReservationFile.State s = file.load();
            if (s != null) {
                restore(s);
                aptpl = true;
                log.accept("iscsi: " + keys.size() + " registration(s) and " + (type == 0 ? "no reservation" : "a reservation")
                        + " kept through the restart (APTPL) from " + file.path());
            }
        } catch (java.io.IOException e) {
            log.accept("iscsi: persistent reservations not restored: " + e.getMessage());
        }
    }

    /** Whether the state outlives a restart of the server when an initiator asks (APTPL). */
    private boolean persists() {
        return file != null || shared != null;
    }

    /** Shows the shared state's newest version this port applied, when the fields show an older one. */
    private void refresh() {
        ScsiSharedReservations.Applied now = shared == null ? null : shared.latest();
        if (now == null || now.version() == loaded) {
            return;
        }
        restore(now.image().state());
        aptpl = now.image().aptpl();
        spc2.restore(now.image().spc2());
        loaded = now.version();
    }

    /**
     * Runs a change of the state: at once on this port's own state (its events carried out, its
     * answer returned), or, shared, worked out on the state this port applied last and set on every
     * port ({@link ScsiSharedReservations#change}); the fields then show the state once applied.
     */
    private ScsiResult mutate(java.util.function.Supplier<ScsiResult> change) {
        if (shared == null) {
            synchronized (this) {
                events = new java.util.ArrayList<>();
                ScsiResult r = change.get();
                ScsiSharedReservations.deliver(events, keys.keySet(), attentions, false);
                return r;
            }
        }
        return shared.change(() -> attempt(change));
    }

    private synchronized ScsiSharedReservations.Attempt attempt(java.util.function.Supplier<ScsiResult> change) {
        refresh();
        ScsiReservationFile.State before = snapshot();
        boolean wasAptpl = aptpl;
        String wasSpc2 = spc2.holder();
        events = new java.util.ArrayList<>();
        ScsiResult r = change.get();
        byte[] value = null;
        if (r.status == ScsiResult.GOOD && (!events.isEmpty() || aptpl != wasAptpl
                || !java.util.Objects.equals(wasSpc2, spc2.holder())
                || !ScsiReservationFile.encode(before).toString().equals(ScsiReservationFile.encode(snapshot()).toString()))) {
            value = shared.encode(snapshot(), aptpl, spc2.holder(), events);
        }
        restore(before); // shown once applied
        aptpl = wasAptpl;
        spc2.restore(wasSpc2);
        return new ScsiSharedReservations.Attempt(r, loaded, value, !events.isEmpty());
    }

    private ScsiReservationFile.State snapshot() {
        return new ScsiReservationFile.State(generation, type, holder, new LinkedHashMap<>(keys),
                java.util.Set.copyOf(allTargetPorts));
    }

    private void restore(ScsiReservationFile.State s) {
        keys.clear();
        keys.putAll(s.keys());
        allTargetPorts.clear();
        allTargetPorts.addAll(s.allTargetPorts());
        type = s.type();
        holder = s.holder();
        generation = s.generation();
    }

    private static boolean validType(int t) {
        return t == 1 || t == 3 || t >= 5 && t <= 8;
    }

    static boolean allRegistrants(int t) {
        return t == WRITE_EXCLUSIVE_ALL_REGISTRANTS || t == EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
    }

    static boolean exclusiveAccess(int t) {
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
        refresh();
        if (spc2.held()) {
            return spc2.conflicts(nexus, cdb[0] & 0xff);
        }
        if (type == 0) {
            return false;
        }
        String reg = registrant(nexus);
        if (holds(reg) || type >= WRITE_EXCLUSIVE_REGISTRANTS_ONLY && keys.containsKey(reg)) {
            return false;
        }
        return ScsiReservationReports.heldOff(type, cdb);
    }

    /**
     * For a write of {@code nexus} about to be sent: -1 when the reservations hold it off, else the
     * view to send it with ({@link io.pistore.spi.WriteFence#view}: the version of the shared state
     * it was checked against, plus one, so a volume refuses it once the reservations change).
     */
    synchronized long writeView(String nexus) {
        return conflicts(nexus, WRITE16) ? -1 : loaded + 1;
    }

    /**
     * After {@link #conflicts} said yes: whether the reservations still hold the command off once this
     * port has every change made before it, through any port (a shared unit's port may lag behind).
     */
    boolean stillConflicts(String nexus, byte[] cdb) {
        if (shared != null) {
            shared.sync();
        }
        return conflicts(nexus, cdb);
    }

    /** Whether the reservations are shared with other ports ({@link ScsiSharedReservations}). */
    boolean isShared() {
        return shared != null;
    }

    /** Waits until this port has applied a state newer than the one a write's {@code view} was checked against. */
    void awaitNewer(long view) {
        if (shared != null) {
            shared.awaitNewer(view);
        }
    }

    /** RESERVE(6) or RESERVE(10) ({@link ScsiSpc2Reservation}); conflicts while any key is registered. */
    ScsiResult reserveSpc2(String nexus, byte[] cdb) {
        return mutate(() -> spc2.reserve(nexus, cdb, !keys.isEmpty() || type != 0));
    }

    /** RELEASE(6) or RELEASE(10) ({@link ScsiSpc2Reservation}); conflicts while any key is registered. */
    ScsiResult releaseSpc2(String nexus, byte[] cdb) {
        return mutate(() -> spc2.release(nexus, cdb, !keys.isEmpty() || type != 0));
    }

    /** The I_T nexus is gone (its session ended): its SPC-2 reservation goes with it. */
    void nexusLost(String nexus) {
        if (nexus.equals(spc2Holder())) {
            mutate(() -> {
                spc2.lost(nexus);
                return ScsiResult.good();
            });
        }
    }

    /**
     * A logical unit or target reset: the SPC-2 reservation ends; persistent ones stay (SPC-4). On a
     * unit that other ports share the reset reaches their sessions too: the unit attention, and their
     * tasks aborted ({@link ScsiSharedReservations#ALL}); this port's are the caller's.
     */
    void reset() {
        if (shared != null) {
            mutate(() -> {
                spc2.reset();
                java.util.Set<String> all = java.util.Set.of(ScsiSharedReservations.ALL);
                events.add(new ScsiSharedReservations.Event(ScsiUnitAttentions.RESET, null, all));
                events.add(new ScsiSharedReservations.Event(ScsiSharedReservations.ABORT, null, all));
                return ScsiResult.good();
            });
        } else if (spc2Holder() != null) {
            mutate(() -> {
                spc2.reset();
                return ScsiResult.good();
            });
        }
    }

    private synchronized String spc2Holder() {
        refresh();
        return spc2.holder();
    }

    /** PERSISTENT RESERVE IN. */
    ScsiResult in(byte[] cdb) {
        if (shared != null) {
            shared.sync(); // every change made before, through any port
        }
        synchronized (this) {
            refresh();
            return ScsiReservationReports.in(cdb, snapshot(), aptpl, persists(), port.getAsInt());
        }
    }

    /** PERSISTENT RESERVE OUT from {@code nexus} with its parameter list. */
    ScsiResult out(String nexus, byte[] cdb, byte[] param) {
        return out(nexus, cdb, param, new java.util.HashSet<>());
    }

    /**
     * As above; {@code preempted} gets the I_T nexuses with a session on this port whose
     * registrations a PREEMPT removed (those on other ports of a shared unit learn it as they apply
     * the change: {@link ScsiSharedReservations.Event}).
     */
    ScsiResult out(String nexus, byte[] cdb, byte[] param, java.util.Set<String> preempted) {
        java.util.Set<String> found = new java.util.HashSet<>();
        ScsiResult r = mutate(() -> {
            found.clear();
            this.preempted = found;
            try {
                ScsiResult x = outLocked(registrant(nexus), cdb, param);
                if ((cdb[1] & 0x1f) == 5 && !found.isEmpty()) { // PREEMPT AND ABORT: the other ports abort theirs
                    events.add(new ScsiSharedReservations.Event(ScsiSharedReservations.ABORT, registrant(nexus),
                            java.util.Set.copyOf(found)));
                }
                return x;
            } finally {
                this.preempted = null;
            }
        });
        preempted.addAll(found);
        return r;
    }

    private ScsiResult outLocked(String nexus, byte[] cdb, byte[] param) {
        ScsiReservationFile.State before = snapshot();
        boolean wasAptpl = aptpl;
        ScsiResult r = change(nexus, cdb, param);
        allTargetPorts.retainAll(keys.keySet()); // a registration gone takes its flag along
        if (r.status != ScsiResult.GOOD || file == null || !aptpl && !wasAptpl) {
            return r;
        }
        try {
            if (aptpl) {
                file.save(snapshot());
            } else {
                file.delete(); // APTPL 0: nothing is kept through a restart any more
            }
            return r;
        } catch (java.io.IOException e) {
            restore(before); // not kept, so not done
            aptpl = wasAptpl;
            return ScsiResult.check(ScsiResult.HARDWARE_ERROR, 0x44, 0x00); // internal target failure
        }
    }

    private ScsiResult change(String nexus, byte[] cdb, byte[] param) {
        int action = cdb[1] & 0x1f;
        int scope = (cdb[2] & 0xff) >>> 4;
        int newType = cdb[2] & 0x0f;
        if (action > 7) {
            return ScsiResult.invalidField();
        }
        if (action == 7) {
            return registerAndMove(nexus, cdb, param);
        }
        long length = Cdb.u32(cdb, 5);
        if (length < 24 || param.length < 24) {
            return ScsiTransportIdList.lengthError();
        }
        long key = Pdu.getLong(param, 0);
        long serviceKey = Pdu.getLong(param, 8);
        boolean specify = (param[20] & 0x08) != 0; // SPEC_I_PT: REGISTER only (SPC-4 6.16.3)
        if (specify && action != 0 || (param[20] & 0x01) != 0 && !persists()) { // APTPL: only where it is kept
            return invalidParameter();
        }
        if (!specify && length != 24) {
            return ScsiTransportIdList.lengthError();
        }
        Long mine = keys.get(nexus);
        if (action == 0 || action == 6) { // REGISTER, REGISTER AND IGNORE EXISTING KEY
            if (action == 0 && (mine == null ? key != 0 : mine != key)) {
                return conflict();
            }
            if (specify) {
                return registerSpecified(nexus, mine, serviceKey, param, length);
            }
            if (mine == null && serviceKey != 0 && keys.size() >= MAX_REGISTRATIONS) {
                return noRoom();
            }
            aptpl = (param[20] & 0x01) != 0;
            if (serviceKey == 0) {
                if (mine != null) {
                    boolean releases = holds(nexus) && !allRegistrants(type);
                    int was = type;
                    unregister(nexus);
                    generation++;
                    if (releases && (was == WRITE_EXCLUSIVE_REGISTRANTS_ONLY || was == EXCLUSIVE_ACCESS_REGISTRANTS_ONLY)) {
                        others(nexus, ScsiUnitAttentions.RESERVATIONS_RELEASED);
                    }
                }
            } else {
                keys.put(nexus, serviceKey);
                if ((param[20] & 0x04) != 0) { // ALL_TG_PT: every target port, which is this target's one
                    allTargetPorts.add(nexus);
                } else {
                    allTargetPorts.remove(nexus);
                }
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
                if (type >= WRITE_EXCLUSIVE_REGISTRANTS_ONLY) { // registrants-only and all-registrants types
                    others(nexus, ScsiUnitAttentions.RESERVATIONS_RELEASED);
                }
                type = 0;
                holder = null;
                return ScsiResult.good();
            case 3: // CLEAR
                others(nexus, ScsiUnitAttentions.RESERVATIONS_PREEMPTED);
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

    /**
     * REGISTER with SPEC_I_PT (SPC-4 5.14.7, table of REGISTER behaviours) from {@code nexus},
     * which is not registered and sent reservation key 0: with service action key 0 nothing
     * happens; else {@code nexus} and every I_T nexus the TransportIDs name are registered with
     * the service action key (ALL_TG_PT and APTPL as the list says), or none is. A nexus named
     * twice, or the sender named again, is registered once. Refused, with nothing registered: a
     * registered sender (INVALID FIELD IN CDB), a list {@link ScsiTransportIdList} refuses, a
     * TransportID naming an I_T nexus that is registered already (for format 00b: any registration
     * of that initiator) as INVALID FIELD IN PARAMETER LIST, more than {@value #MAX_REGISTRATIONS}
     * registrations in all as INSUFFICIENT REGISTRATION RESOURCES.
     */
    private ScsiResult registerSpecified(String nexus, Long mine, long serviceKey, byte[] param, long length) {
        if (mine != null) {
            return ScsiResult.invalidField();
        }
        ScsiTransportIdList.Parsed list = ScsiTransportIdList.parse(param, length);
        if (list.ids() == null) {
            return list.refusal();
        }
        if (serviceKey == 0) {
            return ScsiResult.good();
        }
        java.util.List<String> added = new java.util.ArrayList<>(java.util.List.of(nexus));
        for (ScsiTransportId id : list.ids()) {
            String reg = id.port() ? spelling(id.nexus()) : id.name();
            boolean registered = id.port() ? keys.containsKey(registrant(reg))
                    : keys.keySet().stream().anyMatch(k -> ScsiTransportId.initiatorOf(k).equalsIgnoreCase(id.name()));
            if (registered) {
                return invalidParameter();
            }
            if (added.stream().noneMatch(reg::equalsIgnoreCase)) {
                added.add(reg);
            }
        }
        if (keys.size() + added.size() > MAX_REGISTRATIONS) {
            return noRoom();
        }
        for (String reg : added) {
            keys.put(reg, serviceKey);
            if ((param[20] & 0x04) != 0) {
                allTargetPorts.add(reg);
            }
        }
        aptpl = (param[20] & 0x01) != 0;
        generation++;
        return ScsiResult.good();
    }

    /**
     * The registration {@code nexus} acts under: its own (its initiator port spelled in any case),
     * else its initiator's format 00b one, else none, and then {@code nexus} itself.
     */
    private String registrant(String nexus) {
        String r = ScsiReservationReports.registrantAmong(nexus, keys.keySet());
        return r != null ? r : nexus;
    }

    /** An initiator port as the nexus logged in with it spells it, else as given. */
    private String spelling(String port) {
        for (String n : attentions.attached()) {
            if (n.equalsIgnoreCase(port)) {
                return n;
            }
        }
        return port;
    }

    /** The I_T nexuses with a session on the unit that act under one of the registrations {@code regs}. */
    private java.util.Set<String> attachedUnder(java.util.Collection<String> regs) {
        java.util.Set<String> under = new java.util.HashSet<>();
        for (String n : attentions.attached()) {
            if (regs.contains(registrant(n))) {
                under.add(n);
            }
        }
        return under;
    }

    /**
     * REGISTER AND MOVE (SPC-4 5.12.8): the holder of a reservation that is not of an all-registrants
     * type registers the I_T nexus its TransportID names (with the service action key; an existing
     * registration of that nexus takes the key), hands it the reservation with its type, and with
     * UNREG unregisters itself. The parameter list: keys at 0 and 8, UNREG and APTPL in byte 17, the
     * relative target port (this port's, {@link ScsiPortGroups#ownPort}) at 18, the TransportID's length at 20 and
     * the TransportID from 24. A format 00b TransportID names the one nexus of that initiator that
     * is registered or has a session on the unit.
     */
    private ScsiResult registerAndMove(String nexus, byte[] cdb, byte[] param) {
        long length = Cdb.u32(cdb, 5);
        if (length < 24 || param.length < length) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x1A, 0x00); // parameter list length error
        }
        Long mine = keys.get(nexus);
        if (mine == null || mine != Pdu.getLong(param, 0)) {
            return conflict();
        }
        if (type == 0) {
            return ScsiResult.invalidField(); // nothing to move
        }
        if (!nexus.equals(holder) || allRegistrants(type)) {
            return conflict();
        }
        long serviceKey = Pdu.getLong(param, 8);
        boolean unreg = (param[17] & 0x02) != 0;
        boolean keep = (param[17] & 0x01) != 0;
        long idLength = Cdb.u32(param, 20);
        if (24 + idLength > length) {
            return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x1A, 0x00);
        }
        if (serviceKey == 0 || keep && !persists() || Cdb.u16(param, 18) != port.getAsInt()) {
            return invalidParameter();
        }
        ScsiTransportId id = ScsiTransportId.parse(param, 24, (int) (24 + idLength));
        String to = id == null ? null : destination(id);
        if (to == null || to.equalsIgnoreCase(nexus)
                || !id.port() && id.name().equalsIgnoreCase(ScsiTransportId.initiatorOf(nexus))) {
            return invalidParameter();
        }
        if (!keys.containsKey(to) && keys.size() >= MAX_REGISTRATIONS) {
            return noRoom();
        }
        keys.put(to, serviceKey);
        allTargetPorts.remove(to); // registered for the target port the parameter list names
        holder = to;
        if (unreg) {
            keys.remove(nexus);
        }
        aptpl = keep;
        generation++;
        return ScsiResult.good();
    }

    /**
     * The registration a TransportID names: for a port, the one it acts under, else the port as a
     * session spells it or as the TransportID does (it may log in later); for an initiator device,
     * the one registration its registered or attached nexuses act under, else null (none, or several).
     */
    private String destination(ScsiTransportId id) {
        if (id.port()) {
            String reg = registrant(id.nexus());
            return keys.containsKey(reg) ? reg : spelling(id.nexus());
        }
        java.util.Set<String> known = new java.util.LinkedHashSet<>(keys.keySet());
        for (String n : attentions.attached()) {
            known.add(registrant(n));
        }
        String found = null;
        for (String n : known) {
            if (ScsiTransportId.initiatorOf(n).equalsIgnoreCase(id.name())) {
                if (found != null) {
                    return null;
                }
                found = n;
            }
        }
        return found;
    }

    private ScsiResult preempt(String nexus, long victim, int newType) {
        if (type != 0 && allRegistrants(type) && victim == 0) {
            others(nexus, ScsiUnitAttentions.REGISTRATIONS_PREEMPTED);
            java.util.List<String> gone = keys.keySet().stream().filter(n -> !n.equals(nexus)).toList();
            preempted.addAll(gone);
            preempted.addAll(attachedUnder(gone));
            keys.keySet().removeIf(n -> !n.equals(nexus));
            type = newType;
            holder = nexus;
            generation++;
            return ScsiResult.good();
        }
        if (type != 0 && !allRegistrants(type) && keys.get(holder) == victim) {
            int was = type;
            removeKey(victim, nexus);
            if (was != newType) { // SPC-4: the remaining registrants learn that the old type is gone
                others(nexus, ScsiUnitAttentions.RESERVATIONS_RELEASED);
            }
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
        java.util.List<String> gone = new java.util.ArrayList<>();
        for (Map.Entry<String, Long> e : keys.entrySet()) {
            if (e.getValue() == key && !e.getKey().equals(keep)) {
                gone.add(e.getKey());
            }
        }
        java.util.Set<String> hit = attachedUnder(gone); // before they go: who acts under them
        for (String g : gone) {
            keys.remove(g);
            lost(g);
        }
        preempted.addAll(gone);
        preempted.addAll(hit);
        if (!gone.isEmpty()) {
            events.add(new ScsiSharedReservations.Event(ScsiUnitAttentions.REGISTRATIONS_PREEMPTED, keep,
                    new java.util.LinkedHashSet<>(gone)));
        }
        // preempting one's own key removes nothing but is no conflict
        return !gone.isEmpty() || keys.get(keep) != null && keys.get(keep) == key;
    }

    /** Establishes {@code code} for every nexus, on any port, acting under a registration but {@code except}. */
    private void others(String except, int code) {
        java.util.Set<String> targets = new java.util.LinkedHashSet<>(keys.keySet());
        targets.remove(except);
        if (!targets.isEmpty()) {
            events.add(new ScsiSharedReservations.Event(code, except, targets));
        }
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

    /** INSUFFICIENT REGISTRATION RESOURCES: {@value #MAX_REGISTRATIONS} registrations already. */
    private static ScsiResult noRoom() {
        return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x55, 0x04);
    }

    private static ScsiResult invalidParameter() {
        return ScsiResult.check(ScsiResult.ILLEGAL_REQUEST, 0x26, 0x00);
    }
}
