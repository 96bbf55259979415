package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.testkit.LinearizabilityChecker;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Linearizability under process faults: three {@code serve} processes ({@link FaultCluster}), four
 * clients on two tcp hosts following path states (given the peers in two orders) reading and writing
 * unique values into four blocks (each a register), while faults run in turn: kill -9 of a random
 * peer (restarted once operations went on), SIGSTOP of a random peer for 2 s, a leadership transfer
 * to a random peer, a membership change (a fourth {@code serve} process joins the group and, once
 * operations went on, leaves it). Every operation's invocation, completion and result is recorded and {@link
 * LinearizabilityChecker} proves the history linearizable or prints the shortest anomaly. Each kind
 * of fault once by default; {@code -Dpistore.linear.seconds=N} runs longer. The clients are
 * {@link RegisterClients}.
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
        int[] byKind = new int[4];
        int faults = 0;
        LinearizabilityChecker.Result r;
        int failed;
        long checkMs;
        try (FaultCluster cluster = FaultCluster.start(dir, "tcp", "1MiB");
             BlockTransport following = Transports.find("tcp").create();
             HostConnection a = following.connect(cluster.targets, new ConnectOptions(1, 8));
             HostConnection b = following.connect(cluster.targetsFrom(3), new ConnectOptions(1, 8))) {
            BlockDevice da = BlockDevice.open(a, FaultCluster.VOLUME);
            BlockDevice db = BlockDevice.open(b, FaultCluster.VOLUME);
            try (RegisterClients clients = RegisterClients.start(List.of(da, db, da, db), 0, REGISTERS, BS, 200)) {
                Random rnd = new Random(11);
                long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
                while ((faults < byKind.length || System.nanoTime() < end) && clients.healthy()) {
                    int kind = faults < byKind.length ? faults : rnd.nextInt(byKind.length);
                    int victim = 1 + rnd.nextInt(3);
                    clients.awaitMore(40);
                    if (kind == 0) {
                        cluster.kill(victim);
                        clients.awaitMore(20);
                    } else if (kind == 1) {
                        cluster.freeze(victim, true);
                        Thread.sleep(2000); // the fault's length, not a synchronisation
                        cluster.freeze(victim, false);
                    } else if (kind == 2) {
                        cluster.lead(victim);
                    } else {
                        cluster.join();
                        clients.awaitMore(20);
                        cluster.leave();
                    }
                    cluster.restore(cluster.leader());
                    byKind[kind]++;
                    faults++;
                }
                clients.awaitMore(40);
                long t0 = System.nanoTime();
                r = clients.stopAndCheck();
                failed = clients.failed();
                checkMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            }
        }
        String figures = r.operations() + " operations (" + failed + " failed or unknown) on " + r.registers()
                + " registers by 4 clients through 3 serve processes, " + faults + " faults (" + byKind[0]
                + " kill -9, " + byKind[1] + " SIGSTOP 2 s, " + byKind[2] + " leadership transfers, " + byKind[3]
                + " joins and leaves of a fourth peer), checked in "
                + checkMs + " ms";
        System.out.println("linearizability (processes): " + figures + ": "
                + (r.linearizable() ? "linearizable" : r.anomaly()));
        assertTrue(r.linearizable(), r.anomaly());
        Figures.record("linearizable under process faults", figures + ": linearizable");
    }
}
