package io.pistore.it.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.pistore.engine.BlockDevice;
import io.pistore.engine.Transports;
import io.pistore.app.cli.Main;
import io.pistore.integrity.ScatterList;
import io.pistore.spi.BlockTransport;
import io.pistore.spi.Completion;
import io.pistore.spi.ConnectOptions;
import io.pistore.spi.HostConnection;
import io.pistore.spi.Status;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crash: {@code pistore serve} (tcp, a file volume) runs in its own process under a write load from
 * this JVM — writer threads on their own LBA ranges (1 to 4 blocks per write, some write-zeroes) and
 * a flusher — that records which writes were acknowledged and which flushes completed. At a random
 * moment the server is killed with SIGKILL ({@code Process.destroyForcibly}), restarted on the same
 * directory, and every block is read back:
 * <ul>
 *   <li>a block whose last write was acknowledged before the start of the last completed flush, and
 *       not written since, must read back exactly that write, with valid PI;
 *   <li>a block written after that may hold the durable content or any later write, or fail with a PI
 *       error (a write cut between its metadata and its data) — never a mix that passes its checks;
 *   <li>nothing older than the durable content may come back.
 * </ul>
 * The volume carries over from one kill point to the next (what was read back is the next baseline).
 * {@code -Dpistore.crash.points=N} for more kill points (CI: 6).
 */
class CrashRecoveryTest {
    static final int BLOCKS = 1024;
    static final int BS = 4096;
    static final int WRITERS = 6;

    @TempDir
    Path dir;

    /** What a block holds: a version (0 = zeros), written by writers as (lba, version, pseudo-random fill). */
    static byte[] content(long lba, long version) {
        byte[] b = new byte[BS];
        if (version == 0) {
            return b;
        }
        new SplittableRandom(lba * 0x9E3779B97F4A7C15L ^ version).nextBytes(b);
        ByteBuffer.wrap(b).putLong(0, lba).putLong(8, version);
        return b;
    }

    /** The version a block's content is, or -1 if it is no version of this LBA (a mix). */
    static long versionOf(long lba, byte[] b) {
        ByteBuffer w = ByteBuffer.wrap(b);
        long v = w.getLong(8);
        if (w.getLong(0) == 0 && v == 0) {
            return Arrays.equals(b, content(lba, 0)) ? 0 : -1;
        }
        if (w.getLong(0) != lba || v <= 0) {
            return -1;
        }
        return Arrays.equals(b, content(lba, v)) ? v : -1;
    }

    /** One write to one block, as the host saw it. */
    static final class Event {
        final long version;
        volatile long ackedAt = Long.MAX_VALUE; // clock value at acknowledgement

        Event(long version) {
            this.version = version;
        }
    }

    @Test
    void acknowledgedFlushedWritesSurviveKillNine() throws Exception {
        StringWriter o = new StringWriter();
        assertEquals(0, Main.run(new PrintWriter(o), new PrintWriter(o), "volume", "create", "--data", dir.toString(), "v",
                "--size", (BLOCKS * BS) + "", "--format", "4096+8"), o.toString());
        int points = Figures.intFlag("pistore.crash.points", 6);
        Random rnd = new Random(0xC4A5);
        long[] baseline = new long[BLOCKS]; // version known on disk, -2 = a PI error seen
        AtomicLong versions = new AtomicLong();
        long acked = 0;
        long durableChecked = 0;
        long lost = 0;
        long silent = 0;
        long piErrors = 0;
        long inFlux = 0;
        PistoreProcess server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "tcp",
                "--listen", "127.0.0.1:0");
        try {
            String address = server.awaitListening();
            for (int point = 0; point < points; point++) {
                List<List<Event>> history = new ArrayList<>();
                for (int i = 0; i < BLOCKS; i++) {
                    history.add(new ArrayList<>());
                }
                AtomicLong clock = new AtomicLong();
                AtomicLong lastFlushStart = new AtomicLong(-1);
                AtomicBoolean stop = new AtomicBoolean();
                try (BlockTransport t = Transports.find("tcp").create();
                     HostConnection c = t.connect(address, new ConnectOptions(2, 16))) {
                    BlockDevice dev = BlockDevice.open(c, "v");
                    List<Thread> threads = new ArrayList<>();
                    for (int w = 0; w < WRITERS; w++) {
                        int lo = w * (BLOCKS / WRITERS);
                        int hi = w == WRITERS - 1 ? BLOCKS : lo + BLOCKS / WRITERS;
                        long seed = rnd.nextLong();
                        threads.add(new Thread(() -> writer(dev, lo, hi, seed, history, versions, clock, stop)));
                    }
                    threads.add(new Thread(() -> flusher(dev, clock, lastFlushStart, stop)));
                    threads.forEach(Thread::start);
                    Thread.sleep(150 + rnd.nextInt(600));
                    server.kill();
                    stop.set(true);
                    for (Thread th : threads) {
                        th.join(30_000);
                    }
                }
                server = PistoreProcess.serve(List.of(), "--data", dir.toString(), "--transport", "tcp",
                        "--listen", "127.0.0.1:0");
                address = server.awaitListening();
                long flushStart = lastFlushStart.get();
                try (BlockTransport t = Transports.find("tcp").create();
                     HostConnection c = t.connect(address, new ConnectOptions(1, 32))) {
                    BlockDevice dev = BlockDevice.open(c, "v");
                    for (int lba = 0; lba < BLOCKS; lba++) {
                        List<Event> h = history.get(lba);
                        acked += h.stream().filter(e -> e.ackedAt != Long.MAX_VALUE).count();
                        int durable = -1;
                        for (int i = 0; i < h.size(); i++) {
                            if (h.get(i).ackedAt < flushStart) {
                                durable = i;
                            }
                        }
                        List<Long> allowed = new ArrayList<>();
                        if (durable >= 0) {
                            allowed.add(h.get(durable).version);
                        } else {
                            allowed.add(baseline[lba]);
                        }
                        for (int i = durable + 1; i < h.size(); i++) {
                            allowed.add(h.get(i).version);
                        }
                        boolean settled = allowed.size() == 1;
                        if (!settled) {
                            inFlux++;
                        }
                        if (durable >= 0 && settled) {
                            durableChecked++;
                        }
                        ByteBuffer d = ByteBuffer.allocate(BS);
                        long at = lba;
                        Completion r = awaitAny(() -> dev.read(at, ScatterList.of(d)));
                        if (r.status().isPiError()) {
                            piErrors++;
                            if (settled && allowed.get(0) != -2) {
                                lost++;
                                System.out.println("lost: lba " + lba + " " + r + " allowed " + allowed);
                            }
                            baseline[lba] = -2;
                            continue;
                        }
                        assertTrue(r.isSuccess(), "lba " + lba + ": " + r);
                        long v = versionOf(lba, d.array());
                        if (v == -1) {
                            silent++;
                            System.out.println("silent mix: lba " + lba + " allowed " + allowed);
                        } else if (!allowed.contains(v)) {
                            lost++;
                            System.out.println("lost or stale: lba " + lba + " read version " + v + " allowed " + allowed);
                        }
                        baseline[lba] = v;
                    }
                    // Blocks that failed their check are rewritten, so the next kill point starts clean.
                    for (int lba = 0; lba < BLOCKS; lba++) {
                        if (baseline[lba] == -2) {
                            long lb = lba;
                            BlockDevice.await(() -> dev.write(lb, ScatterList.wrap(content(lb, 0))));
                            baseline[lba] = 0;
                        }
                    }
                    BlockDevice.await(dev::flush);
                }
            }
        } finally {
            server.close();
        }
        Figures.record("crash", "kill_points=" + points + " acked_writes=" + acked + " durable_blocks_checked="
                + durableChecked + " blocks_in_flux=" + inFlux + " pi_errors_in_flux=" + piErrors
                + " acked_writes_lost=" + lost + " silent_mixes=" + silent);
        assertEquals(0, silent, "silent mixes");
        assertEquals(0, lost, "acknowledged writes lost");
        assertTrue(durableChecked > 0, "the load never got a flush through before the kill");
    }

    /** Waits for a request, resubmitting while the queue is full; returns any other completion. */
    static Completion awaitAny(java.util.function.Supplier<CompletableFuture<Completion>> submit) throws Exception {
        while (true) {
            Completion c = submit.get().get(30, TimeUnit.SECONDS);
            if (c.status() != Status.QUEUE_FULL) {
                return c;
            }
            Thread.sleep(1);
        }
    }

    private static void writer(BlockDevice dev, int lo, int hi, long seed, List<List<Event>> history,
                               AtomicLong versions, AtomicLong clock, AtomicBoolean stop) {
        SplittableRandom r = new SplittableRandom(seed);
        while (!stop.get()) {
            int n = 1 + r.nextInt(4);
            int lba = lo + r.nextInt(hi - lo - n + 1);
            boolean zeroes = r.nextInt(10) == 0;
            Event[] ev = new Event[n];
            ByteBuffer data = ByteBuffer.allocate(n * BS);
            for (int i = 0; i < n; i++) {
                ev[i] = new Event(zeroes ? 0 : versions.incrementAndGet());
                data.put(content(lba + i, ev[i].version));
                synchronized (history.get(lba + i)) {
                    history.get(lba + i).add(ev[i]);
                }
            }
            data.flip();
            CompletableFuture<Completion> f = zeroes ? dev.writeZeroes(lba, n) : dev.write(lba, ScatterList.of(data));
            Completion c;
            try {
                c = f.get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                return;
            }
            if (c.status() == Status.QUEUE_FULL) {
                continue; // never sent; a later write of these blocks supersedes them, and "allowed" keeps them
            }
            if (!c.isSuccess()) {
                return; // the server is gone
            }
            long now = clock.incrementAndGet();
            for (Event e : ev) {
                e.ackedAt = now;
            }
        }
    }

    private static void flusher(BlockDevice dev, AtomicLong clock, AtomicLong lastFlushStart, AtomicBoolean stop) {
        while (!stop.get()) {
            long start = clock.incrementAndGet();
            Completion c;
            try {
                c = dev.flush().get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                return;
            }
            if (c.status() == Status.QUEUE_FULL) {
                continue;
            }
            if (!c.isSuccess()) {
                return;
            }
            lastFlushStart.accumulateAndGet(start, Math::max);
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}
