package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.replication.group.GroupStatus;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.TransportOptions;
import io.pistore.testkit.Eventually;
import io.pistore.testkit.LinearizabilityChecker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A peer cut off for 5 s in a network namespace ({@link NetnsLab}: its link dropped, as a pulled
 * cable) under every client at once ({@link FaultRound}): three {@code serve} processes (tcp, elections
 * within 600-1200 ms, n2 leading), a tcp host following path states (on the leader), a tcp host
 * without them on n1 and an NBD gateway following them, running fio and nbdcopy. A follower cut off,
 * and the leader (the peer the path-state host and the gateway use): no client error, all verified,
 * the stall within {@link PeerFaultMatrix#STALL_BOUND_MS}. Then a history of reads and writes across
 * cuts is checked linearizable. Root only (skipped otherwise, with the reason).
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NetnsPeerFaultTest {
    /** The class's directory (one cluster per class). */
    Path dir;

    private NetnsGroup group;
    private PistoreProcess gateway;
    private String uri;
    private final List<AutoCloseable> hosts = new ArrayList<>();
    private BlockDevice following;
    private BlockDevice onN1;

    @BeforeAll
    void start(@TempDir Path classDir) throws Exception {
        dir = classDir;
        NetnsLab.assumeAvailable();
        NbdFaultLoad.assumeTools();
        group = new NetnsGroup(dir, 3, 3, NbdFaultLoad.VOLUME_SIZE);
        group.start(3, FaultCluster.FAST);
        lead();
        gateway = PistoreProcess.serve(List.of(), "--nbd", "127.0.0.1:0", "--transport", "tcp", "--target",
                group.targets(3));
        uri = "nbd://" + gateway.awaitNbdListening() + "/" + NetnsGroup.VOLUME;
        following = host(Map.of());
        onN1 = host(Map.of("tcp.pathStates", "false")); // the first of the list: n1
    }

    private BlockDevice host(Map<String, String> options) throws Exception {
        BlockTransport t = Transports.find("tcp").create(TransportOptions.of(options));
        hosts.add(0, t);
        HostConnection c = t.connect(group.targets(3), new ConnectOptions(1, 8));
        hosts.add(0, c);
        return BlockDevice.open(c, NetnsGroup.VOLUME);
    }

    @AfterAll
    void stop() throws Exception {
        for (AutoCloseable h : hosts) {
            h.close();
        }
        if (gateway != null) {
            gateway.close();
        }
        if (group != null) {
            group.close();
        }
    }

    @Test
    @Order(1)
    void aFollowerCutOff() throws Exception {
        cut(3, "n3 (a follower) cut off");
    }

    @Test
    @Order(2)
    void theLeaderCutOff() throws Exception {
        cut(2, "n2 (the leader) cut off");
    }

    private void cut(int victim, String what) throws Exception {
        lead();
        List<MixedClient> clients = List.of(
                new MixedClient("tcp host (path states)", following, 256, 64, 2, what.hashCode()),
                new MixedClient("tcp host on n1", onN1, 320, 64, 2, what.hashCode() + 7));
        String figures = FaultRound.run(dir, what, uri, clients, true, new FaultRound.Fault() {
            @Override
            public void begin() {
                group.lab.cut(victim);
            }

            @Override
            public void end() {
                group.lab.heal(victim);
            }
        }, PeerFaultMatrix.STALL_BOUND_MS);
        Figures.record("one peer cut off, every client (" + what + ")", "3 serve processes in network namespaces, "
                + "election 600-1200 ms; hosts and an NBD gateway (fio, nbdcopy) running: no error, all verified; "
                + figures);
        group.awaitCaughtUp(3);
    }

    /**
     * Linearizability across cuts: four {@link RegisterClients} (two on the host following path
     * states, two on the host held to n1) read and write four blocks while the leader, then a
     * follower, is cut off for {@link #CUT_MS} and joined again; {@code -Dpistore.linear.seconds=N}
     * cuts random peers for N s more. Every other cut, the first included, comes over links that
     * drop {@link #LOSS_PERCENT} of the frames each way, delayed {@link #DELAY_MS} where the kernel
     * has netem ({@link NetnsLab#impair}), from before the cut until the group is whole again. The
     * history is linearizable.
     */
    @Test
    @Order(3)
    void readsAndWritesStayLinearizableAcrossCuts() throws Exception {
        lead();
        long seconds = Long.getLong("pistore.linear.seconds", 0);
        java.util.Random rnd = new java.util.Random(13);
        int cuts = 0;
        int impaired = 0;
        NetnsLab.Impairment how = null;
        LinearizabilityChecker.Result r;
        int failed;
        try (RegisterClients rc = RegisterClients.start(List.of(following, onN1, following, onN1), 0, 4, 4096, 300)) {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while ((cuts < 2 || System.nanoTime() < end) && rc.healthy()) {
                int victim = cuts == 0 ? 2 : cuts == 1 ? 3 : 1 + rnd.nextInt(3); // n2 leads at first
                rc.awaitMore(40);
                boolean lossy = cuts % 2 == 0 && (how == null || how.applied() != null);
                if (lossy) {
                    NetnsLab.Impairment before = how;
                    how = group.lab.impair(DELAY_MS, LOSS_PERCENT);
                    lossy = how.applied() != null;
                    if (before == null && how.missing() != null) { // said once
                        System.out.println("linearizability (network namespaces): " + how.missing());
                    }
                    if (lossy) {
                        rc.awaitMore(20); // some operations over the impaired links before the cut
                    }
                }
                group.lab.cut(victim);
                Thread.sleep(CUT_MS); // the fault's length, not a synchronisation
                group.lab.heal(victim);
                Eventually.await("a leader and every peer reachable", Duration.ofSeconds(120), () -> {
                    GroupStatus s = group.status(3);
                    return s.leader() != null && s.members.stream().allMatch(GroupStatus.Member::reachable);
                });
                if (lossy) {
                    rc.awaitMore(20); // and after it, while the links are still impaired
                    group.lab.clearImpairment();
                    impaired++;
                }
                cuts++;
            }
            rc.awaitMore(40);
            r = rc.stopAndCheck();
            failed = rc.failed();
        } finally {
            group.lab.clearImpairment();
        }
        String figures = r.operations() + " operations (" + failed + " failed or unknown) on 4 registers by 4 clients, "
                + cuts + " cuts of " + CUT_MS + " ms, " + impaired + " of them over links with "
                + (how == null || how.applied() == null ? "delay or loss (none could be set)" : how.applied());
        System.out.println("linearizability (network namespaces): " + figures + ": "
                + (r.linearizable() ? "linearizable" : r.anomaly()));
        assertTrue(r.linearizable(), r.anomaly());
        Figures.record("linearizable across network cuts", figures + ": linearizable");
        group.awaitCaughtUp(3);
    }

    /** How long a cut of {@link #readsAndWritesStayLinearizableAcrossCuts} lasts: past an election timeout. */
    private static final long CUT_MS = 3000;
    /** The delay each end of a link adds during an impaired cut, where the kernel has netem. */
    private static final int DELAY_MS = 20;
    /** The share of frames each end of a link drops during an impaired cut. */
    private static final double LOSS_PERCENT = 2;

    /** Makes n2 the leader unless it leads, tried again while the group elects (a hang guard of 120 s). */
    private void lead() {
        Eventually.await("n2 to lead", Duration.ofSeconds(120), () -> {
            GroupStatus.Member l = group.status(3).leader();
            if (l != null && l.id.equals("n2")) {
                return true;
            }
            try {
                group.lead("n2", 3);
                return true;
            } catch (Exception e) {
                return false;
            }
        });
    }
}
