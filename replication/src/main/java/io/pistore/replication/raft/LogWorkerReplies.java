package io.pistore.replication.raft;

import java.lang.reflect.Field;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.server.RaftServer;

/**
 * Lets a follower answer an append from the thread that forced it, not from a second thread woken for it.
 * <p>
 * Ratis's division ({@code RaftServerImpl}) ends every follower append with a {@code whenCompleteAsync} on
 * its server executor: the log worker forces the entries, wakes one of that executor's threads, which
 * builds the reply that the peer RPC then sends. Here the division's executor is wrapped so that a task
 * handed to it by the division's own log worker runs on that thread, at once; every other task (a
 * leadership transfer's blocking call, management requests) still goes to Ratis's threads. What such a
 * task does (the follower's RPC time, its commit index, the reply built and written to the socket, at
 * most the RPC timeout) never waits on the log worker, so running it there cannot deadlock; the log
 * worker only starts its next task that much later. The field's name and the log worker's thread hold for
 * {@link #CHECKED_AGAINST}; on another version nothing is wrapped and appends are answered as Ratis does.
 */
public final class LogWorkerReplies {
    /** The Ratis version whose server executor field and follower append this was checked against. */
    public static final String CHECKED_AGAINST = "3.2.0";
    static final String FIELD = "serverExecutor";
    private static final Object INSTALLING = new Object();

    private LogWorkerReplies() {
    }

    /**
     * Wraps {@code d}'s server executor (once; again is a no-op); returns whether {@code d}'s executor is
     * wrapped now. Never throws: a division of another make or version is left as it is.
     */
    public static boolean install(RaftServer.Division d) {
        try {
            Field f = field(d);
            if (f == null) {
                return false;
            }
            synchronized (INSTALLING) { // not the division's own monitor, which Ratis holds around its callbacks
                Object current = f.get(d);
                if (current instanceof OnLogWorker) {
                    return true;
                }
                if (current == null) {
                    return false; // not built yet
                }
                f.set(d, new OnLogWorker((ExecutorService) current, LogWorkerWakeup.threadName(d.getId(), d.getMemberId().getGroupId())));
                return true;
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }

    /** {@code d}'s wrapped server executor, or null when {@link #install} has not wrapped it. */
    static OnLogWorker wrapped(RaftServer.Division d) {
        try {
            Field f = field(d);
            Object current = f == null ? null : f.get(d);
            return current instanceof OnLogWorker ? (OnLogWorker) current : null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** {@code d}'s server executor field, made accessible; null when {@code d} has none of that name and type. */
    private static Field field(RaftServer.Division d) throws ReflectiveOperationException {
        Field f = d.getClass().getDeclaredField(FIELD);
        if (!ExecutorService.class.equals(f.getType())) {
            return null;
        }
        f.setAccessible(true);
        return f;
    }

    /** Ratis's executor, but what the log worker {@code workerName} hands it runs on that thread. */
    static final class OnLogWorker extends AbstractExecutorService {
        private final ExecutorService ratis;
        private final String workerName;
        /** The log worker, once seen (a division's worker lives as long as its log). */
        private volatile Thread worker;

        OnLogWorker(ExecutorService ratis, String workerName) {
            this.ratis = ratis;
            this.workerName = workerName;
        }

        /** Ratis's own executor, which runs every task not handed over by the log worker. */
        ExecutorService ratis() {
            return ratis;
        }

        @Override
        public void execute(Runnable task) {
            Thread t = Thread.currentThread();
            if (t == worker) {
                task.run();
                return;
            }
            if (worker == null && t.getName().equals(workerName)) {
                worker = t;
                task.run();
                return;
            }
            ratis.execute(task);
        }

        @Override
        public void shutdown() {
            ratis.shutdown();
        }

        @Override
        public List<Runnable> shutdownNow() {
            return ratis.shutdownNow();
        }

        @Override
        public boolean isShutdown() {
            return ratis.isShutdown();
        }

        @Override
        public boolean isTerminated() {
            return ratis.isTerminated();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
            return ratis.awaitTermination(timeout, unit);
        }
    }
}
