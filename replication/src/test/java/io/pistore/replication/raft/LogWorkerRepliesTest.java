package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ServedVolume;
import io.pistore.replication.ThreePeers;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A follower answers its appends from its log worker ({@link LogWorkerReplies}): what that thread hands
 * the division's executor runs there, anything else on Ratis's threads; and on the Ratis of the class
 * path (the version checked) a follower's appends no longer pass through Ratis's server threads.
 */
class LogWorkerRepliesTest {
    private static final BlockFormat FORMAT = BlockFormat.of(4096, 8);
    private static final String NAME = "rv";
    private static final int WRITES = 200;

    @TempDir
    Path dir;

    @Test
    void whatTheLogWorkerHandsOverRunsOnItAndAnythingElseOnRatisThreads() throws Exception {
        ThreadPoolExecutor ratis = (ThreadPoolExecutor) Executors.newFixedThreadPool(1, r -> new Thread(r, "ratis-server"));
        try {
            LogWorkerReplies.OnLogWorker e = new LogWorkerReplies.OnLogWorker(ratis, "m@g-SegmentedRaftLogWorker");
            AtomicReference<Thread> ran = new AtomicReference<>();
            Thread worker = new Thread(() -> e.execute(() -> ran.set(Thread.currentThread())), "m@g-SegmentedRaftLogWorker");
            worker.start();
            worker.join();
            assertSame(worker, ran.get(), "a task from the log worker runs on it, at once");
            Thread other = new Thread(() -> e.execute(() -> ran.set(Thread.currentThread())), "m@g-rpc-reader");
            other.start();
            other.join();
            ratis.shutdown();
            assertTrue(ratis.awaitTermination(30, TimeUnit.SECONDS));
            assertEquals("ratis-server", ran.get().getName(), "a task from any other thread goes to Ratis's executor");
            assertEquals(1, ratis.getCompletedTaskCount());
            assertTrue(e.isShutdown(), "a shutdown reaches Ratis's executor");
        } finally {
            ratis.shutdownNow();
        }
    }

    @Test
    void aFollowersAppendsAreAnsweredWithoutRatisServerThreads() throws Exception {
        try (ThreePeers peers = ThreePeers.start(dir, NAME, FORMAT, 64)) {
            int l = peers.leader();
            Map<Integer, Long> before = new HashMap<>();
            for (int i = 0; i < 3; i++) {
                if (i == l) {
                    continue;
                }
                RaftServer.Division d = peers.node(i).server().getDivision(ReplicaPeers.groupId(NAME));
                assertEquals(LogWorkerReplies.CHECKED_AGAINST, d.getClass().getPackage().getImplementationVersion(),
                        "Ratis changed: check RaftServerImpl's serverExecutor and the follower's append against the new"
                                + " version, then update CHECKED_AGAINST");
                LogWorkerReplies.OnLogWorker w = LogWorkerReplies.wrapped(d);
                assertNotNull(w, ThreePeers.id(i) + " wrapped its server executor once it heard of a leader");
                before.put(i, ((ThreadPoolExecutor) w.ratis()).getCompletedTaskCount());
            }
            Random random = new Random(3);
            try (ServedVolume s = new ServedVolume(peers.node(l), NAME)) {
                for (int n = 0; n < WRITES; n++) { // one at a time: each its own entry, its own append
                    byte[] b = new byte[FORMAT.dataSize()];
                    random.nextBytes(b);
                    s.device.writeSync(random.nextInt(64), ByteBuffer.wrap(b));
                }
            }
            for (Map.Entry<Integer, Long> e : before.entrySet()) {
                RaftServer.Division d = peers.node(e.getKey()).server().getDivision(ReplicaPeers.groupId(NAME));
                long ran = ((ThreadPoolExecutor) LogWorkerReplies.wrapped(d).ratis()).getCompletedTaskCount() - e.getValue();
                // heartbeats, and an append forced before its reader thread asked, still go to Ratis's threads
                assertTrue(ran < WRITES / 2, ThreePeers.id(e.getKey()) + ": Ratis's server threads ran " + ran
                        + " tasks over " + WRITES + " appends");
            }
        }
    }
}
