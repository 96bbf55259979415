package io.pistore.replication.rpc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.ReplicaPeers;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.LogAppender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The appender of the peers' RPC hands a follower's newer term to its leader without waiting for
 * the server's lock on its own thread: a leader stepping down holds that lock while it waits for its
 * appenders to stop, and Ratis's default appender, waiting for the lock, never stopped.
 */
class PeerLogAppenderTest {
    @TempDir
    Path dir;

    @Test
    void aFollowersNewerTermIsHandedOnWhileTheServersLockIsHeldAndTheLeaderStepsDownAfter() throws Exception {
        try (ThreePeers peers = ThreePeers.start(dir, "rv", BlockFormat.of(512, 8), 64)) {
            RaftServer.Division d = peers.node(peers.readyLeader()).server().getDivision(ReplicaPeers.groupId("rv"));
            List<LogAppender> appenders = appenders(d);
            assertFalse(appenders.isEmpty(), "a leader has appenders");
            LogAppender a = appenders.get(0);
            assertInstanceOf(PeerLogAppender.class, a);
            long term = d.getInfo().getCurrentTerm();

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Thread holder = new Thread(() -> {
                synchronized (d) { // as a leader stepping down: LeaderStateImpl's event processor
                    held.countDown();
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }, "holds the server's lock");
            holder.start();
            held.await();
            try {
                CompletableFuture<Boolean> told = CompletableFuture.supplyAsync(() -> a.onFollowerTerm(term + 1));
                try {
                    told.get(20, TimeUnit.SECONDS); // a hang guard: the call waits for nothing
                } catch (TimeoutException e) {
                    throw new AssertionError("the appender waited for the server's lock to hand on a newer term", e);
                }
            } finally {
                release.countDown();
                holder.join();
            }
            ThreePeers.await(() -> d.getInfo().getCurrentTerm() > term && !d.getInfo().isLeader(),
                    "the leader to step down for the follower's newer term");
            assertTrue(d.getInfo().getCurrentTerm() > term);
        }
    }

    /**
     * An appender with nothing to send is not woken by a notice: the leader notifies every appender
     * each time a commit index moves, and each such wake-up was a thread switch for nothing. Counted
     * as the times the appender's thread went back to waiting (the JVM's count of its waits).
     */
    @Test
    void anAppenderWithNothingToSendIsNotWokenByANotice() throws Exception {
        try (ThreePeers peers = ThreePeers.start(dir, "rv", BlockFormat.of(512, 8), 64)) {
            RaftServer.Division d = peers.node(peers.readyLeader()).server().getDivision(ReplicaPeers.groupId("rv"));
            LogAppender a = appenders(d).get(0);
            Thread t = Thread.getAllStackTraces().keySet().stream()
                    .filter(x -> x.getName().startsWith(a.toString())).findFirst().orElseThrow();
            ThreadMXBean mx = ManagementFactory.getThreadMXBean();
            awaitWaiting(t);
            long before = mx.getThreadInfo(t.getId()).getWaitedCount();
            int notices = 200;
            for (int i = 0; i < notices; i++) {
                long c = mx.getThreadInfo(t.getId()).getWaitedCount();
                a.notifyLogAppender();
                // a woken appender waits again within this window; one left asleep shows no new wait
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3);
                while (System.nanoTime() < end && mx.getThreadInfo(t.getId()).getWaitedCount() == c) {
                    Thread.yield();
                }
                awaitWaiting(t);
            }
            long waits = mx.getThreadInfo(t.getId()).getWaitedCount() - before;
            // a heartbeat or two may fall in the loop (each a wait for its answer and one for the next)
            assertTrue(waits < notices / 4, "the appender woke and waited again " + waits + " times for "
                    + notices + " notices with nothing to send");
        }
    }

    /** Waits until {@code t} waits (the appender between sends). */
    private static void awaitWaiting(Thread t) throws Exception {
        ThreePeers.await(() -> t.getState() == Thread.State.TIMED_WAITING || t.getState() == Thread.State.WAITING,
                "the appender to wait");
    }

    /** The leader's appenders (Ratis keeps them out of its public API). */
    @SuppressWarnings("unchecked")
    private static List<LogAppender> appenders(RaftServer.Division d) throws ReflectiveOperationException {
        Method role = d.getClass().getDeclaredMethod("getRole");
        role.setAccessible(true);
        Object r = role.invoke(d);
        Method leaderState = r.getClass().getDeclaredMethod("getLeaderState");
        leaderState.setAccessible(true);
        Object state = ((Optional<?>) leaderState.invoke(r)).orElseThrow();
        Method logAppenders = state.getClass().getDeclaredMethod("getLogAppenders");
        logAppenders.setAccessible(true);
        return ((Stream<LogAppender>) logAppenders.invoke(state)).toList();
    }
}
