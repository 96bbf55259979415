package io.pistore.frontend.iscsi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.service.TargetService;
import io.pistore.engine.volume.ForwardingVolume;
import io.pistore.engine.volume.MemoryVolume;
import io.pistore.engine.volume.ViewChangedException;
import io.pistore.engine.volume.Volume;
import io.pistore.engine.volume.VolumeStore;
import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.PiDuty;
import io.pistore.spi.SharedVolumeState;
import io.pistore.spi.WriteFence;
import io.pistore.testkit.Eventually;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reservations of a unit that two target ports serve (two servers over one volume whose shared
 * state stands in for a replicated volume's, {@link SharedVolumeState}): what one port sets holds on
 * the other, the unit attentions of a change reach sessions on the other port, changes made at
 * once on both ports both count, and a write checked against a state that a PREEMPT on the other
 * port has since replaced never lands.
 */
@Timeout(120)
class IscsiSharedReservationsTest extends IscsiLoopbackFixture {
    private static final BlockFormat F = BlockFormat.of(512, 8);
    private static final long KEY_A = 0xAAAA_0000_0000_0001L;
    private static final long KEY_B = 0xBBBB_0000_0000_0002L;
    private static final long KEY_C = 0xCCCC_0000_0000_0003L;
    private static final int WE_RO = ScsiReservations.WRITE_EXCLUSIVE_REGISTRANTS_ONLY;

    /** The shared state's versions, the same for every port (what a Raft log orders). */
    static final class Core {
        private final List<byte[]> values = new ArrayList<>();
        private final List<Port> ports = new ArrayList<>();
        final AtomicInteger refusedChanges = new AtomicInteger();
        final AtomicInteger refusedWrites = new AtomicInteger();

        synchronized long version() {
            return values.size();
        }

        synchronized SharedVolumeState.Versioned at(long version) {
            return new SharedVolumeState.Versioned(version, version == 0 ? new byte[0] : values.get((int) version - 1));
        }

        /** Sets the value when its version is still {@code expected}; every port applies it unless held. */
        boolean compareAndSet(long expected, byte[] value) {
            boolean set;
            synchronized (this) {
                set = expected == values.size();
                if (set) {
                    values.add(value.clone());
                } else {
                    refusedChanges.incrementAndGet();
                }
            }
            List<Port> all;
            synchronized (this) {
                all = List.copyOf(ports);
            }
            all.stream().filter(p -> !p.lazy).forEach(Port::catchUp);
            return set;
        }
    }

    /**
     * One port's view of the shared state: it applies the core's versions in order as they are set,
     * unless held; a lazy one only when it is asked to (a sync, a wait, its own change), as a peer
     * that lags behind the leader. A gated one's next sync waits at the gate once it has caught up.
     */
    static final class Port implements SharedVolumeState {
        private final Core core;
        private long applied;
        private boolean held;
        volatile boolean lazy;
        private final java.util.concurrent.CountDownLatch gate = new java.util.concurrent.CountDownLatch(1);
        private final java.util.concurrent.atomic.AtomicBoolean gated = new java.util.concurrent.atomic.AtomicBoolean();
        private final java.util.concurrent.CountDownLatch atGate = new java.util.concurrent.CountDownLatch(1);
        private final List<Consumer<Versioned>> watchers = new ArrayList<>();
        private final List<Object[]> waiting = new ArrayList<>();

        Port(Core core) {
            this.core = core;
            synchronized (core) {
                core.ports.add(this);
            }
        }

        synchronized void hold() {
            held = true;
        }

        void release() {
            synchronized (this) {
                held = false;
            }
            catchUp();
        }

        void catchUp() {
            List<Runnable> done = new ArrayList<>();
            synchronized (this) {
                while (!held && applied < core.version()) {
                    applied++;
                    Versioned v = core.at(applied);
                    watchers.forEach(w -> w.accept(v));
                }
                for (java.util.Iterator<Object[]> i = waiting.iterator(); i.hasNext(); ) {
                    Object[] w = i.next();
                    if ((long) w[0] <= applied) {
                        i.remove();
                        @SuppressWarnings("unchecked")
                        CompletableFuture<Versioned> f = (CompletableFuture<Versioned>) w[1];
                        Versioned now = core.at(applied);
                        done.add(() -> f.complete(now));
                    }
                }
            }
            done.forEach(Runnable::run);
        }

        @Override
        public synchronized Versioned current() {
            return core.at(applied);
        }

        @Override
        public CompletableFuture<Boolean> compareAndSet(long expected, byte[] value) {
            boolean set = core.compareAndSet(expected, value);
            return awaitVersion(core.version()).thenApply(v -> set);
        }

        /** The next sync, once caught up, waits until {@link #openGate}. */
        void gateSyncs() {
            gated.set(true);
        }

        void openGate() {
            gate.countDown();
        }

        boolean waitingAtGate() {
            return atGate.getCount() == 0;
        }

        @Override
        public CompletableFuture<Versioned> sync() {
            boolean g = gated.getAndSet(false);
            return awaitVersion(core.version()).thenApplyAsync(v -> {
                if (g) {
                    atGate.countDown();
                    try {
                        gate.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return v;
            });
        }

        @Override
        public CompletableFuture<Void> awaitEverywhere(long version) {
            List<Port> all;
            synchronized (core) {
                all = List.copyOf(core.ports);
            }
            all.forEach(Port::catchUp); // a lazy port takes it in now; a held one does not answer
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Versioned> awaitVersion(long version) {
            CompletableFuture<Versioned> f = new CompletableFuture<>();
            synchronized (this) {
                waiting.add(new Object[] {version, f});
            }
            catchUp();
            return f;
        }

        @Override
        public synchronized void watch(Consumer<Versioned> watcher) {
            watchers.add(watcher);
        }
    }

    /** The volume as one port serves it: the shared data, that port's view of the state, writes checked as a replicated volume checks them. */
    static final class Served extends ForwardingVolume {
        private final Core core;
        private final Port port;

        Served(Volume data, Core core) {
            super(data);
            this.core = core;
            this.port = new Port(core);
        }

        @Override
        public SharedVolumeState sharedState() {
            return port;
        }

        @Override
        public boolean writesAsync() {
            return true;
        }

        private void check(WriteFence fence) throws ViewChangedException {
            if (fence != null && fence.view() != 0 && fence.view() - 1 != core.version()) {
                core.refusedWrites.incrementAndGet();
                throw new ViewChangedException("checked against version " + (fence.view() - 1) + ", now "
                        + core.version());
            }
        }

        @Override
        public CompletableFuture<Void> writeAsync(long lba, int blocks, ScatterList data, ScatterList metadata,
                boolean fua, PiDuty duty, WriteFence fence) {
            try {
                check(fence);
            } catch (ViewChangedException e) {
                return CompletableFuture.failedFuture(e);
            }
            return super.writeAsync(lba, blocks, data, metadata, fua, duty, fence);
        }

        @Override
        public void writeZeroes(long lba, int blocks, boolean fua, WriteFence fence) throws IOException {
            check(fence);
            super.writeZeroes(lba, blocks, fua, fence);
        }
    }

    private final Core core = new Core();
    private final MemoryVolume data = new MemoryVolume("s", F, 64);
    private Served first;
    private VolumeStore otherStore;
    private IscsiServer other;

    @Override
    void createVolumes() throws IOException {
        first = new Served(data, core);
        store.attach(first);
    }

    /** The second port: another server, over the same data and shared state. */
    private Served second() throws IOException {
        Served s = new Served(data, core);
        otherStore = VolumeStore.open(dir.resolve("volumes2"));
        otherStore.attach(s);
        other = IscsiServer.serveLocal("127.0.0.1:0", new TargetService(otherStore), options());
        return s;
    }

    @AfterEach
    void closeSecond() throws IOException {
        if (other != null) {
            other.close();
        }
        if (otherStore != null) {
            otherStore.close();
        }
    }

    private IscsiTestInitiator onFirst(String name) throws IOException {
        return loginAs(name, "s", "ImmediateData", "Yes");
    }

    private IscsiTestInitiator onSecond(String name) throws IOException {
        return new IscsiTestInitiator(other.address(), IscsiServer.targetName("s"), IscsiTestInitiator.DEFAULT_ISID,
                "InitiatorName", "iqn.2026-12.io.pistore:" + name, "ImmediateData", "Yes");
    }

    @Test
    void whatOnePortSetsHoldsOnTheOther() throws Exception {
        second();
        try (IscsiTestInitiator a = onFirst("a"); IscsiTestInitiator b = onSecond("b")) {
            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A, 0).status());
            assertEquals(GOOD, prout(a, 1, ScsiReservations.WRITE_EXCLUSIVE, KEY_A, 0, 0).status());
            assertEquals(CONFLICT, write(b), "a reservation made on the first port holds off a write on the second");
            assertEquals(GOOD, read(b));
            byte[] keys = IscsiReservationTest.prin(b, 0);
            assertEquals(1, Pdu.getInt(keys, 0), "the generation, as the second port reports it");
            assertEquals(KEY_A, Pdu.getLong(keys, 8));
            assertEquals(GOOD, prout(b, 0, 0, 0, KEY_B, 0).status());
            assertEquals(CONFLICT, prout(b, 1, ScsiReservations.WRITE_EXCLUSIVE, KEY_B, 0, 0).status(),
                    "the reservation is the first port's nexus's");
            byte[] both = IscsiReservationTest.prin(a, 0);
            assertEquals(16, Pdu.getInt(both, 4), "the first port sees the second port's registration");
            assertEquals(GOOD, write(a));

            assertEquals(GOOD, prout(a, 2, ScsiReservations.WRITE_EXCLUSIVE, KEY_A, 0, 0).status(), "RELEASE");
            assertEquals(GOOD, write(b));
            assertEquals(CONFLICT, reserve6(a), "RESERVE(6) while keys are registered, on any port, conflicts");
        }
    }

    /** Runs {@code command} on another thread: what a session sends while the test does something else. */
    private static CompletableFuture<Integer> meanwhile(java.util.concurrent.Callable<Integer> command) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return command.call();
            } catch (Exception e) {
                throw new java.util.concurrent.CompletionException(e);
            }
        });
    }

    private static int reserve6(IscsiTestInitiator c) throws IOException {
        return c.command(new byte[] {0x16, 0, 0, 0, 0, 0}, new byte[0], 0, 0, false).status();
    }

    @Test
    void anSpc2ReservationOnOnePortHoldsOffTheOther() throws Exception {
        second();
        try (IscsiTestInitiator a = onFirst("a"); IscsiTestInitiator b = onSecond("b")) {
            assertEquals(GOOD, reserve6(a));
            assertEquals(CONFLICT, write(b));
            assertEquals(CONFLICT, reserve6(b));
            assertEquals(GOOD, write(a));
        }
        try (IscsiTestInitiator b = onSecond("b")) {
            Eventually.until("the reservation went with its holder's session", () -> write(b), st -> st == GOOD);
        }
    }

    @Test
    void unitAttentionsOfAChangeReachSessionsOnTheOtherPort() throws Exception {
        second();
        try (IscsiTestInitiator a = onFirst("a"); IscsiTestInitiator b = onSecond("b")) {
            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A, 0).status());
            assertEquals(GOOD, prout(b, 0, 0, 0, KEY_B, 0).status());
            assertEquals(GOOD, prout(a, 1, WE_RO, KEY_A, 0, 0).status());
            assertEquals(GOOD, prout(a, 2, WE_RO, KEY_A, 0, 0).status(), "RELEASE of a registrants-only type");
            assertUnitAttention(ScsiUnitAttentions.RESERVATIONS_RELEASED, tur(b)); // on the other port
            assertEquals(GOOD, tur(a).status(), "not for the releasing nexus");

            assertEquals(GOOD, prout(a, 1, WE_RO, KEY_A, 0, 0).status());
            assertEquals(GOOD, prout(b, 4, WE_RO, KEY_B, KEY_A, 0).status(), "PREEMPT of a's key from the second port");
            assertUnitAttention(ScsiUnitAttentions.REGISTRATIONS_PREEMPTED, tur(a));
            assertEquals(CONFLICT, write(a), "a is no registrant any more");
            assertEquals(GOOD, write(b));
        }
    }

    @Test
    void aWriteCheckedBeforeAPreemptOnTheOtherPortNeverLands() throws Exception {
        Served lagging = second();
        byte[] before = new byte[512];
        try (IscsiTestInitiator a = onFirst("a"); IscsiTestInitiator b = onSecond("b")) {
            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A, 0).status());
            assertEquals(GOOD, prout(b, 0, 0, 0, KEY_B, 0).status());
            assertEquals(GOOD, prout(a, 1, WE_RO, KEY_A, 0, 0).status());
            assertEquals(GOOD, write(b), "a registrant writes under Write Exclusive, Registrants Only");
            data.read(1, 1, ScatterList.wrap(before), ScatterList.wrap(new byte[8]));

            lagging.port.hold(); // the second port has not applied the PREEMPT yet when b's write reaches it
            assertEquals(GOOD, prout(a, 4, WE_RO, KEY_A, KEY_B, 0).status(), "PREEMPT of b's key");
            CompletableFuture<Integer> late = meanwhile(() -> b.command(java.util.Arrays.copyOf(cdb10(0x2A, 1, 1), 10),
                    block(7), 512, 512, false).status());
            Eventually.await("the stale write reaches the volume and is refused", () -> core.refusedWrites.get() > 0);
            lagging.port.release();
            assertEquals(CONFLICT, late.get().intValue(), "checked again on the newer state: held off");
            byte[] after = new byte[512];
            data.read(1, 1, ScatterList.wrap(after), ScatterList.wrap(new byte[8]));
            assertArrayEquals(before, after, "nothing of the stale write landed");
            assertUnitAttention(ScsiUnitAttentions.REGISTRATIONS_PREEMPTED, tur(b));
        }
    }

    @Test
    void changesMadeAtOnceOnBothPortsBothCount() throws Exception {
        Served lagging = second();
        try (IscsiTestInitiator a = onFirst("a"); IscsiTestInitiator b = onSecond("b"); IscsiTestInitiator c = onFirst("c")) {
            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A, 0).status());
            lagging.port.gateSyncs();
            CompletableFuture<Integer> register = meanwhile(() -> prout(b, 0, 0, 0, KEY_B, 0).status());
            Eventually.await("the second port's REGISTER to have caught up", lagging.port::waitingAtGate);
            lagging.port.hold(); // what comes now reaches the second port only later
            assertEquals(GOOD, prout(c, 0, 0, 0, KEY_C, 0).status(), "a change through the first port in between");
            lagging.port.openGate();
            Eventually.await("the second port's change loses the race", () -> core.refusedChanges.get() > 0);
            lagging.port.release();
            assertEquals(GOOD, register.get().intValue(), "worked out again on the newer state");
            byte[] keys = IscsiReservationTest.prin(a, 0);
            assertEquals(3, Pdu.getInt(keys, 0), "all three registrations counted");
            assertEquals(24, Pdu.getInt(keys, 4));
            assertEquals(3, core.version(), "each change set the shared state once");
        }
    }

    /**
     * A port that lags behind (it applies changes only when asked) answers as if it had every change
     * made before through the other port: it catches up before a PERSISTENT RESERVE IN or OUT, a
     * RESERVE or RELEASE, and before it answers RESERVATION CONFLICT.
     */
    @Test
    void aPortThatLagsAnswersAfterEveryChangeMadeBefore() throws Exception {
        Served lagging = second();
        lagging.port.lazy = true;
        try (IscsiTestInitiator a = onFirst("a"); IscsiTestInitiator b = onSecond("b")) {
            assertEquals(GOOD, reserve6(a));
            assertEquals(CONFLICT, write(b), "the reservation, caught up before answering a conflict");
            assertEquals(GOOD, release6(a));
            assertEquals(GOOD, reserve6(b), "RESERVE(6) after the other port's RELEASE(6) was answered");
            assertEquals(GOOD, release6(b));
            assertEquals(GOOD, prout(a, 0, 0, 0, KEY_A, 0).status());
            byte[] keys = IscsiReservationTest.prin(b, 0);
            assertEquals(8, Pdu.getInt(keys, 4), "READ KEYS through the lagging port shows the registration just made");
            assertEquals(GOOD, prout(a, 1, ScsiReservations.WRITE_EXCLUSIVE, KEY_A, 0, 0).status());
            assertEquals(CONFLICT, write(b));
            assertEquals(GOOD, prout(a, 2, ScsiReservations.WRITE_EXCLUSIVE, KEY_A, 0, 0).status(), "RELEASE");
            assertEquals(GOOD, write(b), "a write after the RELEASE was answered: no stale conflict");
        }
    }

    /**
     * A LOGICAL UNIT RESET through one port reaches the sessions of the other (SAM-5: every I_T nexus
     * of the unit): their unit attention, and their waiting tasks aborted; it ends an SPC-2
     * reservation held through the other port.
     */
    @Test
    void aLogicalUnitResetThroughOnePortReachesTheOther() throws Exception {
        second();
        try (IscsiTestInitiator a = onFirst("a"); IscsiTestInitiator b = onSecond("b")) {
            assertEquals(GOOD, reserve6(b));
            assertEquals(CONFLICT, write(a));
            // b's write waits for its data on the other port when a resets the unit
            int waiting = b.submit(cdb10(0x2A, 5, 1), new byte[0], 512, true, IscsiTask.SIMPLE);
            assertEquals(Pdu.R2T, b.next().opcode());
            int tmf = a.taskManagement(IscsiTaskSetTest.LOGICAL_UNIT_RESET, Pdu.RESERVED_TAG, 0);
            Pdu answer = a.next();
            assertEquals(tmf, answer.itt());
            assertEquals(0, answer.u8(2), "function complete");
            Pdu aborted = b.next();
            assertEquals(waiting, aborted.itt(), "the other port aborts its session's task");
            assertEquals(ScsiResult.TASK_ABORTED, aborted.u8(3));
            assertUnitAttention(ScsiUnitAttentions.RESET, tur(a));
            assertUnitAttention(ScsiUnitAttentions.RESET, tur(b)); // on the other port
            assertEquals(GOOD, tur(b).status(), "reported once");
            assertEquals(GOOD, write(a), "the reset ended the other port's SPC-2 reservation");
        }
    }

    private static int release6(IscsiTestInitiator c) throws IOException {
        return c.command(new byte[] {0x17, 0, 0, 0, 0, 0}, new byte[0], 0, 0, false).status();
    }
}
