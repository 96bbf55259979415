package io.pistore.it.reliability;

import io.pistore.engine.BlockDevice;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Completion;
import io.pistore.spi.Status;
import io.pistore.testkit.Eventually;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A continuous write load on one volume through one host device, and what it may read back.
 * Each thread writes its own blocks ({@code lba % threads == thread}) in order, wrapping around,
 * with a flush every eighth write; a block's content is a function of its LBA and version, so only
 * versions are kept. A block may hold its last acknowledged version (zeros when none) or a version
 * written after it whose write failed (a write that timed out may still be applied later), nothing
 * else: an older version would be an acknowledged write lost.
 */
final class AckedWriter implements AutoCloseable {
    static final int BS = 4096;

    /** One block's versions: the last acknowledged and the failed ones written since. */
    private static final class Block {
        long acked;
        final List<Long> failedSince = new ArrayList<>();
    }

    private final BlockDevice dev;
    private final Block[] blocks;
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicInteger acknowledged = new AtomicInteger();
    private final AtomicInteger failed = new AtomicInteger();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private volatile boolean stop;

    /** Starts {@code threadCount} writers over blocks {@code 0..blockCount-1}. */
    AckedWriter(BlockDevice dev, int blockCount, int threadCount) {
        this.dev = dev;
        this.blocks = new Block[blockCount];
        for (int i = 0; i < blockCount; i++) {
            blocks[i] = new Block();
        }
        for (int t = 0; t < threadCount; t++) {
            int first = t;
            Thread th = new Thread(() -> writeLoop(first, threadCount), "acked-writer-" + t);
            th.setDaemon(true);
            threads.add(th);
            th.start();
        }
    }

    static byte[] content(long lba, long version) {
        byte[] d = new byte[BS];
        if (version != 0) {
            new Random(lba * 1_000_003L + version).nextBytes(d);
        }
        return d;
    }

    private void writeLoop(int first, int step) {
        try {
            long n = 0;
            for (long version = 1; !stop; version++) {
                for (int lba = first; lba < blocks.length && !stop; lba += step) {
                    Completion c = dev.write(lba, ScatterList.wrap(content(lba, version))).get(120, TimeUnit.SECONDS);
                    Block b = blocks[lba];
                    synchronized (b) {
                        if (c.isSuccess()) {
                            b.acked = version;
                            b.failedSince.clear();
                            acknowledged.incrementAndGet();
                        } else if (c.status() == Status.MEDIA_ERROR) {
                            // a timeout while the group elects or has no quorum: may still be applied
                            b.failedSince.add(version);
                            failed.incrementAndGet();
                        } else {
                            throw new AssertionError("write lba " + lba + ": " + c);
                        }
                    }
                    if (++n % 8 == 0 && !dev.flush().get(120, TimeUnit.SECONDS).isSuccess()) {
                        failed.incrementAndGet();
                    }
                }
            }
        } catch (Throwable e) {
            error.compareAndSet(null, e);
        }
    }

    int acknowledged() {
        return acknowledged.get();
    }

    int failed() {
        return failed.get();
    }

    /** Waits until {@code more} further writes are acknowledged (a failing load fails here). */
    void awaitAcknowledged(int more, long seconds) throws InterruptedException {
        int target = acknowledged() + more;
        try {
            Eventually.await(more + " more acknowledged writes", Duration.ofSeconds(seconds),
                    () -> acknowledged() >= target || error.get() != null);
        } catch (AssertionError e) {
            throw new AssertionError("the load did not get " + more + " writes acknowledged within " + seconds
                    + " s: " + acknowledged() + " acknowledged, " + failed() + " failed", e);
        }
        rethrow();
    }

    /** Stops the writers and waits for their last writes. */
    @Override
    public void close() throws InterruptedException {
        stop = true;
        for (Thread t : threads) {
            t.join(150_000);
        }
    }

    void rethrow() {
        Throwable e = error.get();
        if (e != null) {
            throw new AssertionError("the write load failed: " + e, e);
        }
    }

    /**
     * Reads every block back through {@code reader} (the load stopped) and returns the problems,
     * one line each (at most 20), empty when every block holds a version it may hold.
     */
    List<String> verify(BlockDevice reader) throws Exception {
        rethrow();
        List<String> problems = new ArrayList<>();
        int bad = 0;
        for (int lba = 0; lba < blocks.length; lba++) {
            ByteBuffer buf = ByteBuffer.allocate(BS);
            Completion r = reader.read(lba, ScatterList.of(buf)).get(120, TimeUnit.SECONDS);
            Block b = blocks[lba];
            String problem = null;
            if (!r.isSuccess()) {
                problem = "lba " + lba + ": read failed: " + r;
            } else if (!holdsAllowed(lba, b, buf.array())) {
                problem = "lba " + lba + ": holds none of the versions it may hold (acknowledged " + b.acked
                        + ", failed since " + b.failedSince + ")";
            }
            if (problem != null && ++bad <= 20) {
                problems.add(problem);
            }
        }
        if (bad > 20) {
            problems.add("... " + (bad - 20) + " more");
        }
        return problems;
    }

    private static boolean holdsAllowed(long lba, Block b, byte[] got) {
        if (Arrays.equals(content(lba, b.acked), got)) {
            return true;
        }
        for (long v : b.failedSince) {
            if (Arrays.equals(content(lba, v), got)) {
                return true;
            }
        }
        return false;
    }
}
