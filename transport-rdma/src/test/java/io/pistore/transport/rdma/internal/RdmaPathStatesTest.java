package io.pistore.transport.rdma.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.PathState;
import io.pistore.spi.PiDuty;
import io.pistore.spi.Protection;
import io.pistore.spi.Status;
import io.pistore.spi.TargetHandler;
import io.pistore.spi.TransportOptions;
import io.pistore.spi.VolumeInfo;
import io.pistore.testkit.Eventually;
import io.pistore.transport.rdma.RdmaOptions;
import io.pistore.transport.rdma.verbs.soft.SoftDevice;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Path states over rdma (the soft NIC, in one process): three targets serve one shared memory volume,
 * as a replicated volume's peers do, and the test says which one leads (optimized; the others
 * non-optimized). A host given the list watches every peer (a held PATH_STATES capsule each) and
 * sends its I/O to the leader, moving when the leader changes or dies, while writers on every queue
 * check that no request fails and every read returns what was written.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaPathStatesTest {
    /** One peer: optimized while it leads. */
    static final class Peer implements TargetHandler {
        final MemoryTarget volume;
        final int index;
        final int[] leader;

        Peer(MemoryTarget volume, int index, int[] leader) {
            this.volume = volume;
            this.index = index;
            this.leader = leader;
        }

        @Override
        public List<VolumeInfo> volumes() {
            return volume.volumes();
        }

        @Override
        public PathState pathState(String v) {
            int l = leader[0];
            return l == index ? PathState.OPTIMIZED : l < 0 ? PathState.INACCESSIBLE : PathState.NON_OPTIMIZED;
        }

        @Override
        public void execute(BlockRequest r, PiDuty duty, Consumer<Completion> done) {
            volume.execute(r, duty, done);
        }
    }

    final RdmaTarget[] targets = new RdmaTarget[3];
    final String[] addresses = new String[3];
    final MemoryTarget shared = new MemoryTarget(RdmaReconnectTest.F, 64);
    final int[] leader = {1};

    @BeforeEach
    void setUp() throws Exception {
        start(true);
    }

    private void start(boolean pathStates) throws Exception {
        for (int i = 0; i < 3; i++) {
            targets[i] = new RdmaTarget(new SoftDevice(true), "127.0.0.1:0", new Peer(shared, i, leader), true, 0,
                    pathStates);
            addresses[i] = targets[i].address();
        }
    }

    @AfterEach
    void tearDown() {
        for (RdmaTarget t : targets) {
            if (t != null) {
                t.close();
            }
        }
    }

    private static RdmaOptions options() {
        return RdmaOptions.of(TransportOptions.of(Map.of("rdma.provider", "soft", "rdma.reconnectDelayMs", "20",
                "rdma.reconnectMaxDelayMs", "200")));
    }

    private RdmaHostConnection connect(String address, int queues) throws Exception {
        return new RdmaHostConnection("soft", new SoftDevice(true), options(), address, new ConnectOptions(queues, 4));
    }

    private static Completion write(RdmaHostConnection c, int q, long lba, byte[] data) throws Exception {
        return c.queue(q).submit(BlockRequest.write(MemoryTarget.VOLUME, lba, 1, ScatterList.wrap(data.clone()), null,
                Protection.insertStrip(lba), false)).get(30, TimeUnit.SECONDS);
    }

    private static Completion read(RdmaHostConnection c, int q, long lba, byte[] into) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(into.length);
        Completion r = c.queue(q).submit(BlockRequest.read(MemoryTarget.VOLUME, lba, 1, ScatterList.of(b), null,
                Protection.insertStrip(lba))).get(30, TimeUnit.SECONDS);
        b.get(0, into);
        return r;
    }

    /** Writes and reads back blocks on every queue until closed, keeping every failure. */
    private static final class Writer implements AutoCloseable {
        final List<String> failures = Collections.synchronizedList(new ArrayList<>());
        final AtomicBoolean stop = new AtomicBoolean();
        final List<Thread> threads = new ArrayList<>();
        volatile long done;

        Writer(RdmaHostConnection c) {
            for (int q = 0; q < c.queueCount(); q++) {
                int queue = q;
                Thread t = new Thread(() -> run(c, queue), "writer-" + q);
                threads.add(t);
                t.start();
            }
        }

        private void run(RdmaHostConnection c, int q) {
            Random rnd = new Random(q);
            byte[] data = new byte[4096];
            byte[] back = new byte[4096];
            try {
                while (!stop.get()) {
                    long lba = q * 32L + rnd.nextInt(32);
                    rnd.nextBytes(data);
                    Completion w = write(c, q, lba, data);
                    if (!w.isSuccess()) {
                        failures.add("write lba " + lba + ": " + w);
                        continue;
                    }
                    Completion r = read(c, q, lba, back);
                    if (!r.isSuccess()) {
                        failures.add("read lba " + lba + ": " + r);
                    } else if (!java.util.Arrays.equals(data, back)) {
                        failures.add("read lba " + lba + " returned other data");
                    }
                    done++;
                }
            } catch (Exception e) {
                failures.add(e.toString());
            }
        }

        /** Waits until {@code n} more round trips went through. */
        void roundTrips(int n) {
            long from = done;
            Eventually.await(n + " more round trips (failures " + failures + ")", () -> done >= from + n);
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            for (Thread t : threads) {
                t.join();
            }
        }
    }

    private static void awaitPeer(RdmaHostConnection c, String what, String address) {
        for (int q = 0; q < c.queueCount(); q++) {
            int queue = q;
            Eventually.await("queue " + q + " on " + what + " " + address + " (paths " + c.peerPaths() + ")",
                    () -> address.equals(c.peerOf(queue)));
        }
    }

    @Test
    void theHostSendsItsIoToTheLeaderAndFollowsItWithoutAnError() throws Exception {
        try (RdmaHostConnection c = connect(String.join(",", addresses), 2)) {
            assertEquals(addresses[0], c.peerOf(0), "the first peer that answers");
            Writer w = new Writer(c);
            try {
                awaitPeer(c, "the leader", addresses[1]);
                w.roundTrips(20);
                leader[0] = 2; // a leadership transfer
                awaitPeer(c, "the new leader", addresses[2]);
                w.roundTrips(20);
                leader[0] = 0; // the leader dies; another is elected
                targets[2].close();
                targets[2] = null;
                awaitPeer(c, "the leader after the kill", addresses[0]);
                w.roundTrips(20);
            } finally {
                w.close();
            }
            assertEquals(List.of(), w.failures, "no request failed");
            assertTrue(c.moves() >= 4, "moves " + c.moves());
            assertEquals(PathState.OPTIMIZED, c.peerPaths().state(0, MemoryTarget.VOLUME));
            Eventually.await("the killed peer unreachable", () -> c.peerPaths().isUnreachable(2));
            assertEquals(PathState.INACCESSIBLE, c.peerPaths().state(2, MemoryTarget.VOLUME));
        }
    }

    @Test
    void withoutALeaderTheHostStaysWhereItIs() throws Exception {
        leader[0] = -1;
        try (RdmaHostConnection c = connect(String.join(",", addresses), 1)) {
            for (int p = 0; p < 3; p++) {
                int peer = p;
                Eventually.await("peer " + p + " reported", () -> c.peerPaths().state(peer, MemoryTarget.VOLUME) != null);
                assertEquals(PathState.INACCESSIBLE, c.peerPaths().state(p, MemoryTarget.VOLUME));
            }
            assertEquals(Status.SUCCESS, write(c, 0, 3, new byte[4096]).status());
            assertEquals(addresses[0], c.peerOf(0));
            assertEquals(0, c.moves());
        }
    }

    @Test
    void oneAddressIsNotWatched() throws Exception {
        try (RdmaHostConnection c = connect(addresses[0], 1)) {
            assertNull(c.peerPaths());
            assertEquals(Status.SUCCESS, write(c, 0, 3, new byte[4096]).status());
        }
    }

    @Test
    void peersThatDoNotReportPathStatesAreUsedAsBefore() throws Exception {
        tearDown();
        start(false); // as a pistore without them: PATH_STATES is an unknown opcode there
        try (RdmaHostConnection c = connect(String.join(",", addresses), 1)) {
            byte[] data = new byte[4096];
            new Random(3).nextBytes(data);
            assertEquals(Status.SUCCESS, write(c, 0, 4, data).status());
            byte[] back = new byte[4096];
            assertEquals(Status.SUCCESS, read(c, 0, 4, back).status());
            assertArrayEquals(data, back);
            assertEquals(addresses[0], c.peerOf(0), "no state, no move");
            assertNull(c.peerPaths().state(1, MemoryTarget.VOLUME), "peer 1 said nothing");
            assertTrue(!c.peerPaths().isUnreachable(1), "nor is it unreachable");
        }
    }
}
