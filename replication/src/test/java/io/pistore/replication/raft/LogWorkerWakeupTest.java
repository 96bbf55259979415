package io.pistore.replication.raft;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.integrity.BlockFormat;
import io.pistore.replication.ReplicaPeers;
import io.pistore.replication.ThreePeers;
import io.pistore.replication.node.ReplicaNode;
import io.pistore.testkit.Eventually;
import java.nio.file.Path;
import java.util.List;
import org.apache.ratis.server.RaftServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link LogWorkerWakeup} relies on, against the Ratis on the class path: its version is the one
 * checked, a division's log worker is the thread of that name, it waits for tasks in the queue's poll,
 * and an interrupt there ends its loop.
 */
class LogWorkerWakeupTest {
    private static final String NAME = "wakeup";

    @TempDir
    Path dir;

    @Test
    void anIdleLogWorkerIsFoundByItsNameAndEndsWhenInterrupted() throws Exception {
        try (ReplicaNode node = ReplicaNode.start("a", "127.0.0.1", 0, dir, ThreePeers.SETTINGS, s -> { })) {
            node.createReplica(NAME, BlockFormat.of(512, 8), 16, List.of(node.peer()));
            RaftServer.Division d = node.server().getDivision(ReplicaPeers.groupId(NAME));
            assertEquals(LogWorkerWakeup.CHECKED_AGAINST, d.getClass().getPackage().getImplementationVersion(),
                    "Ratis changed: check the log worker's thread name and poll against the new version, then update"
                            + " CHECKED_AGAINST");
            Eventually.await("the one peer to lead with an entry of its term committed", () -> {
                try {
                    return node.isReadyLeader(NAME);
                } catch (java.io.IOException e) {
                    return false;
                }
            });
            String name = LogWorkerWakeup.threadName(d.getId(), d.getGroup().getGroupId());
            Thread worker = LogWorkerWakeup.find(name);
            assertNotNull(worker, "a thread named " + name);
            Eventually.await("the log worker to wait for its next task", () -> LogWorkerWakeup.waitsInPoll(worker));
            assertFalse(LogWorkerWakeup.interruptIdle(d.getId(), ReplicaPeers.groupId("another")),
                    "no worker of another group is touched");
            assertTrue(LogWorkerWakeup.interruptIdle(d.getId(), d.getGroup().getGroupId()));
            // The worker's loop returns; its thread is the log's executor's, which ends it when the log closes.
            Eventually.await("the interrupted log worker's loop to return", () -> java.util.Arrays.stream(
                    worker.getStackTrace()).noneMatch(e -> e.getClassName().endsWith(".SegmentedRaftLogWorker")));
        }
    }
}
