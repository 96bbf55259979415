package io.pistore.frontend.iscsi;

import io.pistore.spi.SharedVolumeState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The persistent and SPC-2 reservations of a unit that several target ports serve (a replicated
 * volume's peers, each a port of its own group), kept in the volume's shared state
 * ({@link SharedVolumeState}) so that every port holds the same: a PERSISTENT RESERVE OUT, RESERVE or
 * RELEASE on any port is worked out against the state this port applied last and set by
 * compare-and-set; when another port's change came first it is worked out again on the newer state.
 * What a change does besides the state (the unit attentions SPC-4 asks of PREEMPT, CLEAR and RELEASE,
 * and the tasks a PREEMPT AND ABORT aborts) travels with it as {@link Event}s, which each port
 * carries out for the I_T nexuses that have a session on it once it applies the change.
 *
 * <p>The value is the text of {@link ScsiReservationFile} with these lines besides:
 * <pre>
 * aptpl                       (the last REGISTER set APTPL; the state is kept anyway while the volume lives)
 * spc2 NEXUS                  (the SPC-2 reservation's holder)
 * origin TOKEN                (the port that made the change)
 * event CODE EXCEPT REG...    (a unit attention CODE, hex, or "abort", for the nexuses under REG... or,
 *                             for "*", every one; EXCEPT or "-")
 * </pre>
 */
final class ScsiSharedReservations {
    /** An event code: abort the tasks of the nexuses under the registrations (PREEMPT AND ABORT). */
    static final int ABORT = -1;
    /** An event's target that stands for every I_T nexus with a session on the unit (a reset). */
    static final String ALL = "*";
    /** How often a change is worked out again because another port's came first before it gives up (BUSY). */
    static final int MAX_ATTEMPTS = 16;

    /** A unit attention ({@code code}) or {@link #ABORT} for the nexuses acting under {@code targets}. */
    record Event(int code, String except, Set<String> targets) {
    }

    /** A decoded value: the state, the APTPL bit, the SPC-2 holder, who made it and what it did. */
    record Image(ScsiReservationFile.State state, boolean aptpl, String spc2, String origin, List<Event> events) {
        static final Image EMPTY = new Image(new ScsiReservationFile.State(0, 0, null, new java.util.LinkedHashMap<>(),
                Set.of()), false, null, "", List.of());
    }

    /** The state as this port applied it last, decoded once. */
    record Applied(long version, Image image) {
    }

    private final SharedVolumeState shared;
    private final String origin = Long.toHexString(new java.security.SecureRandom().nextLong() | 1L);
    private final ScsiUnitAttentions attentions;
    private final java.util.function.BiConsumer<Set<String>, Long> abort;
    private final Consumer<String> log;
    private final long waitMillis;
    private volatile Applied latest = new Applied(0, Image.EMPTY);
    /** One change of this port at a time: another would only lose the race to it. */
    private final java.util.concurrent.locks.ReentrantLock changing = new java.util.concurrent.locks.ReentrantLock();

    /**
     * Reservations kept in {@code shared}; {@code abort} aborts the tasks of I_T nexuses with a
     * session on this port that another port's PREEMPT AND ABORT preempted, those whose commands had
     * arrived when this port applied it ({@link ScsiTaskAborts}; it runs off the applying thread);
     * {@code waitMillis}: how long a change waits to be decided.
     */
    ScsiSharedReservations(SharedVolumeState shared, ScsiUnitAttentions attentions,
                           java.util.function.BiConsumer<Set<String>, Long> abort,
                           Consumer<String> log, long waitMillis) {
        this.shared = shared;
        this.attentions = attentions;
        this.abort = abort;
        this.log = log;
        this.waitMillis = waitMillis;
        shared.watch(this::applied);
        applied(shared.current()); // after watch: no change falls between the two
    }

    /** The state this port applied last, with its version. */
    Applied latest() {
        return latest;
    }

    private void applied(SharedVolumeState.Versioned v) {
        Image image;
        synchronized (this) {
            if (v.version() <= latest.version) {
                return;
            }
            try {
                image = v.value().length == 0 ? Image.EMPTY : decode(v.value());
            } catch (IOException e) {
                log.accept("iscsi: shared reservations version " + v.version() + " ignored: " + e.getMessage());
                return;
            }
            latest = new Applied(v.version(), image);
        }
        List<String> aborted = deliver(image.events(), image.state().keys().keySet(), attentions,
                !origin.equals(image.origin()));
        if (!aborted.isEmpty()) {
            Set<String> nexuses = new HashSet<>(aborted);
            long at = System.nanoTime(); // commands that arrive after this port applied the change are not aborted
            java.util.concurrent.CompletableFuture.runAsync(() -> abort.accept(nexuses, at));
        }
    }

    /**
     * Carries out {@code events} for the nexuses with a session on the unit: establishes the unit
     * attentions, and returns the nexuses whose tasks are to be aborted (with {@code aborts}; else none).
     * A nexus acts under its own registration, else its initiator's, among the registrations the
     * event names, its exception and {@code keys}.
     */
    static List<String> deliver(List<Event> events, Collection<String> keys, ScsiUnitAttentions attentions,
                                boolean aborts) {
        List<String> aborted = new ArrayList<>();
        if (events.isEmpty()) {
            return aborted;
        }
        List<String> attached = attentions.attached();
        for (Event e : events) {
            Set<String> among = new LinkedHashSet<>(e.targets());
            among.addAll(keys);
            if (e.except() != null) {
                among.add(e.except());
            }
            for (String n : attached) {
                String reg = ScsiReservationReports.registrantAmong(n, among);
                if (!e.targets().contains(ALL) && (reg == null || !e.targets().contains(reg))) {
                    continue;
                }
                if (e.code() == ABORT) {
                    if (aborts) {
                        aborted.add(n);
                    }
                } else {
                    attentions.establish(n, e.code());
                }
            }
        }
        return aborted;
    }

    /**
     * Waits until this port has applied every change made before, through any port
     * ({@link SharedVolumeState#sync}), at most the wait a change has; returns either way.
     */
    void sync() {
        try {
            shared.sync().get(waitMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            log.accept("iscsi: shared reservations not brought up to date: " + (e.getCause() != null ? e.getCause() : e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits until this port has applied a version of at least {@code version}, at most the wait a
     * change has; returns either way (the caller checks again against what it then has).
     */
    void awaitNewer(long version) {
        try {
            shared.awaitVersion(version).get(waitMillis, TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            log.accept("iscsi: shared reservations version " + version + " not applied here: "
                    + (e.getCause() != null ? e.getCause() : e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One try at a change: its answer, and the value to set, or null when the change leaves the state
     * as it was; {@code tells}: it has events for the sessions of every port (then it is answered
     * once every port has it, {@link SharedVolumeState#awaitEverywhere}).
     */
    record Attempt(ScsiResult result, long base, byte[] value, boolean tells) {
    }

    /**
     * Runs {@code attempt} (which works a change out against the state this port applied last, at
     * version {@link Attempt#base}) until its value is set or it needs none: when another port's
     * change came first it runs again on the newer state, at most {@value #MAX_ATTEMPTS} times
     * (then BUSY). A change that cannot be decided within the wait answers HARDWARE ERROR, INTERNAL
     * TARGET FAILURE (the initiator asks again; the change may still be made).
     */
    ScsiResult change(java.util.function.Supplier<Attempt> attempt) {
        changing.lock();
        try {
            sync(); // worked out on every change made before, through any port
            for (int i = 0; i < MAX_ATTEMPTS; i++) {
                Attempt a = attempt.get();
                if (a.value() == null) {
                    return a.result();
                }
                try {
                    if (shared.compareAndSet(a.base(), a.value()).get(waitMillis, TimeUnit.MILLISECONDS)) {
                        if (a.tells()) {
                            shared.awaitEverywhere(shared.current().version()).get(waitMillis, TimeUnit.MILLISECONDS);
                        }
                        return a.result();
                    }
                } catch (ExecutionException | TimeoutException e) {
                    log.accept("iscsi: reservation change not decided: " + (e.getCause() != null ? e.getCause() : e));
                    return ScsiResult.check(ScsiResult.HARDWARE_ERROR, 0x44, 0x00);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return ScsiResult.check(ScsiResult.HARDWARE_ERROR, 0x44, 0x00);
                }
            }
            return ScsiResult.status(ScsiResult.BUSY);
        } finally {
            changing.unlock();
        }
    }

    /** The value of a state with its events, made by this port. */
    byte[] encode(ScsiReservationFile.State s, boolean aptpl, String spc2, List<Event> events) {
        StringBuilder b = ScsiReservationFile.encode(s);
        if (aptpl) {
            b.append("aptpl\n");
        }
        if (spc2 != null) {
            b.append("spc2 ").append(spc2).append('\n');
        }
        b.append("origin ").append(origin).append('\n');
        for (Event e : events) {
            b.append("event ").append(e.code() == ABORT ? "abort" : Integer.toHexString(e.code())).append(' ')
                    .append(e.except() == null ? "-" : e.except());
            for (String t : e.targets()) {
                b.append(' ').append(t);
            }
            b.append('\n');
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    static Image decode(byte[] value) throws IOException {
        boolean[] aptpl = {false};
        String[] spc2 = {null};
        String[] from = {""};
        List<Event> events = new ArrayList<>();
        ScsiReservationFile.State s = ScsiReservationFile.decode(new String(value, StandardCharsets.UTF_8),
                "shared reservations", (w, line) -> {
                    switch (w[0]) {
                        case "aptpl" -> aptpl[0] = true;
                        case "spc2" -> spc2[0] = w[1];
                        case "origin" -> from[0] = w[1];
                        case "event" -> {
                            String[] all = line.split(" ");
                            int code = all[1].equals("abort") ? ABORT : Integer.parseInt(all[1], 16);
                            Set<String> targets = new LinkedHashSet<>(List.of(all).subList(3, all.length));
                            events.add(new Event(code, all[2].equals("-") ? null : all[2], targets));
                        }
                        default -> {
                            return false;
                        }
                    }
                    return true;
                });
        return new Image(s, aptpl[0], spc2[0], from[0], events);
    }
}
