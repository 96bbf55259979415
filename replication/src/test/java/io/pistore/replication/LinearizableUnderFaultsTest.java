package io.pistore.replication;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.integrity.ScatterList;
import io.pistore.replication.group.GroupMembership;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.testkit.FreePorts;
import io.pistore.testkit.LinearizabilityChecker;
import io.pistore.testkit.LinearizabilityChecker.Op;
import io.pistore.spi.Completion;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Clients on two of three peers read and write unique values into a few blocks (each block a
 * register) while faults run in turn: leadership moves to a random peer; the third peer stops (a
 * crash of the leader whenever it led) and restarts; a fourth peer joins the group and is removed
 * again (two membership changes). Every operation's invocation, completion and result is recorded,
 * and {@link LinearizabilityChecker} proves the history linearizable or prints the shortest anomaly.
 * Each kind of fault at least once and a few seconds by default; {@code -Dpistore.linear.seconds=N}
 * runs longer. Reads on
 * the peer that leads and on one that follows each read that peer's own replica (after the read
 * index), so the history holds both kinds. Kills with SIGKILL, SIGSTOP
 * and network partitions of {@code serve} processes are the faults of {@code LinearizableProcessFaultsTest} (the it module), with this checker.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class LinearizableUnderFaultsTest {
    private static final BlockFormat FORMAT = BlockFormat.of(512, 8);
    private static final int REGISTERS = 4;
    private static final int CLIENTS_PER_PEER = 2;

    @TempDir
    Path dir;

    @Test
    void historiesUnderLeaderChangesAndPeerCrashesAreLinearizable() throws Exception {
        long seconds = Long.getLong("pistore.linear.seconds", 4);
        int kinds = 3;
        List<Op> history = new CopyOnWriteArrayList<>();
        AtomicInteger failed = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        int faults = 0;
        int transfersRefused = 0;
        long followerReads;
        long leaderReads;
        int[] byKind = new int[3];
        try (ThreePeers peers = ThreePeers.start(dir, "rv", FORMAT, REGISTERS, SinglePeerFailureTest.SETTINGS);
             ServedVolume a = new ServedVolume(peers.node(0), "rv");
             ServedVolume b = new ServedVolume(peers.node(1), "rv")) {
            List<Thread> clients = new ArrayList<>();
            ServedVolume[] via = {a, b};
            for (int c = 0; c < 2 * CLIENTS_PER_PEER; c++) {
                int client = c;
                ServedVolume s = via[c % 2];
                Thread t = new Thread(() -> {
                    try {
                        clientLoop(client, s, history, failed, stop);
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }, "linear-client-" + c);
                clients.add(t);
                t.start();
            }
            Random rnd = new Random(5);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while ((System.nanoTime() < end || faults < kinds) && errors.isEmpty()) {
                int before = history.size();
                int kind = faults < kinds ? faults : rnd.nextInt(kinds);
                byKind[kind]++;
                if (kind == 0) {
                    try {
                        a.volume.transferLeadership(ThreePeers.id(rnd.nextInt(3)));
                    } catch (java.io.IOException e) {
                        transfersRefused++; // a peer still catching up after its restart may not take it
                    }
                } else if (kind == 1) {
                    peers.stop(2);
                    ThreePeers.await(() -> history.size() >= before + 20 || !errors.isEmpty(),
                            "operations to go on with one peer stopped");
                    peers.restart(2);
                } else {
                    joinAndLeave(peers, history, errors);
                }
                faults++;
                ThreePeers.await(() -> history.size() >= before + 40 || !errors.isEmpty(),
                        "operations to go on after a fault");
            }
            stop.set(true);
            for (Thread t : clients) {
                t.join(TimeUnit.SECONDS.toMillis(60));
            }
            followerReads = a.volume.followerReads() + b.volume.followerReads();
            leaderReads = a.volume.localReads() + b.volume.localReads();
        }
        assertEquals(List.of(), errors, "client threads failed");
        long t0 = System.nanoTime();
        LinearizabilityChecker.Result r = LinearizabilityChecker.check(history);
        long checkMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        System.out.printf("linearizability: %d operations (%d failed or unknown) on %d registers by %d clients, "
                + "%d faults (%d leadership transfers, %d refused; %d stops and restarts; %d joins and removals of a "
                + "fourth peer), %d reads of a leader's and %d of a follower's own replica, checked in %d ms: %s%n",
                r.operations(), failed.get(), r.registers(), 2 * CLIENTS_PER_PEER, faults, byKind[0], transfersRefused,
                byKind[1], byKind[2], leaderReads, followerReads, checkMs, r.linearizable() ? "linearizable" : r.anomaly());
        assertTrue(r.linearizable(), r.anomaly());
        assertTrue(followerReads > 0, "the history holds follower reads (after the leader's read index)");
        assertTrue(r.operations() >= 2 * 40, r.operations() + " operations"); // each fault waits for 40 more
    }

    private int joins;

    /**
     * A fourth peer joins the group (a membership change) and, once operations went on, is removed
     * (another); each under a new name, since a name keeps its first address in the group. Every other
     * time, starting with the first, it is stopped before its removal and started again after it: it
     * then learns of the removal at its first election and leaves by itself.
     */
    private void joinAndLeave(ThreePeers peers, List<Op> history, List<Throwable> errors) throws Exception {
        int before = history.size();
        peers.readyLeader(); // a join asks the leader for the volume's shape: not while the group elects
        // Every member caught up first (a peer restarted just before may still be): a join overlapping
        // that catch-up once went uncommitted for the change's whole 120 s in a full build.
        peers.awaitConverged();
        boolean downWhileRemoved = joins % 2 == 0;
        String name = "n" + (4 + joins++);
        int port = FreePorts.next();
        ReplicaNode n4 = ReplicaNode.start(name,
                "127.0.0.1", port, dir.resolve(name), SinglePeerFailureTest.SETTINGS, peers.log::add);
        try {
            GroupMembership.Change add = n4.join("rv",
                    ReplicaPeers.parse(peers.peerList()), null);
            assertEquals(4, add.after.size(), name + " joined: " + add.after);
            ThreePeers.await(() -> history.size() >= before + 20 || !errors.isEmpty(),
                    "operations to go on with four members");
            if (downWhileRemoved) {
                n4.close();
            }
            GroupMembership.of("rv", add.after, SinglePeerFailureTest.SETTINGS)
                    .change(List.of(), List.of(name));
            if (downWhileRemoved) {
                n4 = ReplicaNode.start(name, "127.0.0.1", port, dir.resolve(name),
                        SinglePeerFailureTest.SETTINGS, peers.log::add);
                ReplicaNode back = n4;
                ThreePeers.await(() -> back.replica("rv") == null, name + " to leave by itself once back");
            }
        } finally {
            n4.close();
        }
    }

    /** Random reads and writes of values unique to this client; a failed write's outcome is unknown, a failed read is left out. */
    private static void clientLoop(int client, ServedVolume s, List<Op> history, AtomicInteger failed, AtomicBoolean stop)
            throws Exception {
        Random rnd = new Random(100 + client);
        long seq = 0;
        while (!stop.get()) {
            int reg = rnd.nextInt(REGISTERS);
            ByteBuffer block = ByteBuffer.allocate(FORMAT.dataSize());
            if (rnd.nextBoolean()) {
                long value = ((long) (client + 1) << 40) | ++seq;
                block.putLong(0, value);
                long invoked = System.nanoTime();
                Completion c = s.device.write(reg, ScatterList.of(block)).get(60, TimeUnit.SECONDS);
                long completed = System.nanoTime();
                if (!c.isSuccess()) {
                    failed.incrementAndGet();
                }
                history.add(Op.write(client, reg, value, invoked, c.isSuccess() ? completed : LinearizabilityChecker.UNKNOWN));
            } else {
                long invoked = System.nanoTime();
                Completion c = s.device.read(reg, ScatterList.of(block)).get(60, TimeUnit.SECONDS);
                long completed = System.nanoTime();
                if (c.isSuccess()) {
                    history.add(Op.read(client, reg, block.getLong(0), invoked, completed));
                } else {
                    failed.incrementAndGet();
                }
            }
        }
    }
}
