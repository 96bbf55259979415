package io.pistore.engine.service;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads a {@link TargetService} hands work to that must not run on a transport's I/O thread:
 * {@code pistore-disk-wait} threads wait for fsync (a flush, a FUA write), {@code pistore-peer-wait}
 * threads for other machines (every request of a volume that {@link io.pistore.engine.volume.Volume#waitsForPeers
 * waits for peers}). Whoever creates them owns them and closes them after the services that use them.
 * Threads start at the first task and end after a minute idle, so a set nobody closes keeps none.
 */
public final class TargetThreads implements AutoCloseable {
    /** Disk waits at once: fsyncs of one device gain little from more. */
    public static final int DISK_WAITS = 4;
    /** Peer waits at once: as many requests in flight to a quorum, which the replication batches. */
    public static final int PEER_WAITS = 64;

    private final ThreadPoolExecutor diskWaits;
    private final ThreadPoolExecutor peerWaits;

    public TargetThreads() {
        diskWaits = pool(DISK_WAITS, "pistore-disk-wait");
        peerWaits = pool(PEER_WAITS, "pistore-peer-wait");
    }

    private static ThreadPoolExecutor pool(int threads, String name) {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor p = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, name + "-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        p.allowCoreThreadTimeOut(true);
        return p;
    }

    /** Where flushes and FUA writes of durable volumes wait. */
    public ExecutorService diskWaits() {
        return diskWaits;
    }

    /** Where requests of volumes that wait for peers wait. */
    public ExecutorService peerWaits() {
        return peerWaits;
    }

    /**
     * Lets the waits already handed over finish (up to 30 s: a flush, a quorum's answer), refuses new
     * ones, and ends the threads.
     */
    @Override
    public void close() {
        diskWaits.shutdown();
        peerWaits.shutdown();
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            diskWaits.awaitTermination(30, TimeUnit.SECONDS);
            peerWaits.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
