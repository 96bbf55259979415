package io.pistore.it.reliability;

import io.pistore.engine.BlockDevice;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.Completion;
import io.pistore.testkit.Eventually;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A host's load through one {@link BlockDevice}: threads, each on blocks of its own, issuing a mix of
 * writes (new data each time), reads (checked against the last acknowledged write of the block),
 * write-zeroes and flushes, one at a time. Any request that does not succeed is an error (none is
 * sent again): the client a user runs would see it. Every request's invocation and completion time
 * is kept, for the stall a fault caused.
 */
final class MixedClient implements AutoCloseable {
    private static final int BS = 4096;
    private static final int READ = 4;

    final String name;
    private final BlockDevice dev;
    private final long first;
    private final byte[][] expected;
    private final List<Thread> threads = new ArrayList<>();
    private final List<long[]> timings = new CopyOnWriteArrayList<>();
    final List<String> errors = new CopyOnWriteArrayList<>();
    final AtomicInteger[] kinds = {new AtomicInteger(), new AtomicInteger(), new AtomicInteger(), new AtomicInteger()};
    private volatile boolean stop;
    /** How many times {@link #readEveryBlockNext} was asked. */
    private final AtomicInteger sweeps = new AtomicInteger();

    /** {@code threadCount} threads over blocks {@code first..first+blocks-1}, whose content starts as zeros. */
    MixedClient(String name, BlockDevice dev, long first, int blocks, int threadCount, long seed) {
        this.name = name;
        this.dev = dev;
        this.first = first;
        this.expected = new byte[blocks][];
        Arrays.setAll(expected, i -> new byte[BS]);
        int each = blocks / threadCount;
        for (int t = 0; t < threadCount; t++) {
            int from = t * each;
            Random rnd = new Random(seed + t);
            Thread th = new Thread(() -> loop(from, each, rnd), name + "-" + t);
            th.setDaemon(true);
            threads.add(th);
        }
    }

    /** Writes zeros over the client's blocks (so their expected content is known), then starts the threads. */
    MixedClient start() throws Exception {
        Completion c = dev.writeZeroes(first, expected.length).get(60, TimeUnit.SECONDS);
        if (!c.isSuccess()) {
            throw new AssertionError(name + ": zeroing its blocks failed: " + c);
        }
        threads.forEach(Thread::start);
        return this;
    }

    private void loop(int from, int count, Random rnd) {
        int swept = 0;
        while (!stop && errors.isEmpty()) {
            if (swept != sweeps.get()) { // asked for: the next requests read every block of this thread in turn
                swept = sweeps.get();
                for (int i = from; i < from + count && !stop; i++) {
                    if (!request(i, READ, rnd)) {
                        return;
                    }
                }
                continue;
            }
            if (!request(from + rnd.nextInt(count), rnd.nextInt(10), rnd)) {
                return;
            }
        }
    }

    /**
     * One request on block {@code i} of the client: {@code kind} 0-3 a write, 4-7 a read, 8 a
     * write-zeroes, 9 a flush. False (an error recorded) when it failed or read other data than the
     * block's last acknowledged write.
     */
    private boolean request(int i, int kind, Random rnd) {
        long lba = first + i;
        long t0 = System.nanoTime();
        try {
            Completion c;
            String what;
            byte[] data = null;
            ByteBuffer into = null;
            if (kind < 4) {
                data = new byte[BS];
                rnd.nextBytes(data);
                what = "write lba=" + lba;
                c = dev.write(lba, ScatterList.wrap(data)).get(60, TimeUnit.SECONDS);
            } else if (kind < 8) {
                into = ByteBuffer.allocate(BS);
                what = "read lba=" + lba;
                c = dev.read(lba, ScatterList.of(into)).get(60, TimeUnit.SECONDS);
            } else if (kind < 9) {
                data = new byte[BS];
                what = "write-zeroes lba=" + lba;
                c = dev.writeZeroes(lba, 1).get(60, TimeUnit.SECONDS);
            } else {
                what = "flush";
                c = dev.flush().get(60, TimeUnit.SECONDS);
            }
            long t1 = System.nanoTime();
            if (!c.isSuccess()) {
                errors.add(name + ": " + what + " after " + TimeUnit.NANOSECONDS.toMillis(t1 - t0) + " ms: " + c);
                return false;
            }
            timings.add(new long[] {t0, t1});
            kinds[kind < 4 ? 0 : kind < 8 ? 1 : kind < 9 ? 2 : 3].incrementAndGet();
            if (data != null) {
                expected[i] = data;
            } else if (into != null && !Arrays.equals(expected[i], into.array())) {
                errors.add(name + ": " + what + " returned other data than its last acknowledged write");
                return false;
            }
            return true;
        } catch (Exception e) {
            errors.add(name + ": " + e);
            return false;
        }
    }

    /**
     * Makes each thread's next requests reads of every one of its blocks in turn, each checked
     * against the block's last acknowledged write; called right before a fault, the first requests
     * after it are reads (a read through a follower right after the leader's kill is where a user
     * met a failure), then the mix goes on.
     */
    void readEveryBlockNext() {
        sweeps.incrementAndGet();
    }

    int completed() {
        return timings.size();
    }

    /** Waits until {@code n} more requests than now have completed, or an error. */
    void awaitMore(int n) {
        int target = completed() + n;
        Eventually.await(name + ": " + n + " more requests (errors: " + errors + ")", Duration.ofSeconds(120),
                () -> completed() >= target || !errors.isEmpty());
    }

    /**
     * The longest a request waited after {@code faultNanos}: over the requests that completed after
     * it, the time from the fault (or their invocation, if later) to their completion.
     */
    long stallMillisAfter(long faultNanos) {
        long worst = 0;
        for (long[] t : timings) {
            if (t[1] > faultNanos) {
                worst = Math.max(worst, t[1] - Math.max(t[0], faultNanos));
            }
        }
        return TimeUnit.NANOSECONDS.toMillis(worst);
    }

    /** What the client did, by kind of request. */
    String counts() {
        return kinds[0] + " writes, " + kinds[1] + " reads, " + kinds[2] + " write-zeroes, " + kinds[3] + " flushes";
    }

    /** Stops the threads, then reads every block back: it must hold its last acknowledged content. */
    void stopAndVerify() throws Exception {
        close();
        for (int i = 0; i < expected.length && errors.isEmpty(); i++) {
            ByteBuffer b = ByteBuffer.allocate(BS);
            Completion c = dev.read(first + i, ScatterList.of(b)).get(60, TimeUnit.SECONDS);
            if (!c.isSuccess()) {
                errors.add(name + ": read back lba=" + (first + i) + ": " + c);
            } else if (!Arrays.equals(expected[i], b.array())) {
                errors.add(name + ": lba=" + (first + i) + " does not hold its last acknowledged write");
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop = true;
        for (Thread t : threads) {
            t.join(TimeUnit.SECONDS.toMillis(90));
        }
    }
}
