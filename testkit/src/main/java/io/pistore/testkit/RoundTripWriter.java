package io.pistore.testkit;

import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockRequest;
import io.pistore.spi.Completion;
import io.pistore.spi.HostConnection;
import io.pistore.spi.HostQueue;
import io.pistore.spi.Protection;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Load that checks itself, over any transport: one thread per queue of a host connection writes a
 * random block (the host inserts PI, the target strips it) and reads it back, again and again until
 * closed, and keeps every failure: a request that did not succeed, a read that returned other data,
 * an exception. Queue {@code q} uses blocks {@code q * span} to {@code q * span + span - 1}, so the
 * queues never write the same block.
 */
public final class RoundTripWriter implements AutoCloseable {
    /** How long one request may take before the writer calls it lost: a hang guard. */
    private static final long REQUEST_PATIENCE_SECONDS = 30;

    private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    private final AtomicBoolean stop = new AtomicBoolean();
    private final List<Thread> threads = new ArrayList<>();
    private final AtomicLong done = new AtomicLong();

    /** Starts writing blocks of {@code blockSize} bytes of {@code volume}, {@code span} blocks a queue. */
    public RoundTripWriter(HostConnection c, String volume, int blockSize, int span) {
        for (int q = 0; q < c.queueCount(); q++) {
            int queue = q;
            Thread t = new Thread(() -> run(c.queue(queue), volume, blockSize, queue * (long) span, span), "writer-" + q);
            threads.add(t);
            t.start();
        }
    }

    private void run(HostQueue q, String volume, int blockSize, long first, int span) {
        Random rnd = new Random(first);
        byte[] data = new byte[blockSize];
        byte[] back = new byte[blockSize];
        try {
            while (!stop.get()) {
                long lba = first + rnd.nextInt(span);
                rnd.nextBytes(data);
                Completion w = write(q, volume, lba, data);
                if (!w.isSuccess()) {
                    failures.add("write lba " + lba + ": " + w);
                    continue;
                }
                Completion r = read(q, volume, lba, back);
                if (!r.isSuccess()) {
                    failures.add("read lba " + lba + ": " + r);
                } else if (!Arrays.equals(data, back)) {
                    failures.add("read lba " + lba + " returned other data");
                }
                done.incrementAndGet();
            }
        } catch (Exception e) {
            failures.add(e.toString());
        }
    }

    /** Writes {@code data} (one block, copied) at {@code lba}; the host inserts PI with {@code lba} as the reference tag. */
    public static Completion write(HostQueue q, String volume, long lba, byte[] data) throws Exception {
        return q.submit(BlockRequest.write(volume, lba, 1, ScatterList.wrap(data.clone()), null,
                Protection.insertStrip(lba), false)).get(REQUEST_PATIENCE_SECONDS, TimeUnit.SECONDS);
    }

    /** Reads the block at {@code lba} into {@code into}, copied there once the read completed. */
    public static Completion read(HostQueue q, String volume, long lba, byte[] into) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(into.length);
        Completion r = q.submit(BlockRequest.read(volume, lba, 1, ScatterList.of(b), null,
                Protection.insertStrip(lba))).get(REQUEST_PATIENCE_SECONDS, TimeUnit.SECONDS);
        b.get(0, into);
        return r;
    }

    /** Waits until {@code n} more writes were read back. */
    public void roundTrips(int n) {
        long from = done.get();
        Eventually.await(n + " more round trips (failures " + failures + ")", () -> done.get() >= from + n);
    }

    /** Every failure so far. */
    public List<String> failures() {
        synchronized (failures) {
            return List.copyOf(failures);
        }
    }

    /** Stops the threads and waits for them. */
    @Override
    public void close() throws InterruptedException {
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
    }
}
