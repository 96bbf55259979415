package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.testkit.Eventually;
import io.pistore.testkit.LinearizabilityChecker;
import io.pistore.testkit.LinearizabilityChecker.Op;
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
 * Linearizability under process faults: three {@code serve} processes ({@link FaultCluster}), four
 * clients on two tcp hosts following path states (given the peers in two orders) reading and writing
 * unique values into four blocks (each a register), while faults run in turn: kill -9 of a random
 * peer (restarted once operations went on), SIGSTOP of a random peer for 2 s, a leadership transfer
 * to a random peer. Every operation's invocation, completion and result is recorded and {@link
 * LinearizabilityChecker} proves the history linearizable or prints the shortest anomaly. Each kind
 * of fault once by default; {@code -Dpistore.linear.seconds=N} runs longer. A failed write's outcome
 * is unknown to the checker, a failed read is left out; after a failure a client waits until the
 * volume answers it again (a read it does not record), so a burst of failures cannot fill the
 * history with unknown writes (each one multiplies the states the checker searches).
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class LinearizableProcessFaultsTest {
    private static final int REGISTERS = 4;
    private static final int BS = 4096;

    @TempDir
    Path dir;

    @Test
    void historiesUnderKillsFreezesAndTransfersAreLinearizable() throws Exception {
        long seconds = Long.getLong("pistore.linear.seconds", 0);
        List<Op> history = new CopyOnWriteArrayList<>();
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        AtomicInteger failed = new AtomicInteger();
        int[] byKind = new int[3];
        int faults = 0;
        List<Thread> clients = new ArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        try (FaultCluster cluster = FaultCluster.start(dir, "tcp", "1MiB");
             BlockTransport following = Transports.find("tcp").create();
             HostConnection a = following.connect(cluster.targets, new ConnectOptions(1, 8));
             HostConnection b = following.connect(cluster.targetsFrom(3), new ConnectOptions(1, 8))) {
            BlockDevice[] via = {BlockDevice.open(a, FaultCluster.VOLUME), BlockDevice.open(b, FaultCluster.VOLUME)};
            for (int r = 0; r < REGISTERS; r++) {
                Completion z = via[0].writeZeroes(r, 1).get(60, TimeUnit.SECONDS);
                assertTrue(z.isSuccess(), "zeroing register " + r + ": " + z);
            }
            for (int c = 0; c < 4; c++) {
                int client = c;
                BlockDevice dev = via[c % 2];
                Thread t = new Thread(() -> {
                    try {
                        clientLoop(client, dev, history, failed, stop);
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }, "linear-client-" + c);
                clients.add(t);
                t.start();
            }
            Random rnd = new Random(11);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while ((faults < 3 || System.nanoTime() < end) && errors.isEmpty()) {
                int kind = faults < 3 ? faults : rnd.nextInt(3);
                int victim = 1 + rnd.nextInt(3);
                awaitMore(history, errors, 40);
                if (kind == 0) {
                    cluster.kill(victim);
                    awaitMore(history, errors, 20);
                } else if (kind == 1) {
                    cluster.freeze(victim, true);
                    Thread.sleep(2000); // the fault's length, not a synchronisation
                    cluster.freeze(victim, false);
                } else {
                    cluster.lead(victim);
                }
                cluster.restore(cluster.leader());
                byKind[kind]++;
                faults++;
            }
            awaitMore(history, errors, 40);
            stop.set(true);
            for (Thread t : clients) {
                t.join(TimeUnit.SECONDS.toMillis(90));
            }
        } finally {
            stop.set(true);
        }
        assertEquals(List.of(), errors, "client threads failed");
        long t0 = System.nanoTime();
        LinearizabilityChecker.Result r = LinearizabilityChecker.check(history);
        String figures = r.operations() + " operations (" + failed.get() + " failed or unknown) on " + r.registers()
                + " registers by 4 clients through 3 serve processes, " + faults + " faults (" + byKind[0]
                + " kill -9, " + byKind[1] + " SIGSTOP 2 s, " + byKind[2] + " leadership transfers), checked in "
                + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms";
        System.out.println("linearizability (processes): " + figures + ": "
                + (r.linearizable() ? "linearizable" : r.anomaly()));
        assertTrue(r.linearizable(), r.anomaly());
        Figures.record("linearizable under process faults", figures + ": linearizable");
    }

    private static void awaitMore(List<Op> history, List<Throwable> errors, int n) {
        int target = history.size() + n;
        Eventually.await(n + " more operations", Duration.ofSeconds(120),
                () -> history.size() >= target || !errors.isEmpty());
    }

    /** Random reads and writes of values unique to this client; a failed write's outcome is unknown, a failed read is left out. */
    private static void clientLoop(int client, BlockDevice dev, List<Op> history, AtomicInteger failed, AtomicBoolean stop)
            throws Exception {
        Random rnd = new Random(200 + client);
        long seq = 0;
        while (!stop.get()) {
            int reg = rnd.nextInt(REGISTERS);
            ByteBuffer block = ByteBuffer.allocate(BS);
            if (rnd.nextBoolean()) {
                long value = ((long) (client + 1) << 40) | ++seq;
                block.putLong(0, value);
                long invoked = System.nanoTime();
                Completion c = dev.write(reg, ScatterList.of(block)).get(60, TimeUnit.SECONDS);
                long completed = System.nanoTime();
                history.add(Op.write(client, reg, value, invoked,
                        c.isSuccess() ? completed : LinearizabilityChecker.UNKNOWN));
                if (!c.isSuccess()) {
                    failed.incrementAndGet();
                    awaitAnswering(dev, stop);
                }
            } else {
                long invoked = System.nanoTime();
                Completion c = dev.read(reg, ScatterList.of(block)).get(60, TimeUnit.SECONDS);
                long completed = System.nanoTime();
                if (c.isSuccess()) {
                    history.add(Op.read(client, reg, block.getLong(0), invoked, completed));
                } else {
                    failed.incrementAndGet();
                    awaitAnswering(dev, stop);
                }
            }
        }
    }

    /**
     * After a failed operation: waits until {@code dev} answers a read again (or the test stops).
     * The read is not recorded: leaving a completed read out of the history removes a constraint,
     * never adds one.
     */
    private static void awaitAnswering(BlockDevice dev, AtomicBoolean stop) {
        Eventually.await("the volume to answer again", Duration.ofSeconds(120), () -> {
            if (stop.get()) {
                return true;
            }
            try {
                return dev.read(0, ScatterList.of(ByteBuffer.allocate(BS))).get(60, TimeUnit.SECONDS).isSuccess();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the wait then ends with the interrupt
                return false;
            } catch (Exception e) {
                return false;
            }
        });
    }
}
