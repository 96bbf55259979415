package io.pistore.replication.raft;

import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;

/**
 * Ends a closing division's idle log worker at once instead of at its next poll.
 * <p>
 * Ratis's segmented-log worker (one thread per division, named {@code MEMBER-SegmentedRaftLogWorker})
 * takes its tasks in one-second polls and sees that its log was closed only when a poll ends, so every
 * division close (a node stopping, a group removed) waited out that poll. Ratis closes the state
 * machine right before the log, once the last committed entry is applied and the division takes no more
 * requests; a worker then idle in its poll has nothing left to do, and an interrupt is the end Ratis's
 * worker itself handles (it returns from its loop). A worker busy with a task is left alone: an interrupt
 * there would close the log file under the task. Which thread is the worker and where it waits hold for
 * {@link #CHECKED_AGAINST}; on another version nothing matches and closes are only slower.
 */
public final class LogWorkerWakeup {
    /** The Ratis version whose log worker (thread name, poll) this was checked against. */
    public static final String CHECKED_AGAINST = "3.2.0";
    static final String THREAD_SUFFIX = "-SegmentedRaftLogWorker";
    private static final String QUEUE = "org.apache.ratis.util.DataBlockingQueue";

    private LogWorkerWakeup() {
    }

    /** The name of the log worker thread of {@code peer} in {@code group}. */
    public static String threadName(RaftPeerId peer, RaftGroupId group) {
        return RaftGroupMemberId.valueOf(peer, group) + THREAD_SUFFIX;
    }

    /**
     * Interrupts the log worker of {@code peer} in {@code group} when it is waiting for a task; returns
     * whether it did. Nothing happens for a state machine never initialized (no peer or group yet).
     */
    public static boolean interruptIdle(RaftPeerId peer, RaftGroupId group) {
        if (peer == null || group == null) {
            return false;
        }
        Thread worker = find(threadName(peer, group));
        if (worker == null || !waitsInPoll(worker)) {
            return false;
        }
        worker.interrupt();
        return true;
    }

    static Thread find(String name) {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] all = new Thread[root.activeCount() + 16];
        int n = root.enumerate(all, true);
        for (int i = 0; i < n; i++) {
            if (all[i].getName().equals(name)) {
                return all[i];
            }
        }
        return null;
    }

    /** Whether {@code t} is parked inside the queue's poll, with only JDK frames above it. */
    static boolean waitsInPoll(Thread t) {
        Thread.State s = t.getState();
        if (s != Thread.State.TIMED_WAITING && s != Thread.State.WAITING) {
            return false;
        }
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().equals(QUEUE) && e.getMethodName().equals("poll")) {
                return true;
            }
            if (!e.getClassName().startsWith("java.") && !e.getClassName().startsWith("jdk.")) {
                return false;
            }
        }
        return false;
    }
}
